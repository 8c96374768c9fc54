/**
 * The `datetime` tool.
 *
 * @module
 */

import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { DATETIME_OUTPUT } from "./_outputs.ts";

/** Arguments of `datetime`. */
export interface DatetimeArgs {
  /** IANA time zone such as `Europe/Berlin`; the machine's time zone when absent. */
  time_zone?: string;
}

/** What `datetime` returns. */
export interface DatetimeResult {
  /** Local time in ISO 8601 with its UTC offset, e.g. `2025-03-01T14:05:09.123+01:00`. */
  iso: string;
  /** The IANA time zone of `iso`. */
  time_zone: string;
  /** The same instant in UTC, e.g. `2025-03-01T13:05:09.123Z`. */
  utc: string;
  /** Milliseconds since 1970-01-01 UTC. */
  unix_ms: number;
  /** English weekday of `iso`, e.g. `Saturday`. */
  weekday: string;
}

/**
 * The ISO 8601 form of `date` in `timeZone`, with the zone's offset.
 *
 * @example
 * ```ts
 * import { zonedIso } from "@toolfence/tools";
 * console.log(zonedIso(new Date(0), "Asia/Kolkata")); // 1970-01-01T05:30:00.000+05:30
 * ```
 */
export function zonedIso(date: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZoneName: "longOffset",
  }).formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  // "GMT" alone means an offset of zero.
  const offset = part("timeZoneName").replace("GMT", "") || "+00:00";
  const ms = String(date.getUTCMilliseconds()).padStart(3, "0");
  return `${part("year").padStart(4, "0")}-${part("month")}-${part("day")}T${part("hour")}:${part("minute")}:${
    part("second")
  }.${ms}${offset}`;
}

/**
 * `datetime(time_zone?)`: the current date and time in ISO 8601 with the
 * zone's offset, in the local time zone or the one given.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { datetimeTool } from "@toolfence/tools";
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await new ToolBox().register(datetimeTool).call(session, "datetime", {})).output);
 * await session.close();
 * ```
 */
export const datetimeTool: Tool<DatetimeArgs> = tool({
  name: "datetime",
  description: "Get the current date and time: ISO 8601 with the UTC offset, the time zone, UTC, and the weekday.",
  input: v.object({
    time_zone: v.optional(
      v.pipe(
        v.string(),
        v.description("IANA time zone such as Europe/Berlin or America/New_York. Default: the machine's time zone."),
      ),
    ),
  }),
  output: DATETIME_OUTPUT,
  needs: {},
  run({ time_zone }): DatetimeResult {
    const now = new Date();
    // The zone is kept as the caller wrote it: ICU would rename some (Asia/Kolkata to Asia/Calcutta).
    const zone = time_zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: zone });
    } catch {
      throw new ToolError(`Unknown time zone ${JSON.stringify(time_zone)}`, {
        code: "invalid_time_zone",
        kind: "semantic",
        recoveryHint: "Use an IANA name such as Europe/Berlin, or leave time_zone out.",
      });
    }
    return {
      iso: zonedIso(now, zone),
      time_zone: zone,
      utc: now.toISOString(),
      unix_ms: now.getTime(),
      weekday: new Intl.DateTimeFormat("en-US", { timeZone: zone, weekday: "long" }).format(now),
    };
  },
});
