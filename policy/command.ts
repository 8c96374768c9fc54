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
 * asks.
 *
 * @module
 */
import { DEFAULT_COMMAND_ALLOWLIST, matchesAllowlist } from "./allowlist.ts";
import { analyzeBash, type BashSimpleCommand, quoteSource } from "./_bash_tree.ts";
import { COMMAND_RUNNERS, flagProblem } from "./_flag_rules.ts";

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
}

/** Options of {@linkcode checkCommand}. */
export interface CheckCommandOptions {
  /** Allowlist entries; defaults to {@linkcode DEFAULT_COMMAND_ALLOWLIST}. */
  allowlist?: readonly string[];
}

function judge(
  command: BashSimpleCommand,
  allowlist: readonly string[],
): SimpleCommandFinding {
  const words = command.words.map((word) => word.value ?? word.text);
  const finding = (ok: boolean, reason: string, allowedBy?: string) => ({
    text: command.text,
    words,
    ...(allowedBy === undefined ? {} : { allowedBy }),
    reason,
    ok,
  });
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
  const problem = flagProblem(name.value, args);
  if (problem !== undefined) return finding(false, problem, entry);
  return finding(true, `matches the allowlist entry ${quoteSource(entry)}`, entry);
}

/**
 * Parses a command line with tree-sitter-bash and decides whether it may run
 * without asking. The parser loads on first use (about 100 ms) and is reused.
 *
 * Needs no permissions: the parser's WebAssembly is embedded in the module.
 *
 * @param command The command line, as the model wrote it.
 * @param options The allowlist to judge against.
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
  const commands = analysis.commands.map((found) => judge(found, allowlist));
  const reasons = [
    ...commands.filter((found) => !found.ok).map((found) => `${quoteSource(found.text)}: ${found.reason}`),
    ...analysis.problems,
  ];
  if (analysis.empty && analysis.understood) {
    reasons.push("the command line contains no command");
  }
  return {
    command,
    verdict: reasons.length === 0 && analysis.understood ? "allow" : "ask",
    reasons,
    commands,
    parsed: analysis.understood,
  };
}
