/**
 * `toolfence grants`: lists and revokes the grants a fleet's store holds for a
 * tenant (what a person allowed "from now on" on any replica). A revoked
 * grant stops applying on every replica at its sessions' next call.
 *
 * @module
 */
import process from "node:process";
import type { StoredGrant } from "@toolfence/core";
import { CliUsageError, parseCommand } from "./usage.ts";
import { withStore } from "./_store.ts";

/** The help of `toolfence grants`. */
export const GRANTS_HELP = `Usage: toolfence grants --store ADDRESS --tenant NAME [--pretty]
       toolfence grants --store ADDRESS --tenant NAME --revoke SUBJECT [--kind KIND]

Lists the grants that a fleet of serve --http replicas keeps for a tenant in their
shared store (sqlite:PATH or postgres://USER@HOST:PORT/DB), oldest first, one JSON
object a line; or revokes one: every replica stops applying it at its sessions'
next call. Exits 1 when the grant to revoke is not there.

Options:
  --store ADDRESS   the fleet's store
  --tenant NAME     the tenant whose grants these are
  --revoke SUBJECT  remove the grant of this subject (the command line, path or rule text)
  --kind KIND       the kind of the grant to revoke: command (default) | write | rule
  --pretty          one readable line per grant instead of JSON
  -h, --help        show this help`;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  store: { type: "string" },
  tenant: { type: "string" },
  revoke: { type: "string" },
  kind: { type: "string" },
  pretty: { type: "boolean" },
} as const;

const KINDS: readonly StoredGrant["kind"][] = ["command", "write", "rule"];

function pretty(grant: StoredGrant): string {
  return `${new Date(grant.savedAt).toISOString()} ${grant.kind} ${JSON.stringify(grant.subject)}`;
}

/**
 * Runs `toolfence grants` with `args`; returns the exit code (1 when the store
 * cannot be read or the grant to revoke is not there).
 *
 * Requires `--allow-read`, `--allow-write` (a SQLite store) or `--allow-net`
 * (PostgreSQL), and `--allow-env`.
 *
 * @example
 * ```ts
 * import { grantsCommand } from "./grants.ts";
 * await grantsCommand(["--store", "sqlite:/var/lib/toolfence/store.db", "--tenant", "acme", "--revoke", "npm test"]);
 * ```
 */
export async function grantsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand("grants", args, OPTIONS);
  if (values.help) {
    process.stdout.write(`${GRANTS_HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) {
    throw new CliUsageError(`Unexpected argument ${JSON.stringify(positionals[0])}`, "grants");
  }
  if (values.store === undefined) throw new CliUsageError("grants reads a store: give --store ADDRESS", "grants");
  if (values.tenant === undefined) {
    throw new CliUsageError("give the tenant whose grants these are: --tenant NAME", "grants");
  }
  if (values.kind !== undefined && values.revoke === undefined) {
    throw new CliUsageError("--kind says which grant to revoke: give --revoke SUBJECT too", "grants");
  }
  const kind = (values.kind ?? "command") as StoredGrant["kind"];
  if (!KINDS.includes(kind)) {
    throw new CliUsageError(`--kind must be ${KINDS.join(", ")}, not ${JSON.stringify(values.kind)}`, "grants");
  }
  const { tenant, revoke } = values;
  return await withStore(values.store, async (store) => {
    if (revoke !== undefined) {
      if (await store.revokeGrant(tenant, kind, revoke)) {
        process.stdout.write(`revoked the ${kind} grant ${JSON.stringify(revoke)} of ${tenant}\n`);
        return 0;
      }
      process.stderr.write(
        `toolfence: ${tenant} has no ${kind} grant ${JSON.stringify(revoke)}; ` +
          `'toolfence grants --store ... --tenant ${tenant}' lists those there are\n`,
      );
      return 1;
    }
    for (const grant of await store.grants(tenant)) {
      process.stdout.write(`${values.pretty ? pretty(grant) : JSON.stringify(grant)}\n`);
    }
    return 0;
  });
}
