/**
 * The differential oracle: what `checkCommand` says a command line runs,
 * against what actually started when the command line ran in a sandbox.
 *
 * The property: when the analysis says `allow`, every program that ran was
 * started by the shell as one of the simple commands the analysis found, from a
 * PATH folder, with words the allowlist permits; a program another program
 * started (`find -exec`, `env`, `egrep` running `grep`) must itself be
 * permitted; no builtin that runs code (`eval`, `source`, `exec`, ...) ran;
 * and, since the allowlist holds only commands that read, the workspace is
 * unchanged afterwards. Anything else is a bypass. The oracle keeps its own idea of the allowlist
 * match and of the builtins, so that it shares no logic with the analysis it
 * checks.
 *
 * @module
 */
import path from "node:path";
import { checkCommand, type CommandCheck } from "../../policy/shell/check_command.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../policy/shell/allowlist.ts";
import { type ExecTracer, type ObservedExec, SANDBOX_PATH_DIRS } from "./_exec_trace.ts";

/**
 * The allowlist the oracle judges against: the default one without the test
 * runners, which run the project's code by design (whatever `deno test` starts
 * is the tests' business, so "everything that ran is allowlisted" cannot hold
 * for them).
 */
export const ORACLE_ALLOWLIST: readonly string[] = DEFAULT_COMMAND_ALLOWLIST.filter((entry) =>
  !/^(deno|npm|pytest|python3?|cargo|go)( |$)/.test(entry)
);

/** Builtins that run code given to them, or change what later command names run. */
export const CODE_RUNNING_BUILTINS: ReadonlySet<string> = new Set([
  "eval",
  "source",
  ".",
  "exec",
  "command",
  "builtin",
  "trap",
  "fc",
  "enable",
  "alias",
  "hash",
  "mapfile",
  "readarray",
  "complete",
  "compgen",
  "coproc",
]);

/** One program or builtin that ran although the analysis allowed the command line. */
export interface Bypass {
  command: string;
  /** What ran, e.g. `rm ./a.txt (started by find)`. */
  ran: string;
  /** Why that is a bypass. */
  why: string;
  /** The analysis's simple commands, for the report. */
  found: string[];
}

/** The outcome of one command line. */
export interface CaseOutcome {
  command: string;
  check: CommandCheck;
  /** Programs and code-running builtins compared with the analysis. */
  compared: number;
  bypasses: Bypass[];
  /** Programs the shell started that the analysis did not list (informational when it asked). */
  unlisted: string[];
  timedOut: boolean;
}

/** Running totals over many command lines. */
export interface OracleTotals {
  cases: number;
  allowed: number;
  compared: number;
  unlistedUnderAsk: number;
  timedOut: number;
  bypasses: Bypass[];
}

function permitted(words: readonly string[], allowlist: readonly string[]): boolean {
  return allowlist.some((entry) => {
    const expected = entry.trim().split(/\s+/);
    return expected.every((word, i) => words[i] === word);
  });
}

function describe(exec: ObservedExec): string {
  const by = exec.spawnedBy === "shell" ? "" : ` (started by ${path.basename(exec.spawnedBy.path)})`;
  return `${exec.path} ${JSON.stringify(exec.argv.slice(1))}${by}`;
}

/** Runs one command line through the analysis and the sandbox and compares them. */
export async function judgeCommand(
  tracer: ExecTracer,
  command: string,
  allowlist: readonly string[] = ORACLE_ALLOWLIST,
): Promise<CaseOutcome> {
  const check = await checkCommand(command, { allowlist });
  const observed = await tracer.observe(command);
  const foundNames = new Set(check.commands.map((found) => found.words[0]));
  const found = check.commands.map((found) => found.words.join(" "));
  const bypasses: Bypass[] = [];
  const unlisted: string[] = [];
  const flag = (ran: string, why: string) => bypasses.push({ command, ran, why, found });
  for (const exec of observed.execs) {
    const name = path.basename(exec.path);
    const words = [name, ...exec.argv.slice(1)];
    const fromPath = SANDBOX_PATH_DIRS.includes(path.dirname(exec.path));
    const byShell = exec.spawnedBy === "shell";
    const listed = foundNames.has(name) || foundNames.has(exec.argv[0]);
    if (byShell && !listed) unlisted.push(describe(exec));
    if (check.verdict !== "allow") continue;
    if (!permitted(words, allowlist)) flag(describe(exec), "ran, but the allowlist does not permit it");
    else if (byShell && !fromPath) flag(describe(exec), "ran from outside PATH (a file named like an allowed program)");
    else if (byShell && !listed) flag(describe(exec), "ran, but the analysis did not find it");
  }
  const builtins = observed.traced.filter((traced) => CODE_RUNNING_BUILTINS.has(traced.words[0]));
  if (check.verdict === "allow") {
    for (const traced of builtins) flag(`builtin: ${traced.line}`, "a builtin that runs code ran");
    for (const change of observed.changed ?? []) {
      flag(`workspace ${change}`, "an allowed command line changed the workspace");
    }
  }
  return {
    command,
    check,
    compared: observed.execs.length + builtins.length,
    bypasses,
    unlisted,
    timedOut: observed.timedOut,
  };
}

/** Judges every command line, `concurrency` sandboxes at a time, and totals the outcomes. */
export async function runOracle(
  tracer: ExecTracer,
  commands: readonly string[],
  options: { concurrency?: number; allowlist?: readonly string[]; onCase?: (outcome: CaseOutcome) => void } = {},
): Promise<OracleTotals> {
  const totals: OracleTotals = { cases: 0, allowed: 0, compared: 0, unlistedUnderAsk: 0, timedOut: 0, bypasses: [] };
  let next = 0;
  const worker = async () => {
    while (next < commands.length) {
      const command = commands[next++];
      const outcome = await judgeCommand(tracer, command, options.allowlist);
      totals.cases++;
      if (outcome.check.verdict === "allow") totals.allowed++;
      else totals.unlistedUnderAsk += outcome.unlisted.length;
      totals.compared += outcome.compared;
      if (outcome.timedOut) totals.timedOut++;
      totals.bypasses.push(...outcome.bypasses);
      options.onCase?.(outcome);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  return totals;
}

/** The one-line summary the test run and the long pass print. */
export function summary(totals: OracleTotals): string {
  const bypassing = new Set(totals.bypasses.map((bypass) => bypass.command)).size;
  return `oracle: ${totals.cases} commands (${totals.allowed} allowed), ${totals.compared} programs compared, ` +
    `${bypassing} bypasses (${totals.bypasses.length} findings), ${totals.unlistedUnderAsk} unlisted programs under ask, ` +
    `${totals.timedOut} timeouts`;
}

/** A bypass as the report shows it. */
export function formatBypass(bypass: Bypass): string {
  return `BYPASS ${JSON.stringify(bypass.command)}\n  ran: ${bypass.ran}\n  ${bypass.why}\n  analysis found: ${
    JSON.stringify(bypass.found)
  }`;
}
