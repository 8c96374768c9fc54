/**
 * `toolfence prune`: removes from a fleet's store what is over, so that it
 * does not grow without end: sessions ended (or idle, their replica gone)
 * longer ago than a given age, with their events, calls, questions, late
 * results and artifacts, and replicas long silent. Grants and the audit stay.
 *
 * @module
 */
import process from "node:process";
import { CliUsageError, parseCommand } from "./usage.ts";
import { withStore } from "./_store.ts";

/** The help of `toolfence prune`. */
export const PRUNE_HELP = `Usage: toolfence prune --store ADDRESS --older-than AGE

Removes from the store of a fleet of serve --http replicas (sqlite:PATH or
postgres://USER@HOST:PORT/DB) each session that ended, or was last active,
more than AGE ago and has no call still running, with its stream events, calls
and their answers, questions, late results and artifacts; then the artifact
bytes no artifact names any more, and the replicas silent for longer than AGE.
The grants and the audit are kept. Prints how many of each went, as JSON.

AGE is a number with a unit: m (minutes), h (hours) or d (days), at least 1h,
and longer than the replicas' --idle-minutes (a session idle for less may
still be in use).

Options:
  --store ADDRESS    the fleet's store
  --older-than AGE   e.g. 30d, 12h, 90m
  -h, --help         show this help`;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  store: { type: "string" },
  "older-than": { type: "string" },
} as const;

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** An age such as `30d`, in milliseconds; throws a usage error otherwise. */
export function parseAge(text: string): number {
  const match = /^(\d{1,6})([mhd])$/.exec(text);
  if (!match) {
    throw new CliUsageError(`--older-than takes an age such as 30d, 12h or 90m, not ${JSON.stringify(text)}`, "prune");
  }
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (ms < UNIT_MS.h) {
    throw new CliUsageError(`--older-than ${text} is under an hour: a session idle that long may be in use`, "prune");
  }
  return ms;
}

/**
 * Runs `toolfence prune` with `args`; returns the exit code (1 when the store
 * cannot be opened).
 *
 * Requires `--allow-read`, `--allow-write` (a SQLite store) or `--allow-net`
 * (PostgreSQL), and `--allow-env`.
 *
 * @example
 * ```ts
 * import { pruneCommand } from "./prune.ts";
 * await pruneCommand(["--store", "sqlite:/var/lib/toolfence/store.db", "--older-than", "30d"]);
 * ```
 */
export async function pruneCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand("prune", args, OPTIONS);
  if (values.help) {
    process.stdout.write(`${PRUNE_HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) {
    throw new CliUsageError(`Unexpected argument ${JSON.stringify(positionals[0])}`, "prune");
  }
  if (values.store === undefined) throw new CliUsageError("prune needs the store: give --store ADDRESS", "prune");
  const olderThan = values["older-than"];
  if (olderThan === undefined) throw new CliUsageError("give the age of what to remove: --older-than AGE", "prune");
  const before = Date.now() - parseAge(olderThan);
  return await withStore(values.store, async (store) => {
    process.stdout.write(
      `${JSON.stringify({ before: new Date(before).toISOString(), ...await store.prune(before) })}\n`,
    );
    return 0;
  });
}
