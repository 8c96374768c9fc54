// The output schemas of the system tools: exactly what each returns on
// success, checked on the way out and advertised as MCP's outputSchema.

import * as v from "valibot";
import { COUNT, TIMESTAMP } from "../_shared/output_fields.ts";

/** `sleep`: how long it really slept. */
export const SLEEP_OUTPUT = v.strictObject({ slept_ms: COUNT });

/** `datetime`: local ISO 8601 with its offset, the zone, UTC, the epoch milliseconds and the weekday. */
export const DATETIME_OUTPUT = v.strictObject({
  iso: v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/)),
  time_zone: v.string(),
  utc: TIMESTAMP,
  unix_ms: v.pipe(v.number(), v.integer()),
  weekday: v.picklist(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]),
});

/** `system_info`: the release and CPU count only where the runtime grants reading them. */
export const SYSTEM_INFO_OUTPUT = v.strictObject({
  os: v.string(),
  release: v.optional(v.string()),
  arch: v.string(),
  time_zone: v.string(),
  locale: v.string(),
  runtime: v.string(),
  cpus: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});
