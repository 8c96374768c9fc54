/**
 * The decision whether a shell command may start: the allowlist check, then
 * the risk assessor, then (where the assessment says so) a person. Shell tools
 * call it before they start anything.
 *
 * @module
 */
import { ToolError } from "@toolfence/core";
import type { ChoiceSource } from "@toolfence/core";
import { checkCommand, type CommandCheck, commandSandbox } from "./check_command.ts";
import type { SandboxMode } from "../sandbox.ts";
import type { PolicyAsker } from "../policy.ts";
import { promptForAssessment, type RiskAssessment, type RiskAssessor, rulesRiskAssessor } from "./risk.ts";
import type { PolicyState } from "../state.ts";

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
  /**
   * The session's sandbox mode (default `auto`): `off` counts as no sandbox,
   * so commands that run project code ask; `auto` and `required` use the
   * probe (a runner refuses `required` without a sandbox before asking).
   */
  sandbox?: SandboxMode;
  /** The workspace root, for `cd` and paths in flags (absolute). */
  workspaceRoot?: string;
}

/** Why a command may run. */
export interface CommandAuthorization {
  /** The command line. */
  command: string;
  /** `allowlist`: every part is allowed; `assessor`: the risk assessor allowed it; `confirmed`: someone said yes. */
  via: "allowlist" | "assessor" | "confirmed";
  /** Who confirmed it, when someone did (`auto` with autoConfirm). */
  source?: ChoiceSource;
  /** The allowlist check. */
  check: CommandCheck;
  /** The risk assessment, when the allowlist did not settle it. */
  assessment?: RiskAssessment;
}

const MAX_REASONS_SHOWN = 3;

function denied(
  command: string,
  why: string,
  check: CommandCheck,
  assessment: RiskAssessment,
  extra: Record<string, unknown> = {},
): ToolError {
  const shown = command.length > 200 ? `${command.slice(0, 200)}...` : command;
  const reasons = [...new Set([assessment.reason, ...check.reasons])];
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
  const check = await checkCommand(command, {
    allowlist: options.state.commandAllowlist(),
    sandbox: await commandSandbox(options.sandbox),
    ...(options.workspaceRoot === undefined ? {} : { workspaceRoot: options.workspaceRoot }),
  });
  if (check.verdict === "allow") return { command, via: "allowlist", check };
  signal?.throwIfAborted();
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
  if (prompt === undefined) return { command, via: "assessor", check, assessment };
  if (options.sessionCanAsk === false) {
    throw denied(command, "it needs confirmation and nobody can be asked in this session", check, assessment);
  }
  let answer;
  try {
    answer = await options.asker.confirm(prompt, signal);
  } catch (error) {
    // A host with nobody to ask refuses; say so with the command's reasons.
    if (error instanceof ToolError && error.code === "permission_denied") {
      throw denied(command, "nobody could be asked to confirm it", check, assessment, {
        prompt,
        hostRefusal: error.message,
      });
    }
    throw error;
  }
  if (!answer.choice) {
    const who = answer.source === "user" ? "the user declined it" : "it was declined automatically (the default is no)";
    throw denied(command, who, check, assessment, { prompt, source: answer.source });
  }
  return { command, via: "confirmed", source: answer.source, check, assessment };
}
