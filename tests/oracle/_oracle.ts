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
 * unchanged afterwards: no process opened a file for writing, created, removed,
 * renamed or linked one, or connected a socket, beyond the few things that are
 * not a change (the null device and the terminal, descriptors by number, a
 * name-service lookup, git refreshing its own index, a scratch file created
 * and removed again in the temporary folder). A test runner runs the
 * project's code by design: what its processes start is theirs, but they too
 * write only inside the workspace and their caches. Anything else is a bypass. The oracle keeps its own idea of the allowlist
 * match and of the builtins, so that it shares no logic with the analysis it
 * checks.
 *
 * @module
 */
import path from "node:path";
import { checkCommand, type CommandCheck } from "../../policy/shell/check_command.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../policy/shell/allowlist.ts";
import {
  type ExecTracer,
  type Observation,
  type ObservedEffect,
  type ObservedExec,
  type ObservedRead,
  OUTSIDE_ROOT,
  SANDBOX_CACHE,
  SANDBOX_PATH_DIRS,
  SANDBOX_WORKDIR,
} from "./_exec_trace.ts";

const TEST_RUNNER = /^(deno|npm|pytest|python3?|cargo|go)( |$)/;

/**
 * The allowlist the oracle judges against: the default one without the test
 * runners, which run the project's code by design (whatever `deno test` starts
 * is the tests' business, so "everything that ran is allowlisted" cannot hold
 * for them).
 */
export const ORACLE_ALLOWLIST: readonly string[] = DEFAULT_COMMAND_ALLOWLIST.filter((entry) =>
  !TEST_RUNNER.test(entry)
);

// Writes that change nothing: devices that discard or are the terminal, descriptors by number.
const NOT_A_FILE = /^\/dev\/(null|zero|full|tty|stdin|stdout|stderr|fd\/\d+|pts\/\d+)$|^\/proc\/(self|\d+)\/fd\/\d+$/;
// A name-service lookup (`ls -l`, `whoami`) asks nscd or systemd over a local socket.
const NAME_SERVICE = /sun_path="\/(var\/)?run\/(nscd\/socket|systemd\/userdb\/[^"]*)"/;

function within(file: string, folder: string): boolean {
  const resolved = path.resolve(SANDBOX_WORKDIR, file);
  return resolved === folder || resolved.startsWith(`${folder}/`);
}

/** Whether an exec, or the exec chain that started it, is a test runner the allowlist permits. */
function underTestRunner(exec: ObservedExec | "shell", allowlist: readonly string[]): boolean {
  for (let at = exec; at !== "shell"; at = at.spawnedBy) {
    const words = [path.basename(at.path), ...at.argv.slice(1)];
    const runsTests = TEST_RUNNER.test(words.join(" ")) ||
      allowlist.some((entry) => entry.trim().startsWith("sandbox:") && permitted(words, [entry]));
    if (runsTests && permitted(words, allowlist)) return true;
  }
  return false;
}

/**
 * Scratch files: created in the temporary folder and removed again during the
 * run (sort's spill files, bash's here-document files), which leave nothing
 * behind.
 */
function scratchFiles(effects: readonly ObservedEffect[]): Set<string> {
  const inTemp = (file: string) =>
    file.startsWith("/tmp/") && !within(file, SANDBOX_WORKDIR) && !within(file, SANDBOX_CACHE);
  const created = new Set<string>();
  const removed = new Set<string>();
  for (const effect of effects) {
    const file = effect.paths[0];
    if (effect.paths.length !== 1 || !inTemp(file)) continue;
    if (/^(open|creat|mkdir)/.test(effect.call) && /O_CREAT|O_TMPFILE|^(creat|mkdir)/.test(effect.line)) {
      created.add(file);
    }
    if (/^(unlink|rmdir)/.test(effect.call)) removed.add(file);
  }
  return new Set([...created].filter((file) => removed.has(file)));
}

/** Why an effect is a change nobody was asked about, or `undefined` when it is none. */
function unaccountedEffect(
  effect: ObservedEffect,
  allowlist: readonly string[],
  scratch: ReadonlySet<string>,
): string | undefined {
  if (effect.call === "connect") {
    if (NAME_SERVICE.test(effect.line)) return undefined;
    // A test runner runs the project's code, network included (the OS sandbox decides that).
    if (underTestRunner(effect.by, allowlist)) return undefined;
    return "connected a socket";
  }
  if (effect.paths.every((file) => NOT_A_FILE.test(file) || scratch.has(file))) return undefined;
  const by = effect.by === "shell" ? undefined : path.basename(effect.by.path);
  // git refreshes its stat cache through index.lock, then renames it over the index.
  if (by === "git" && effect.paths.every((file) => /(^|\/)\.git\/index(\.lock)?$/.test(file))) return undefined;
  if (
    underTestRunner(effect.by, allowlist) &&
    effect.paths.every((file) => within(file, SANDBOX_WORKDIR) || within(file, SANDBOX_CACHE))
  ) return undefined;
  return effect.call.startsWith("open") ? "opened a file for writing" : `changed the file system (${effect.call})`;
}

/**
 * What a program reads for itself, whichever line runs it: the dynamic
 * loader and libraries, locales, character sets and terminfo (`/usr`, `/lib`,
 * `/lib64`, `/etc/ld.so.*`, `/etc/locale.alias`), its own process's files
 * (`/proc/self`, `/proc/<pid>`, counted as the process's own), the kernel's
 * facts (`/sys`; `/proc/filesystems`, which libselinux reads in ls, find,
 * sed and stat; `/proc/meminfo`, `/proc/cpuinfo`, `/proc/stat`,
 * `/proc/sys/`), the root folder itself (bash opens `/` resolving paths; its
 * listing names no secret), name-service
 * files a user lookup reads (`ls -l`, `whoami`, git: `/etc/nsswitch.conf`,
 * `/etc/passwd`, `/etc/group`), the time zone (`/etc/localtime`), git's
 * system configuration (`/etc/gitconfig`, absent here), OpenSSL's
 * configuration (`/etc/ssl/openssl.cnf`, which node reads at start), file's magic
 * database (`/etc/magic`), and the devices (`/dev`). None of these is a file
 * a line named; a read anywhere else outside the workspace and the temporary
 * folder (which the file tools allow) is one nobody was asked about.
 */
const SYSTEM_READS = new RegExp(
  [
    "^/$",
    "^/(usr|lib|lib64|sys|dev)(/|$)",
    "^/proc/(self|thread-self|\\d+|sys)(/|$)",
    "^/proc/(filesystems|meminfo|cpuinfo|stat)$",
    "^/etc/(ld\\.so\\.(cache|preload)|locale\\.alias|nsswitch\\.conf|passwd|group|localtime|gitconfig|magic|ssl/openssl\\.cnf)$",
  ].join("|"),
);

/**
 * Why a read is one nobody was asked about, or `undefined` when it is inside
 * the workspace, temp or the system's, or a test runner's (which runs the
 * project's code by design: the OS sandbox's read view decides what it sees).
 */
function unaccountedRead(read: ObservedRead, allowlist: readonly string[]): string | undefined {
  if (underTestRunner(read.by, allowlist)) return undefined;
  // A name relative to a folder descriptor (find's and git's walks) is inside a folder already opened and judged.
  if (read.relativeToDescriptor && !read.path.startsWith("/")) return undefined;
  const file = path.resolve(SANDBOX_WORKDIR, read.path);
  if (within(file, SANDBOX_WORKDIR) || within(file, "/tmp") || SYSTEM_READS.test(file)) return undefined;
  if (within(file, OUTSIDE_ROOT)) return "read the secret planted outside the workspace";
  return "read a file outside the workspace";
}

function describeEffect(effect: ObservedEffect): string {
  const by = effect.by === "shell" ? "the shell" : path.basename(effect.by.path);
  return `${effect.call} ${effect.paths.map((file) => JSON.stringify(file)).join(" ")} (by ${by})`;
}

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
  /** Whether the line ran in the sandbox at all: only an allowed line does (see judgeCommand). */
  ran: boolean;
  timedOut: boolean;
}

/** Running totals over many command lines. */
export interface OracleTotals {
  cases: number;
  allowed: number;
  compared: number;
  timedOut: number;
  bypasses: Bypass[];
}

// An entry is words matched as a prefix; `=` before them means exactly these
// words, `sandbox:` marks one that runs project code (the oracle reads both itself).
function permitted(words: readonly string[], allowlist: readonly string[]): boolean {
  return allowlist.some((entry) => {
    let text = entry.trim();
    if (text.startsWith("sandbox:")) text = text.slice("sandbox:".length).trim();
    const exact = text.startsWith("=");
    const expected = (exact ? text.slice(1) : text).trim().split(/\s+/);
    return (!exact || expected.length === words.length) && expected.every((word, i) => words[i] === word);
  });
}

function describe(exec: ObservedExec): string {
  const by = exec.spawnedBy === "shell" ? "" : ` (started by ${path.basename(exec.spawnedBy.path)})`;
  return `${exec.path} ${JSON.stringify(exec.argv.slice(1))}${by}`;
}

/**
 * Runs one command line through the analysis and, when the analysis allows it, through the sandbox, and compares
 * them. A line the analysis asks about or denies is not run: it reaches no process without a person's yes (or not at
 * all), so what it would do cannot be a bypass, and running it would only cost the time of the allowed lines.
 */
export async function judgeCommand(
  tracer: ExecTracer,
  command: string,
  allowlist: readonly string[] = ORACLE_ALLOWLIST,
  timeoutMs?: number,
): Promise<CaseOutcome> {
  const check = await checkCommand(command, { allowlist });
  if (check.verdict !== "allow") return { command, check, compared: 0, bypasses: [], ran: false, timedOut: false };
  return compareRun(check, await tracer.observe(command, timeoutMs), allowlist);
}

/**
 * Compares what a command line did in the sandbox with what the analysis
 * said about it: the heart of {@linkcode judgeCommand}, separate so that the
 * comparison itself can be tested against a checker that misreads a line.
 */
export function compareRun(check: CommandCheck, observed: Observation, allowlist: readonly string[]): CaseOutcome {
  const command = check.command;
  const foundNames = new Set(check.commands.map((found) => found.words[0]));
  const found = check.commands.map((found) => found.words.join(" "));
  const bypasses: Bypass[] = [];
  const flag = (ran: string, why: string) => bypasses.push({ command, ran, why, found });
  for (const exec of observed.execs) {
    const name = path.basename(exec.path);
    const words = [name, ...exec.argv.slice(1)];
    const fromPath = SANDBOX_PATH_DIRS.includes(path.dirname(exec.path));
    const byShell = exec.spawnedBy === "shell";
    const listed = foundNames.has(name) || foundNames.has(exec.argv[0]);
    if (check.verdict !== "allow") continue;
    if (!byShell && underTestRunner(exec.spawnedBy, allowlist)) continue;
    if (!permitted(words, allowlist)) flag(describe(exec), "ran, but the allowlist does not permit it");
    else if (byShell && !fromPath) flag(describe(exec), "ran from outside PATH (a file named like an allowed program)");
    else if (byShell && !listed) flag(describe(exec), "ran, but the analysis did not find it");
  }
  const builtins = observed.traced.filter((traced) => CODE_RUNNING_BUILTINS.has(traced.words[0]));
  if (check.verdict === "allow") {
    for (const traced of builtins) flag(`builtin: ${traced.line}`, "a builtin that runs code ran");
    // Tests write where they like inside the workspace; the traced effects below judge each write by who made it.
    const ranTests = observed.execs.some((exec) => underTestRunner(exec, allowlist));
    for (const change of ranTests ? [] : observed.changed ?? []) {
      flag(`workspace ${change}`, "an allowed command line changed the workspace");
    }
    const scratch = scratchFiles(observed.effects);
    for (const effect of observed.effects) {
      const why = unaccountedEffect(effect, allowlist, scratch);
      if (why !== undefined) flag(describeEffect(effect), `${why}, which the analysis did not account for`);
    }
    for (const read of observed.reads) {
      const why = unaccountedRead(read, allowlist);
      const by = read.by === "shell" ? "the shell" : path.basename(read.by.path);
      if (why !== undefined) flag(`read ${JSON.stringify(read.path)} (by ${by})`, `${why}, which the analysis allowed`);
    }
  }
  return {
    command,
    check,
    compared: observed.execs.length + builtins.length,
    bypasses,
    ran: true,
    timedOut: observed.timedOut,
  };
}

/** Judges every command line, `concurrency` sandboxes at a time, and totals the outcomes. */
export async function runOracle(
  tracer: ExecTracer,
  commands: readonly string[],
  options: { concurrency?: number; allowlist?: readonly string[]; onCase?: (outcome: CaseOutcome) => void } = {},
): Promise<OracleTotals> {
  const totals: OracleTotals = { cases: 0, allowed: 0, compared: 0, timedOut: 0, bypasses: [] };
  let next = 0;
  const worker = async () => {
    while (next < commands.length) {
      const command = commands[next++];
      const outcome = await judgeCommand(tracer, command, options.allowlist);
      totals.cases++;
      if (outcome.check.verdict === "allow") totals.allowed++;
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
  return `oracle: ${totals.cases} commands (${totals.allowed} allowed and run), ${totals.compared} programs compared, ` +
    `${bypassing} bypasses (${totals.bypasses.length} findings), ${totals.timedOut} timeouts`;
}

/** A bypass as the report shows it. */
export function formatBypass(bypass: Bypass): string {
  return `BYPASS ${JSON.stringify(bypass.command)}\n  ran: ${bypass.ran}\n  ${bypass.why}\n  analysis found: ${
    JSON.stringify(bypass.found)
  }`;
}
