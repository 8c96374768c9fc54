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
 * asks. `cd DIR` counts as allowed when DIR stays inside the workspace. A
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
import { analyzeBash, type BashSimpleCommand, type BashWord, quoteSource } from "./_tree.ts";
import { COMMAND_RUNNERS, type FlagContext, flagProblem } from "./_flag_rules.ts";
import { outsidePathProblem } from "./_options.ts";
import { type SandboxMode, sandboxState } from "../sandbox.ts";

/**
 * The outcome of judging a command. `refuse` is what a caller makes of `ask`
 * when no person can be asked; {@linkcode checkCommand} itself only answers
 * `allow` or `ask`.
 */
export type CommandVerdict = "allow" | "ask" | "refuse";

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
  /** `allow`: runs without asking; `ask`: a person (or the risk assessor) decides. */
  verdict: "allow" | "ask";
  /** Why it must ask, each naming the offending part; empty when allowed. */
  reasons: string[];
  /** Every simple command found, outer before inner. */
  commands: SimpleCommandFinding[];
  /** False when the parser did not fully understand the command (which then asks). */
  parsed: boolean;
  /**
   * Whether some command in it runs code the project controls, and, when one
   * does, the sandbox it would run in.
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
  /** The workspace root (absolute): absolute paths inside it count as inside. */
  workspaceRoot?: string;
  /** Commands that run project code; defaults to {@linkcode PROJECT_CODE_COMMANDS}. */
  projectCode?: readonly string[];
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
  const problem = outsidePathProblem(dir.value, context);
  return problem === undefined ? undefined : `the folder ${shownWord(dir)} of \`cd\` ${problem}`;
}

function judge(
  command: BashSimpleCommand,
  allowlist: readonly string[],
  projectCodeList: readonly string[],
  context: FlagContext,
): SimpleCommandFinding {
  const words = command.words.map((word) => word.value ?? word.text);
  const finding = (ok: boolean, reason: string, allowedBy?: string): SimpleCommandFinding => {
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
  if (command.problems.length > 0) return finding(false, command.problems.join("; "));
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
  const runner = COMMAND_RUNNERS.get(name.value);
  if (runner !== undefined) {
    return finding(
      false,
      `${quoteSource(name.value)} ${runner}, so it always asks, even when allowlisted`,
    );
  }
  const staticWords: string[] = [];
  for (const word of command.words) {
    if (word.value === undefined) break;
    staticWords.push(word.value);
  }
  const entry = matchesAllowlist(staticWords, allowlist);
  if (entry === undefined) {
    // Name the subcommand too when entries distinguish subcommands (`git diff`).
    const hasSubcommands = allowlist.some((line) => line.trim().startsWith(`${name.value} `));
    const shown = staticWords.slice(0, hasSubcommands ? 2 : 1).join(" ");
    return finding(false, `${quoteSource(shown)} is not on the allowlist`);
  }
  const exact = parseAllowlistEntry(entry).exact;
  if (exact && staticWords.length !== command.words.length) {
    // An exact entry allows those words and no more; a word known only at run
    // time (a glob, an expansion) may become any number of words, options too.
    const dynamic = command.words[staticWords.length];
    return finding(
      false,
      `${quoteSource(entry)} allows exactly those words, and ${
        quoteSource(dynamic.text)
      } is only known when the command runs`,
      entry,
    );
  }
  const problem = exact ? undefined : flagProblem(name.value, args, context);
  if (problem !== undefined) return finding(false, problem, entry);
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
  const allowlist = options.allowlist ?? DEFAULT_COMMAND_ALLOWLIST;
  const analysis = await analyzeBash(command);
  const context: FlagContext = options.workspaceRoot === undefined ? {} : { workspaceRoot: options.workspaceRoot };
  const projectCodeList = options.projectCode ?? PROJECT_CODE_COMMANDS;
  const commands = analysis.commands.map((found) => judge(found, allowlist, projectCodeList, context));
  const reasons = [
    ...commands.filter((found) => !found.ok).map((found) => `${quoteSource(found.text)}: ${found.reason}`),
    ...analysis.problems,
  ];
  const projectCode = commands.filter((found) => found.projectCode);
  let sandbox: CommandCheck["sandbox"] = { needed: false };
  if (projectCode.length > 0) {
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
    }
  }
  if (analysis.empty && analysis.understood) {
    reasons.push("the command line contains no command");
  }
  return {
    command,
    verdict: reasons.length === 0 && analysis.understood ? "allow" : "ask",
    reasons,
    commands,
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
