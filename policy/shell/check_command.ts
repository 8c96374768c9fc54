/**
 * Decides whether a shell command may run without asking anyone, and explains
 * the decision: every simple command found, wherever it sits, with its reason.
 *
 * A command runs without asking only when every simple command in it is on the
 * allowlist (token-prefix match) with harmless arguments, only `;` `&&` `||`
 * `|` `(` `)` join them, redirections go to /dev/null or copy descriptors
 * (`2>&1`), no executable is named by path, there is no backquote, no
 * assignment, no newline or `&` between commands, and every `$(...)` would
 * itself run without asking. Whatever the parser does not fully account for
 * asks. `cd DIR` counts as allowed when DIR stays inside the workspace. Every path the line may read, write or run (operands, option values,
 * redirections, the files its argument readers see) is judged by the file
 * tools' rules (`_command_paths.ts`): outside the workspace or known only at
 * run time asks, denied by a policy file denies. A
 * command that runs code the project controls (tests, scripts, git with its
 * configured programs) runs without asking only when the OS sandbox works.
 *
 * @module
 */
import {
  DEFAULT_COMMAND_ALLOWLIST,
  matchesAllowlist,
  parseAllowlistEntry,
  PROJECT_CODE_COMMANDS,
  runsProjectCode,
} from "./allowlist.ts";
import { analyzeBash, type BashAnalysis, type BashSimpleCommand, type BashWord, quoteSource } from "./_tree.ts";
import { COMMAND_RUNNERS, type FlagContext, flagProblem, UNSEEN_COMMANDS } from "./_flag_rules.ts";
import { runnerVariables, runsElsewhere, startsShell, unknownProgram } from "./_unknown_program.ts";
import type { PathOperand } from "./_path_operands.ts";
import {
  type CommandPath,
  type Folders,
  judgeCommandPaths,
  judgeLinePaths,
  lineFolders,
  type PathJudge,
  pathReason,
  scopeJudge,
} from "./_command_paths.ts";
import process from "node:process";
import { NETWORK_READERS } from "./_flag_rules_net.ts";
import { reachesHost } from "./risk.ts";
import { listedName } from "./_program_family.ts";
import { type SandboxMode, sandboxState } from "../sandbox.ts";
import type { PolicyRules } from "../config/rules.ts";
import { DEFAULT_PROTECTED_PATHS } from "../protected_paths.ts";

export type { CommandPath } from "./_command_paths.ts";
export type { PathAccess } from "./_path_operands.ts";

/**
 * The outcome of judging a command. `refuse` is what a caller makes of `ask`
 * when no person can be asked; {@linkcode checkCommand} itself only answers
 * `allow` or `ask`.
 */
export type CommandVerdict = "allow" | "ask" | "refuse";

/** The ordered verdicts of a line: deny before ask before allow. */
const VERDICT_WEIGHT = { allow: 0, ask: 1, deny: 2 } as const;

/** One simple command found in a command line, and how it was judged. */
export interface SimpleCommandFinding {
  /** The simple command as written, with its redirections. */
  text: string;
  /** Its words after quote removal; words only known at run time as written. */
  words: string[];
  /** The allowlist entry that matched, if any. */
  allowedBy?: string;
  /** Why it may or may not run without asking. */
  reason: string;
  /** Whether this simple command on its own may run without asking. */
  ok: boolean;
  /** Whether it runs code the project controls, which needs the OS sandbox. */
  projectCode: boolean;
  /** The paths it may read, write or run, each judged by the file tools' rules. */
  paths: CommandPath[];
}

/** Whether the OS sandbox works for the commands being judged, and why not. */
export interface CommandSandbox {
  /** True when commands will run inside a working sandbox. */
  available: boolean;
  /** Why the sandbox is unavailable (the probe's own error, or the session's mode). */
  reason?: string;
}

/** The judgement of a whole command line; plain data, safe to serialise as JSON. */
export interface CommandCheck {
  /** The command line that was judged. */
  command: string;
  /**
   * `allow`: runs without asking; `ask`: a person (or the risk assessor)
   * decides; `deny`: it names a path a policy file denies (or makes read-only
   * and writes it), so it never runs.
   */
  verdict: "allow" | "ask" | "deny";
  /** Why it must ask, each naming the offending part; empty when allowed. */
  reasons: string[];
  /** Every simple command found, outer before inner. */
  commands: SimpleCommandFinding[];
  /**
   * Every path the line was judged to touch (read, written or run), from its
   * commands and its redirections: what the sandbox is later given.
   */
  paths: CommandPath[];
  /** False when the parser did not fully understand the command (which then asks). */
  parsed: boolean;
  /**
   * Whether some command in it runs code the project controls or reaches a
   * path that asks (outside the workspace, or only known when it runs), and,
   * when one does, the sandbox it would run in: without one, a person must say
   * yes, as nothing else keeps the rest of the host out of its sight.
   */
  sandbox: { needed: boolean } & Partial<CommandSandbox>;
}

/** Options of {@linkcode checkCommand}. */
export interface CheckCommandOptions {
  /** Allowlist entries; defaults to {@linkcode DEFAULT_COMMAND_ALLOWLIST}. */
  allowlist?: readonly string[];
  /**
   * Whether commands will run in a working OS sandbox. Default: the machine's
   * real state, from {@linkcode commandSandbox} (probed once, cached), asked
   * only when a command runs project code.
   */
  sandbox?: CommandSandbox;
  /**
   * The workspace root (absolute), where the commands run: paths inside it
   * (or in `tempDir`) count as inside. Default: the process's current folder.
   */
  workspaceRoot?: string;
  /**
   * The folder (absolute) the line starts in, when it is not the workspace
   * root (the `cwd` of the `bash` tool): relative paths, globs and the links a
   * program walks are found from it, as the shell finds them. Default: the
   * workspace root.
   */
  cwd?: string;
  /** The session's temp dir (absolute), which commands may reach like the workspace. */
  tempDir?: string;
  /** The policy files' rules: a path they deny denies the line, a read-only one denies writes. */
  rules?: PolicyRules;
  /**
   * The protected-path globs; default {@linkcode DEFAULT_PROTECTED_PATHS}. A path the line writes that is one is
   * marked (`CommandPath.protected`): without the sandbox that keeps them read-only, a person decides.
   */
  protectedPaths?: readonly string[];
  /** Commands that run project code; defaults to {@linkcode PROJECT_CODE_COMMANDS}. */
  projectCode?: readonly string[];
  /**
   * The policy's network lists where commands reach the network through the
   * egress proxy: with a working sandbox, `curl` and `wget` join the allowlist,
   * judged by `_flag_rules_net.ts`.
   */
  network?: { allow: readonly string[]; deny: readonly string[] };
}

function shownWord(word: BashWord): string {
  return quoteSource(word.text);
}

/**
 * `cd DIR` stays inside the workspace when DIR is a relative path without
 * `..` (CDPATH is scrubbed from the environment), or an absolute path inside
 * the workspace root when it is known.
 */
function cdProblem(args: readonly BashWord[], context: FlagContext): string | undefined {
  const [dir, ...extra] = args;
  if (dir === undefined) return "`cd` alone goes to the home folder, outside the workspace";
  if (dir.value === "-") return "`cd -` goes back to the previous folder, which may lie outside the workspace";
  if (dir.value?.startsWith("-")) {
    return `${shownWord(dir)} is an option of \`cd\`; only \`cd DIR\` runs without asking`;
  }
  if (extra.length > 0) return `\`cd\` with more than one argument (${shownWord(extra[0])}) is not understood`;
  if (dir.value === undefined) return `the folder ${shownWord(dir)} is only known when the command runs`;
  if (dir.value === "") return "`cd ''` names no folder";
  // Where the folder leads is judged with every other path of the line.
  return context.workspaceRoot === undefined && dir.value.startsWith("/")
    ? `the folder ${shownWord(dir)} of \`cd\` is absolute, and the workspace is not known`
    : undefined;
}

/**
 * Whether a builtin runs or loads a file its words name, found from the folder the line runs in even without a `/`:
 * `hash -p FILE NAME` makes NAME run FILE (`hash -p x.sh cat; cat a.txt` ran the workspace's x.sh), and
 * `enable -f FILE NAME` loads FILE into the shell (`enable -f evil.so evil` ran its constructor), with the sandbox
 * off and an automatic answer. An option only known when the line runs may be either.
 */
function loadsFile(runner: string, args: readonly BashWord[]): boolean {
  const letter = runner === "hash" ? "p" : runner === "enable" ? "f" : undefined;
  if (letter === undefined) return false;
  for (const word of args) {
    if (word.value === undefined) return true;
    if (word.value === "--" || !word.value.startsWith("-")) return false;
    if (word.value.slice(1).includes(letter)) return true;
  }
  return false;
}

/** What judging one simple command needs besides the command. */
interface Judging {
  allowlist: readonly string[];
  projectCode: readonly string[];
  workspaceRoot?: string;
  network?: { allow: readonly string[]; deny: readonly string[] };
  folders: Folders;
  judgePath: PathJudge;
}

/** One simple command: the allowlist and flag rules, then every path it names. */
function judge(command: BashSimpleCommand, judging: Judging): SimpleCommandFinding {
  const recorded: PathOperand[] = [];
  const context: FlagContext = {
    ...(judging.workspaceRoot === undefined ? {} : { workspaceRoot: judging.workspaceRoot }),
    ...(judging.network ? { network: judging.network } : {}),
    pathOperands: recorded,
  };
  const { unread, ...found } = judgeWords(command, judging.allowlist, judging.projectCode, context);
  const environment = environmentChanged(command);
  if (environment !== undefined) recorded.push({ value: undefined, access: "write", origin: environment });
  const paths = judgeCommandPaths(command, recorded, judging.folders, judging.judgePath, unread);
  const worst = paths.reduce<CommandPath | undefined>(
    (a, b) => VERDICT_WEIGHT[b.decision] > VERDICT_WEIGHT[a?.decision ?? "allow"] ? b : a,
    undefined,
  );
  if (found.ok && worst !== undefined) return { ...found, ok: false, reason: pathReason(worst), paths };
  return { ...found, paths };
}

/** Variables that change only how programs print: the language, the time zone, colours, the terminal's size. */
const PRINTING_VARIABLES = /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|FORCE_COLOR|CLICOLOR|CLICOLOR_FORCE|COLUMNS|LINES)$/;
/** The names of variables the environment may hold: upper case by custom, and the lower-case proxy ones. */
const ENVIRONMENT_NAME = /^([A-Z_][A-Z0-9_]*|http_proxy|https_proxy|ftp_proxy|all_proxy|no_proxy)$/;

/**
 * Why what the programs write may change with the variables a command sets, if it may: a variable in a program's
 * environment moves its files (`GIT_CONFIG_GLOBAL=.npmrc git config --global a.b c` writes .npmrc; `HOME`,
 * `TMPDIR`, `GIT_DIR`, `HISTFILE`, `PATH` likewise), and an assignment to one the environment holds, a declaration
 * (`export`, `declare -x`) or `set -a` change it for the commands after. Where they write is only known when they run.
 */
function environmentChanged(command: BashSimpleCommand): string | undefined {
  const name = command.words[0]?.value;
  if (
    name === "set" &&
    command.words.slice(1).some((word) => word.value === undefined || /^[-+][^-]*a|allexport/.test(word.value))
  ) {
    return "what runs after `set -a` exports";
  }
  const sets = (command.sets ?? []).filter((variable) => !PRINTING_VARIABLES.test(variable));
  const assigned = readIntoNames(command.words).filter((variable) =>
    variable === "?" || ENVIRONMENT_NAME.test(variable)
  );
  const moved = command.kind === "command"
    ? [...sets, ...assigned]
    : command.kind === "declaration"
    ? sets.length > 0 ? sets : ["?"]
    : sets.filter((variable) => ENVIRONMENT_NAME.test(variable));
  return moved.length === 0 ? undefined : `what runs with ${moved.join(", ")} set`;
}

/** The options of the builtins that read into variables that take the next word as their value. */
const READ_INTO: Readonly<Record<string, { values: string; names: "operands" | "second" }>> = {
  read: { values: "adinNptu", names: "operands" },
  mapfile: { values: "dnOsuCc", names: "operands" },
  readarray: { values: "dnOsuCc", names: "operands" },
  getopts: { values: "", names: "second" },
};

/**
 * The variables a builtin reads a value into, by name (`?` for a name only the run knows): `read PATH < f`,
 * `read -a NAME`, `mapfile NAME`, `getopts OPTS NAME`. Before, they were no assignment to the analysis: with the
 * sandbox off and an automatic answer, `read PATH < p.txt; ls` ran an `ls` the workspace held, and
 * `read CDPATH < p.txt; cd etc` left the workspace.
 */
function readIntoNames(words: readonly BashWord[]): string[] {
  const grammar = words[0]?.value === undefined ? undefined : READ_INTO[words[0].value];
  if (grammar === undefined) return [];
  const names: string[] = [];
  const operands: BashWord[] = [];
  for (let index = 1; index < words.length; index++) {
    const value = words[index].value;
    if (value === undefined) {
      names.push("?");
      continue;
    }
    if (value === "--") {
      operands.push(...words.slice(index + 1));
      break;
    }
    if (!value.startsWith("-") || value === "-") {
      operands.push(words[index]);
      continue;
    }
    // A cluster's letter that takes a value takes the rest of the word, or the next one: `-a NAME` reads into NAME.
    for (let at = 1; at < value.length; at++) {
      if (!grammar.values.includes(value[at])) continue;
      const taken = at + 1 < value.length ? value.slice(at + 1) : words[++index]?.value ?? "?";
      if (value[at] === "a") names.push(taken);
      break;
    }
  }
  const named = grammar.names === "second" ? operands.slice(1, 2) : operands;
  return [...names, ...named.map((word) => word.value ?? "?")];
}

/**
 * A simple command's words judged, and whether its program's flag rule left them unread: a rule that finds a
 * problem stops there (xxd's `-r`, curl without the egress proxy), so the files its options and operands name are
 * not all recorded, and the path judgement takes them as a program's it does not know (each may be written).
 */
type WordsFinding = Omit<SimpleCommandFinding, "paths"> & { unread?: boolean };

function judgeWords(
  command: BashSimpleCommand,
  allowlist: readonly string[],
  projectCodeList: readonly string[],
  context: FlagContext,
): WordsFinding {
  const found = judgeProgram(command, allowlist, projectCodeList, context);
  // What the shell does around the program (a redirection to a file, an assignment) asks first, and the program is
  // judged all the same: the files its script or options write, read or run are judged with the line's paths.
  // Before, a redirection hid them: with the sandbox off and an automatic answer, `sed 's/a/b/w /outside/f' a >
  // out` wrote the file outside, and `find . -exec CMD \; > out` ran CMD.
  return command.problems.length === 0 ? found : { ...found, ok: false, reason: command.problems.join("; ") };
}

/** The program of a simple command and its words, judged by the allowlist and the program's flag rule. */
function judgeProgram(
  command: BashSimpleCommand,
  allowlist: readonly string[],
  projectCodeList: readonly string[],
  context: FlagContext,
): WordsFinding {
  const words = command.words.map((word) => word.value ?? word.text);
  const finding = (ok: boolean, reason: string, allowedBy?: string): Omit<SimpleCommandFinding, "paths"> => {
    const entry = allowedBy === undefined ? undefined : parseAllowlistEntry(allowedBy);
    const projectCode = entry?.sandbox === true ||
      (entry?.exact !== true && words[0] !== undefined && runsProjectCode(words, projectCodeList));
    return {
      text: command.text,
      words,
      ...(allowedBy === undefined ? {} : { allowedBy }),
      reason,
      ok,
      projectCode,
    };
  };
  const [name, ...args] = command.words;
  if (name === undefined) {
    return finding(false, `${quoteSource(command.text)} runs no command`);
  }
  if (name.value === undefined) {
    return finding(
      false,
      `the command name ${quoteSource(name.text)} is only known when the command runs (${name.dynamic})`,
    );
  }
  if (name.value.includes("/")) {
    return finding(
      false,
      `${quoteSource(name.text)} names an executable by path; only commands found on PATH can be allowlisted`,
    );
  }
  if (name.value === "") {
    return finding(false, `${quoteSource(name.text)} is an empty command name`);
  }
  if (name.value === "cd") {
    const problem = cdProblem(args, context);
    return problem === undefined ? finding(true, "`cd` into a folder inside the workspace") : finding(false, problem);
  }
  // A runner under another of its names (`vim.basic`, `editor`, `nodejs`) is that runner.
  const runnerName = listedName(name.value, (listed) => COMMAND_RUNNERS.has(listed));
  const runner = runnerName === undefined ? undefined : COMMAND_RUNNERS.get(runnerName);
  if (runner !== undefined) {
    // What a command it runs unseen writes is only known when it runs.
    // `trap '' TERM` ignores a signal, `trap - TERM` resets it, `trap -p` and `trap -l` list: no handler runs.
    const noHandler = name.value === "trap" &&
      (args[0] === undefined || ["", "-", "-p", "-l"].includes(args[0].value ?? "?"));
    // So does a command line it is given as one word, which the shell reads again (`eval 'cp a .npmrc'`,
    // `env -S '...'`, `sg g -c '...'`, `nohup sh -c '...'`), and a script it runs (`. s.sh`): their paths are not
    // among the line's words.
    const commandLine = args.some((word) => word.value === undefined || /[\s;&|()`$<>'"\\]/.test(word.value));
    // `command . s.sh`, `builtin source s.sh`: the shell's runners run the builtin after their options.
    const ran = ["command", "builtin", "exec", "time", "eval"].includes(runnerName!)
      ? args.find((word) => !word.value?.startsWith("-"))?.value
      : undefined;
    const script = [runnerName, ran].some((program) => program === "source" || program === ".") ||
      loadsFile(runnerName!, args) ||
      (ran !== undefined && loadsFile(ran, args.slice(args.findIndex((word) => word.value === ran) + 1)));
    if ((UNSEEN_COMMANDS.has(runnerName!) && !noHandler) || commandLine || script) {
      context.pathOperands?.push({ value: undefined, access: "write", origin: `what ${name.value} runs` });
    }
    // The variables a runner sets for its command move what the command writes and which program or library it
    // loads, as a prefix assignment does (`environmentChanged`): with the sandbox off an automatic answer let
    // `env PATH=. cat f` run the workspace's `./cat`.
    const variables = runnerVariables(words).filter((variable) => !PRINTING_VARIABLES.test(variable));
    if (variables.length > 0) {
      context.pathOperands?.push({
        value: undefined,
        access: "write",
        origin: `what ${name.value} runs with ${variables.join(", ")} changed`,
      });
    }
    // The relative paths of a command run in another folder (`env -C DIR`) lead from there: only the run knows where.
    if (runsElsewhere(words)) {
      context.pathOperands?.push({ value: undefined, access: "read", origin: `the paths of what ${name.value} runs` });
    }
    const found = finding(false, `${quoteSource(name.value)} ${runner}, so it always asks, even when allowlisted`);
    // What it runs may be code the project controls (`nice make`, `timeout 5 python3 t.py`, `setsid sh -c ...`).
    const rest = words.slice(1);
    const runsCode = rest.some((_, index) => runsProjectCode(rest.slice(index), projectCodeList));
    // So is a shell it starts when given no command, which runs what it reads (`unshare <<< 'cat /outside/f'`).
    return runsCode || commandLine || script || startsShell(words) ? { ...found, projectCode: true } : found;
  }
  const staticWords: string[] = [];
  for (const word of command.words) {
    if (word.value === undefined) break;
    staticWords.push(word.value);
  }
  const entry = matchesAllowlist(staticWords, allowlist);
  // The flag rule reads the words whether or not an entry lets the program run: the files it records (`gawk`'s
  // program redirecting into `.npmrc`, `curl -o`) are judged with the rest of the line.
  const problem = flagProblem(name.value, args, context);
  const unread = problem !== undefined;
  if (entry === undefined) {
    // Name the subcommand too when entries distinguish subcommands (`git diff`).
    const hasSubcommands = allowlist.some((line) => line.trim().startsWith(`${name.value} `));
    const shown = staticWords.slice(0, hasSubcommands ? 2 : 1).join(" ");
    return { ...finding(false, `${quoteSource(shown)} is not on the allowlist`), unread };
  }
  const exact = parseAllowlistEntry(entry).exact;
  if (exact && staticWords.length !== command.words.length) {
    // An exact entry allows those words and no more; a word known only at run
    // time (a glob, an expansion) may become any number of words, options too.
    const dynamic = command.words[staticWords.length];
    return {
      ...finding(
        false,
        `${quoteSource(entry)} allows exactly those words, and ${
          quoteSource(dynamic.text)
        } is only known when the command runs`,
        entry,
      ),
      unread,
    };
  }
  // Exact entries are judged too: their words are fixed, but not always by whoever wrote the allowlist (an allow
  // rule's glob adds the commands it matched as exact entries, `find *` a `= find . -delete`).
  if (problem !== undefined) return { ...finding(false, problem, entry), unread };
  return finding(true, `matches the allowlist entry ${quoteSource(entry)}`, entry);
}

/**
 * Parses a command line with tree-sitter-bash and decides whether it may run
 * without asking. The parser loads on first use (about 100 ms) and is reused.
 *
 * Needs no permissions: the parser's WebAssembly is embedded in the module.
 *
 * Requires `--allow-run=bwrap` to probe the sandbox when `options.sandbox`
 * is not given and a command runs project code (without it the sandbox counts
 * as unavailable, and those commands ask).
 *
 * @param command The command line, as the model wrote it.
 * @param options The allowlist, the sandbox state and the workspace root.
 * @returns The verdict, the reasons for asking, and every simple command found.
 *
 * @example
 * ```ts
 * import { checkCommand } from "@toolfence/policy";
 * const check = await checkCommand("git status && rm x", {
 *   allowlist: ["git status"],
 * });
 * console.log(check.verdict); // "ask"
 * console.log(check.reasons); // ["`rm x`: `rm` is not on the allowlist"]
 * ```
 */
export async function checkCommand(
  command: string,
  options: CheckCommandOptions = {},
): Promise<CommandCheck> {
  return await checkAnalysis(command, await analyzeBash(command), options);
}

/** The process's current folder, where commands run when no workspace is given; undefined when it cannot be read. */
function currentFolder(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}

/**
 * {@linkcode checkCommand} of a line already analysed, so that the command
 * rules, the allowlist, the path rules and the risk assessor judge one
 * reading of it.
 */
export async function checkAnalysis(
  command: string,
  analysis: BashAnalysis,
  options: CheckCommandOptions = {},
): Promise<CommandCheck> {
  const network = options.network && options.sandbox?.available ? options.network : undefined;
  const allowlist = [...options.allowlist ?? DEFAULT_COMMAND_ALLOWLIST, ...(network ? NETWORK_READERS : [])];
  const workspaceRoot = options.workspaceRoot ?? currentFolder();
  // Relative paths lead from where the line starts: judged from the root, `o/key` of a line run in `sub`
  // would be the missing `<root>/o/key`, while the shell opens `<root>/sub/o/key` (through a link, anywhere).
  const folders = lineFolders(analysis, options.cwd ?? workspaceRoot);
  const judging: Judging = {
    allowlist,
    projectCode: options.projectCode ?? PROJECT_CODE_COMMANDS,
    ...(workspaceRoot === undefined ? {} : { workspaceRoot }),
    ...(network ? { network } : {}),
    folders,
    judgePath: scopeJudge({
      ...(workspaceRoot === undefined ? {} : { workspaceRoot }),
      ...(options.tempDir === undefined ? {} : { tempDir: options.tempDir }),
      ...(options.rules === undefined ? {} : { rules: options.rules }),
      protectedPaths: options.protectedPaths ?? DEFAULT_PROTECTED_PATHS,
    }),
  };
  const commands = analysis.commands.map((found) => judge(found, judging));
  const linePaths = judgeLinePaths(analysis, folders, judging.judgePath);
  const paths = [...commands.flatMap((found) => found.paths), ...linePaths];
  const reasons = [
    ...commands.filter((found) => !found.ok).map((found) => `${quoteSource(found.text)}: ${found.reason}`),
    // Paths that ask beside another reason of their command, and those of redirections of no command.
    ...commands.flatMap((found) =>
      found.paths.filter((p) => p.decision !== "allow" && pathReason(p) !== found.reason).map((p) =>
        `${quoteSource(found.text)}: ${pathReason(p)}`
      )
    ),
    ...linePaths.filter((p) => p.decision !== "allow").map((p) => pathReason(p)),
    ...analysis.problems,
  ];
  const projectCode = commands.filter((found) => found.projectCode);
  // A path that asks lies outside the workspace and the temp dir, or is only known when the line runs: a yes lets the
  // program reach it, and only the sandbox's read view keeps the rest of the host (the home folder, /proc of the
  // server with its keys, /etc/shadow) out of sight then. Without one it reaches whatever the server may: before,
  // with the sandbox off and an automatic answer, `cat /proc/$PPID/environ` printed the server's OPENAI_API_KEY.
  const reaching = paths.filter((p) => p.decision === "ask");
  // Likewise a program whose purpose is a connection: the sandbox's namespace has no network but the egress proxy's
  // judged one; without it, before, `curl -s http://127.0.0.1:PORT/` read a service of the host on an automatic yes.
  // And a program that reads the host's other processes, logs, databases, sockets or credentials by itself
  // (HOST_READERS): inside, /proc shows only the sandbox's own processes, and the view holds none of the rest.
  const connecting = commands.flatMap((found) => {
    const reach = reachesHost(found.words);
    return reach === undefined ? [] : [{ found, reach }];
  });
  // And a program whose effects the analysis does not know at all, by itself or behind a runner: it may write outside
  // the workspace, read the host or run what it is given, all of which the sandbox contains. Before, with the sandbox
  // off and an automatic answer, `capsh -- x.sh`, `memusage bash x.sh` and `gmake` ran the workspace's code,
  // `GET http://127.0.0.1:PORT/` read a service of the host.
  // A program an allowlist entry or a policy file's rule lets run is known to whoever wrote it.
  const unknown = analysis.commands.flatMap((found, index) => {
    if (found.kind !== "command" || commands[index].ok) return [];
    const program = unknownProgram(commands[index].words);
    return program === undefined ? [] : [{ found: commands[index], program }];
  });
  let sandbox: CommandCheck["sandbox"] = { needed: false };
  if (projectCode.length > 0 || reaching.length > 0 || connecting.length > 0 || unknown.length > 0) {
    const state = options.sandbox ?? await commandSandbox();
    sandbox = { needed: true, ...state };
    if (!state.available) {
      for (const found of projectCode) {
        reasons.push(
          `${quoteSource(found.text)}: runs code the project controls, and the OS sandbox is unavailable: ${
            state.reason ?? "no reason given"
          }`,
        );
      }
      for (const { found, reach } of connecting) {
        reasons.push(
          reach === "network"
            ? `${quoteSource(found.text)}: connects to whatever this host reaches, and the OS sandbox that keeps ` +
              `its connections to the egress proxy is unavailable: ${state.reason ?? "no reason given"}`
            : `${quoteSource(found.text)}: reads the host's other processes, logs, system databases, sockets or ` +
              `credentials by itself, and the OS sandbox that hides them is unavailable: ${
                state.reason ?? "no reason given"
              }`,
        );
      }
      for (const { found, program } of unknown) {
        reasons.push(
          `${quoteSource(found.text)}: runs ${
            quoteSource(program)
          }, a program whose effects the checker does not know (it may write outside the workspace, read the ` +
            `host or run other programs), and the OS sandbox that contains it is unavailable: ${
              state.reason ?? "no reason given"
            }`,
        );
      }
      for (const found of reaching) {
        reasons.push(
          `${quoteSource(found.command)}: \`${found.written}\` may lead outside the workspace, and the OS sandbox ` +
            `that would hide the rest of the host is unavailable: ${state.reason ?? "no reason given"}`,
        );
      }
    }
  }
  if (analysis.empty && analysis.understood) {
    reasons.push("the command line contains no command");
  }
  const denied = paths.some((p) => p.decision === "deny");
  return {
    command,
    verdict: denied ? "deny" : reasons.length === 0 && analysis.understood ? "allow" : "ask",
    reasons,
    commands,
    paths,
    parsed: analysis.understood,
    sandbox,
  };
}

/**
 * The sandbox the commands of a session in `mode` will run in, for
 * {@linkcode checkCommand}: the session's {@linkcode sandboxState} (bubblewrap
 * probed once per process and cached; mode `off` never sandboxes), with the
 * reason when there is none.
 *
 * Requires `--allow-run=bwrap` for `auto` and `required` (without it the
 * sandbox counts as unavailable, and the reason says so).
 *
 * @example
 * ```ts
 * import { commandSandbox } from "@toolfence/policy";
 * const state = await commandSandbox("auto");
 * console.log(state.available ? "sandboxed" : `no sandbox: ${state.reason}`);
 * ```
 */
export async function commandSandbox(mode: SandboxMode = "auto"): Promise<CommandSandbox> {
  const state = await sandboxState(mode);
  return state.working ? { available: true } : { available: false, reason: state.reason ?? state.summary };
}
