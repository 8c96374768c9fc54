/**
 * The decision whether a shell command may start: the allowlist check, then
 * the risk assessor, then (where the assessment says so) a person. Shell tools
 * call it before they start anything.
 *
 * @module
 */
import { textPrefix, ToolError } from "@toolfence/core";
import { globMayMatchWithin } from "@toolfence/internal";
import type { ChoiceSource } from "@toolfence/core";
import { checkAnalysis, type CommandCheck, type CommandPath, commandSandbox } from "./check_command.ts";
import { ANY_PATH } from "./_command_paths.ts";
import { analyzeBash } from "./_tree.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "./allowlist.ts";
import type { SandboxMode } from "../sandbox.ts";
import type { PolicyAsker } from "../policy.ts";
import {
  type CommandPrompt,
  promptForAssessment,
  type RiskAssessment,
  type RiskAssessor,
  rulesRiskAssessor,
} from "./risk.ts";
import type { PolicyState } from "../state.ts";
import { type CommandRulesVerdict, judgeAnalyzedCommandRules } from "./command_rules.ts";
import { type CommandRule, describeRule, PolicyRules } from "../config/rules.ts";
import { visibleText } from "../_visible_text.ts";

/** Options of {@linkcode authorizeCommand}. */
export interface AuthorizeCommandOptions {
  /** The session's policy state; its command allowlist is used. */
  state: PolicyState;
  /** Who is asked when the assessment calls for confirmation. */
  asker: PolicyAsker;
  /** Judges commands the allowlist does not allow; default {@linkcode rulesRiskAssessor}. */
  assessor?: RiskAssessor;
  /**
   * Whether anybody can be asked in this session (default true). When false, a
   * command that would need confirmation is refused without asking.
   */
  sessionCanAsk?: boolean;
  /** The policy's network lists where commands have the egress proxy (see `CheckCommandOptions.network`). */
  network?: { allow: readonly string[]; deny: readonly string[] };
  /**
   * The session's sandbox mode (default `auto`): `off` counts as no sandbox,
   * so commands that run project code ask; `auto` and `required` use the
   * probe (a runner refuses `required` without a sandbox before asking).
   */
  sandbox?: SandboxMode;
  /** The workspace root, for `cd` and paths in flags (absolute). */
  workspaceRoot?: string;
  /** The folder (absolute) the command runs in, when not the workspace root (see `CheckCommandOptions.cwd`). */
  cwd?: string;
  /** The session's temp dir (absolute), which commands may reach like the workspace. */
  tempDir?: string;
  /** The protected-path globs (see `CheckCommandOptions.protectedPaths`). */
  protectedPaths?: readonly string[];
  /** The policy files' command rules; default none. */
  rules?: PolicyRules;
  /**
   * Saves a person's "allow from now on" of a command as an allow rule (in
   * the project or user file, as the policy's `answers.save` says). When
   * given, a command that asks and is one simple command of known words is
   * asked with three answers (allow and save, allow once, deny); only a
   * person's answer saves. A save that throws refuses the command
   * (`permission_denied`, its message in the reason).
   */
  saveRule?: { where: string; save(pattern: string): Promise<void> | void };
}

/** Why a command may run. */
export interface CommandAuthorization {
  /** The command line. */
  command: string;
  /**
   * `allowlist`: every part is allowed; `rule`: allowed with the help of an allow rule of a policy file;
   * `assessor`: the risk assessor allowed it; `confirmed`: someone said yes.
   */
  via: "allowlist" | "rule" | "assessor" | "confirmed";
  /** Who confirmed it, when someone did (`auto` with autoConfirm). */
  source?: ChoiceSource;
  /** The allowlist check. */
  check: CommandCheck;
  /** The risk assessment, when the allowlist did not settle it. */
  assessment?: RiskAssessment;
  /** The policy rule in force for the line, when one matched. */
  rule?: CommandRule;
  /** What a shadow-mode rule would have decided instead (not applied). */
  shadow?: CommandRule;
  /** What the line was judged to touch: the absolute paths it reads, writes and runs, for the sandbox. */
  touches: CommandTouches;
}

/** The absolute paths a command line was judged to read, write and run (known before it runs). */
export interface CommandTouches {
  /** Paths it reads. */
  read: string[];
  /** Paths it writes. */
  write: string[];
  /** Paths it runs. */
  run: string[];
}

function touchesOf(paths: readonly CommandPath[]): CommandTouches {
  const touches: CommandTouches = { read: [], write: [], run: [] };
  for (const found of paths) {
    const where = found.real ?? found.path;
    if (where !== undefined && !touches[found.access].includes(where)) touches[found.access].push(where);
  }
  return touches;
}

/** What the policy decides for a command line before anyone is asked, and why. */
export interface CommandDecision {
  /** The command line. */
  command: string;
  /** `allow`: runs without asking; `ask`: someone must say yes ({@linkcode prompt}); `deny`: never runs. */
  decision: "allow" | "ask" | "deny";
  /** What settled it. */
  decidedBy: "rule" | "allowlist" | "assessor" | "analysis";
  /** One sentence: why. */
  reason: string;
  /** The policy rules' verdict (matches, shadow decisions, uncertainty). */
  rules: CommandRulesVerdict;
  /** The allowlist check (absent when a deny rule settled it first). */
  check?: CommandCheck;
  /** The risk assessment, when the allowlist did not settle it. */
  assessment?: RiskAssessment;
  /** The question asked when the decision is `ask`. */
  prompt?: CommandPrompt;
}

/** Options of {@linkcode decideCommand}. */
export interface DecideCommandOptions {
  /** Allowlist entries; default {@linkcode DEFAULT_COMMAND_ALLOWLIST}. */
  allowlist?: readonly string[];
  /** The policy files' rules; default none. */
  rules?: PolicyRules;
  /** The sandbox mode (default `auto`). */
  sandbox?: SandboxMode;
  /** The workspace root (absolute). */
  workspaceRoot?: string;
  /** The folder (absolute) the line starts in, when not the workspace root (see `CheckCommandOptions.cwd`). */
  cwd?: string;
  /** The session's temp dir (absolute). */
  tempDir?: string;
  /** The protected-path globs (see `CheckCommandOptions.protectedPaths`). */
  protectedPaths?: readonly string[];
  /** Judges commands the allowlist does not allow; default {@linkcode rulesRiskAssessor}. */
  assessor?: RiskAssessor;
  /** The policy's network lists where commands have the egress proxy (see `CheckCommandOptions.network`). */
  network?: { allow: readonly string[]; deny: readonly string[] };
}

/**
 * Decides a command line without asking anyone, from one analysis of it:
 * deny before ask before allow. A deny rule, or a path of the line that the
 * policy denies (or makes read-only and the line writes), refuses; an ask
 * rule and a command that could hide a denied one ask a person; then the
 * allowlist check (with the allow rules' entries added, every path of the
 * line judged by the file tools' rules), then the risk assessor.
 *
 * Requires `--allow-run=bwrap` to probe the sandbox for commands that run project code.
 *
 * @example
 * ```ts
 * import { decideCommand, PolicyRules } from "@toolfence/policy";
 * const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { deny: ["git push"] } } }], "/w");
 * const decision = await decideCommand("sudo git push", { rules });
 * console.log(decision.decision, decision.reason);
 * ```
 */
export async function decideCommand(
  command: string,
  options: DecideCommandOptions = {},
  signal?: AbortSignal,
): Promise<CommandDecision> {
  const analysis = await analyzeBash(command);
  const policyRules = options.rules ?? PolicyRules.empty(options.workspaceRoot ?? "/");
  const rules = await judgeAnalyzedCommandRules(policyRules, analysis);
  const rule = rules.rule;
  const check = await checkAnalysis(command, analysis, {
    allowlist: [...(options.allowlist ?? DEFAULT_COMMAND_ALLOWLIST), ...rules.allowEntries],
    sandbox: await commandSandbox(options.sandbox),
    rules: policyRules,
    ...(options.workspaceRoot !== undefined
      ? { workspaceRoot: options.workspaceRoot }
      : options.rules !== undefined
      ? { workspaceRoot: policyRules.root }
      : {}),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.tempDir === undefined ? {} : { tempDir: options.tempDir }),
    ...(options.protectedPaths === undefined ? {} : { protectedPaths: options.protectedPaths }),
    ...(options.network ? { network: options.network } : {}),
  });
  const deniedPath = check.paths.find((found) => found.decision === "deny" && found.rule !== undefined);
  if (deniedPath !== undefined && rule?.decision !== "deny") {
    rules.deniedPath = { word: deniedPath.written, rule: deniedPath.rule! };
    return {
      command,
      decision: "deny",
      decidedBy: "rule",
      reason: `${JSON.stringify(deniedPath.written)} names a path ${
        /^(?:.*, which )?is read-only by/.test(deniedPath.reason ?? "") ? "the line writes, read-only" : "denied"
      } by the ${describeRule(deniedPath.rule!)}`,
      rules,
      check,
    };
  }
  if (rule?.decision === "deny") {
    const match = rules.matches.find((m) => m.rule === rule);
    return {
      command,
      decision: "deny",
      decidedBy: "rule",
      reason: `${match ? `${JSON.stringify(match.words.join(" "))} is` : "it is"} denied by the ${describeRule(rule)}${
        rule.reason ? `: ${rule.reason}` : ""
      }`,
      rules,
      check,
    };
  }
  // Denied paths are hidden from commands by the OS sandbox; without one, a person decides. A glob whose matches
  // all lie outside the workspace (a server's token file) needs no sandbox here: without one, the analysis asks
  // for every path outside the workspace.
  const root = options.rules?.root ?? "/";
  const hidden = (options.rules?.hiddenGlobs() ?? []).filter((glob) => globMayMatchWithin(glob, root));
  const unsandboxed = hidden.length > 0 ? await commandSandbox(options.sandbox) : undefined;
  if (unsandboxed?.available === false) {
    rules.uncertain.push(
      `the policy hides paths (${hidden.slice(0, 3).join(", ")}) and the OS sandbox that hides them from ` +
        `commands is unavailable (${unsandboxed.reason ?? "no reason given"})`,
    );
  }
  // The sandbox hides a hidden file from commands, not the repository's objects, where git keeps each version of
  // it that was ever staged or committed: `git show HEAD:.env`, `git log -p`, `git diff --cached` print them. While
  // the policy hides paths, a git command is a person's to allow.
  const git = hidden.length > 0
    ? check.commands.find((found) => found.words[0]?.split("/").pop() === "git")
    : undefined;
  if (git !== undefined) {
    rules.uncertain.push(
      `the policy hides paths (${hidden.slice(0, 3).join(", ")}) and git prints what the repository keeps, which ` +
        `holds every staged or committed version of a hidden file (the sandbox hides the file, not its history)`,
    );
  }
  // Protected paths are read-only in the sandbox (and new ones moved out after the command); without one, a person
  // decides, as for the file tools.
  const written = check.paths.find((found) => found.protected !== undefined);
  const keeper = written === undefined ? undefined : unsandboxed ?? await commandSandbox(options.sandbox);
  if (written !== undefined && keeper?.available === false) {
    const what = written.protected === ANY_PATH
      ? `a path only known when it runs (${JSON.stringify(written.written)}), which may be a protected one,`
      : `the protected path ${written.protected} (${JSON.stringify(written.written)})`;
    rules.uncertain.push(
      `the line writes ${what} and the OS sandbox that keeps protected paths read-only is unavailable (${
        keeper.reason ?? "no reason given"
      })`,
    );
  }
  if (rule?.decision === "ask" || rules.uncertain.length > 0) {
    const reason = rule?.decision === "ask"
      ? `it matches the ${describeRule(rule)}${rule.reason ? `: ${rule.reason}` : ""}`
      : rules.uncertain[0];
    return {
      command,
      decision: "ask",
      decidedBy: "rule",
      reason,
      rules,
      check,
      prompt: {
        title: "Command Confirmation (policy rule)",
        message: `The agent wants to run:\n\n  ${
          visibleText(command)
        }\n\nThe policy asks a person because ${reason}. Run it?`,
        defaultChoice: false,
        requirePerson: true,
      },
    };
  }
  if (check.verdict === "allow") {
    const byRule = check.commands.some((found) =>
      found.allowedBy !== undefined && rules.allowEntries.includes(found.allowedBy) &&
      !(options.allowlist ?? DEFAULT_COMMAND_ALLOWLIST).includes(found.allowedBy)
    );
    return {
      command,
      decision: "allow",
      decidedBy: byRule ? "rule" : "allowlist",
      reason: byRule && rule ? `it is allowed by the ${describeRule(rule)}` : "every command in it is on the allowlist",
      rules,
      check,
    };
  }
  const assessor = options.assessor ?? rulesRiskAssessor;
  const assessment = await assessor.assess(command, check, signal);
  let prompt = promptForAssessment(command, assessment);
  // Project code without the sandbox needs a person's yes, whatever the assessor said.
  if (check.sandbox.needed && check.sandbox.available === false) {
    const reason = check.reasons.find((text) => text.includes("the OS sandbox is unavailable")) ??
      "it runs code the project controls without the OS sandbox";
    prompt = {
      ...(prompt ?? promptForAssessment(command, { decision: "unsure", kind: "project_code_unsandboxed", reason })!),
      requirePerson: true,
    };
  }
  if (prompt === undefined) {
    return { command, decision: "allow", decidedBy: "assessor", reason: assessment.reason, rules, check, assessment };
  }
  return {
    command,
    decision: "ask",
    decidedBy: "analysis",
    reason: check.reasons[0] ?? assessment.reason,
    rules,
    check,
    assessment,
    prompt,
  };
}

const MAX_REASONS_SHOWN = 3;

function denied(
  command: string,
  why: string,
  check: CommandCheck,
  assessment: RiskAssessment,
  extra: Record<string, unknown> = {},
): ToolError {
  const shown = command.length > 200 ? `${textPrefix(command, 200)}...` : command;
  // The assessment may quote a reason of the check ("could not be fully parsed: ..."): said once.
  const reasons = [...new Set([assessment.reason, ...check.reasons.filter((r) => !assessment.reason.includes(r))])];
  const more = reasons.length - MAX_REASONS_SHOWN;
  return new ToolError(
    `The command was not run: ${why}. It needs confirmation because ` +
      reasons.slice(0, MAX_REASONS_SHOWN).join("; ") + (more > 0 ? `; and ${more} more` : "") +
      `. Command: ${shown}`,
    {
      code: "permission_denied",
      kind: "policy",
      status: "skipped",
      recoverable: false,
      recoveryHint: "Do not retry it as is; use allowlisted commands (or other tools), or ask the user to run it.",
      details: {
        command,
        why,
        reasons: check.reasons,
        assessment,
        commands: check.commands,
        parsed: check.parsed,
        ...extra,
      },
    },
  );
}

/**
 * Decides whether `command` may start, asking a person where the policy says
 * so. Returns how it was allowed; throws `permission_denied` (kind `policy`,
 * status `skipped`) with the reasons in the message and in `details` when it
 * may not.
 *
 * 1. {@linkcode checkCommand} with the state's allowlist and the session's
 *    sandbox: `allow` runs. Without a working sandbox, commands that run
 *    project code ask, and only a person may answer.
 * 2. Otherwise the risk assessor answers; {@linkcode promptForAssessment} maps
 *    its answer to a confirmation: none (runs), unsure (asks, default yes),
 *    reject ("Dangerous Command Confirmation", default no); the always-ask
 *    kinds require a person, so `autoConfirm` cannot answer them.
 * 3. No; a host that cannot ask; or `sessionCanAsk: false`: refused.
 *
 * Requires no permissions (the parser is embedded); the asker may need some.
 *
 * @example
 * ```ts
 * import { authorizeCommand } from "@toolfence/policy";
 * import { autoHost } from "@toolfence/policy";
 * import { PolicyState } from "@toolfence/policy";
 * const options = { state: new PolicyState(), asker: autoHost() };
 * console.log((await authorizeCommand(options, "git status")).via); // "allowlist"
 * try {
 *   await authorizeCommand(options, "rm -rf build");
 * } catch (error) {
 *   console.log((error as Error).message); // The command was not run: ...
 * }
 * ```
 */
export async function authorizeCommand(
  options: AuthorizeCommandOptions,
  command: string,
  signal?: AbortSignal,
): Promise<CommandAuthorization> {
  signal?.throwIfAborted();
  const decided = await decideCommand(command, {
    allowlist: options.state.commandAllowlist(),
    sandbox: options.sandbox,
    assessor: options.assessor,
    rules: options.rules,
    ...(options.workspaceRoot === undefined ? {} : { workspaceRoot: options.workspaceRoot }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.tempDir === undefined ? {} : { tempDir: options.tempDir }),
    ...(options.protectedPaths === undefined ? {} : { protectedPaths: options.protectedPaths }),
    ...(options.network ? { network: options.network } : {}),
  }, signal);
  signal?.throwIfAborted();
  const ruleFields = {
    ...(decided.rules.rule ? { rule: decided.rules.rule } : {}),
    ...(decided.rules.shadow ? { shadow: decided.rules.shadow } : {}),
  };
  if (decided.decision === "deny") throw ruleDenied(command, decided);
  const check = decided.check!;
  const touches = touchesOf(check.paths);
  const assessment = decided.assessment ??
    { decision: "unsure" as const, kind: "policy_rule", reason: decided.reason };
  if (decided.decision === "allow") {
    const via = decided.decidedBy === "assessor" ? "assessor" : decided.decidedBy === "rule" ? "rule" : "allowlist";
    return { command, via, check, touches, ...(decided.assessment ? { assessment } : {}), ...ruleFields };
  }
  const prompt = decided.prompt!;
  if (options.sessionCanAsk === false) {
    throw denied(command, "it needs confirmation and nobody can be asked in this session", check, assessment);
  }
  const savable = options.saveRule && !prompt.requirePerson ? savablePattern(check) : undefined;
  // What a console shows beside the question: policy explain's rule and reasons.
  const asking = decided.rules.rule;
  const about = {
    command,
    ...(asking ? { rule: describeRule(asking) } : {}),
    reasons: [decided.reason, ...check.reasons.filter((reason) => reason !== decided.reason)],
  };
  let answer;
  // Why the rule a person chose to save was not saved: the command, allowed with it, does not run.
  let unsaved: unknown;
  try {
    if (savable !== undefined) {
      const chosen = await options.asker.choose<"save" | "once" | "deny">({
        title: prompt.title,
        message: prompt.message,
        options: [
          { value: "save", label: `Allow, and allow "${savable}" from now on (saved to ${options.saveRule!.where})` },
          { value: "once", label: "Allow this time only" },
          { value: "deny", label: "Deny" },
        ],
        defaultChoice: prompt.defaultChoice ? "once" : "deny",
        about,
      }, signal);
      if (chosen.choice === "save" && chosen.source === "user") {
        try {
          await options.saveRule!.save(savable);
          options.state.addCommand(savable);
        } catch (error) {
          unsaved = error;
        }
      }
      answer = { choice: chosen.choice !== "deny", source: chosen.source };
    } else {
      answer = await options.asker.confirm({ ...prompt, about }, signal);
    }
  } catch (error) {
    // A host that refuses the question (nobody to ask, or no usable answer: dismissed, outside the form, the client's
    // error, none in time) says why; the model reads that with the command's reasons.
    if (error instanceof ToolError && error.code === "permission_denied") {
      const why = typeof error.details?.why === "string" ? error.details.why : "nobody could be asked to confirm it";
      throw denied(command, why, check, assessment, {
        prompt,
        hostRefusal: error.message,
      });
    }
    throw error;
  }
  if (unsaved !== undefined) {
    const why = unsaved instanceof Error ? unsaved.message : String(unsaved);
    throw denied(command, `"${savable}" was not saved from now on: ${why}`, check, assessment, {
      prompt,
      source: answer.source,
      unsaved: why,
    });
  }
  if (!answer.choice) {
    const who = answer.source === "user"
      ? "the user declined it"
      : answer.source === "client"
      ? "the client declined it"
      : "it was declined automatically (the default is no)";
    throw denied(command, who, check, assessment, { prompt, source: answer.source });
  }
  if (prompt.requirePerson && answer.source !== "user") {
    throw denied(
      command,
      `only a person may confirm it, and the answer was ${
        answer.source === "client" ? "the MCP client's" : "automatic"
      }`,
      check,
      assessment,
      {
        prompt,
        source: answer.source,
      },
    );
  }
  return { command, via: "confirmed", source: answer.source, check, touches, assessment, ...ruleFields };
}

// The rule a person may save for a command: its words, when it is one simple command whose words are all known.
function savablePattern(check: CommandCheck): string | undefined {
  if (!check.parsed || check.commands.length !== 1) return undefined;
  const [only] = check.commands;
  if (only.words.length === 0 || only.words.some((word) => word === "" || /[\s*?[]/.test(word))) return undefined;
  // A word only known at run time is kept as written, with its `$`: not saved.
  if (only.words.some((word) => /[$`\\'"]/.test(word))) return undefined;
  return only.words.join(" ");
}

function ruleDenied(command: string, decided: CommandDecision): ToolError {
  const shown = command.length > 200 ? `${textPrefix(command, 200)}...` : command;
  const rule = decided.rules.rule?.decision === "deny" ? decided.rules.rule : decided.rules.deniedPath?.rule;
  const ruleDetails = rule === undefined ? {} : {
    rule: { pattern: rule.pattern, decision: "decision" in rule ? rule.decision : rule.kind, ...rule.source },
  };
  return new ToolError(`The command was not run: ${decided.reason}. Command: ${shown}`, {
    code: "permission_denied",
    kind: "policy",
    status: "skipped",
    recoverable: false,
    recoveryHint: "Do not retry it in another form; the policy forbids it. Do something else or ask the user.",
    details: {
      command,
      why: decided.reason,
      ...ruleDetails,
    },
  });
}
