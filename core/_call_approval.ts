/**
 * Step 3 of a call: the before-call hooks (which may rewrite the arguments or
 * answer in the tool's place) and the approval a tool may need.
 *
 * @module
 */

import { ToolError } from "./errors.ts";
import type { AnyTool } from "./tool.ts";
import type { BeforeCallHook } from "./hooks.ts";
import { validate, validationError } from "./_call_arguments.ts";
import { type CallRun, hooksOf } from "./_call_run.ts";

/** How the hooks and the approval let the call through, or ended it. */
export type ApprovalOutcome =
  | { kind: "run" }
  | { kind: "answered"; output: unknown }
  | { kind: "refused"; error: ToolError };

const RUN: ApprovalOutcome = Object.freeze({ kind: "run" });

/**
 * Runs the before-call hooks and asks for approval; `run.validArgs` holds the
 * arguments to run with. Without hooks or approval it answers at once, without
 * a promise: most calls have neither.
 */
export function approveCall<T>(run: CallRun<T>, tool: AnyTool): ApprovalOutcome | Promise<ApprovalOutcome> {
  const hooks = hooksOf(run.env.hooks.before, run.session.hooks.before);
  if (hooks.length === 0 && !tool.needsApproval) return RUN;
  return runHooksAndApproval(run, tool, hooks);
}

async function runHooksAndApproval<T>(
  run: CallRun<T>,
  tool: AnyTool,
  hooks: readonly BeforeCallHook[],
): Promise<ApprovalOutcome> {
  const { session, name } = run;
  const { callId, signal } = run.options;
  for (const hook of hooks) {
    const decision = await hook({ session, toolName: name, callId, args: run.validArgs! });
    if (!decision) continue;
    if ("output" in decision) {
      run.metadata.shortCircuited = true;
      run.authorization = "hook";
      return { kind: "answered", output: decision.output };
    }
    const outcome = validate(tool, decision.args);
    if (!outcome.ok) return { kind: "refused", error: validationError(tool, outcome) };
    run.validArgs = outcome.value;
  }

  const needsApproval = typeof tool.needsApproval === "function"
    ? await tool.needsApproval(run.validArgs!)
    : tool.needsApproval === true;
  if (!needsApproval) return RUN;
  const answer = run.options.approval ?? await session.confirmOutcome({
    title: "Approve tool call",
    message: `Allow ${name} with ${JSON.stringify(run.validArgs)}?`,
    defaultChoice: true,
  }, signal);
  run.metadata.approval = answer.source;
  if (answer.source === "user" || answer.source === "auto") run.authorization = answer.source;
  if (answer.choice) return RUN;
  return { kind: "refused", error: notApprovedError(name) };
}

/**
 * The refusal of a call a person (or the host, or a framework's approval
 * flow) did not approve: `not_approved`, what the model reads of every
 * declined call, whichever adapter declined it.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { notApprovedError } from "@toolfence/core";
 * console.log(notApprovedError("deploy").message); // The call to deploy was not approved
 * ```
 */
export function notApprovedError(name: string): ToolError {
  return new ToolError(`The call to ${name} was not approved`, {
    code: "not_approved",
    recoveryHint: "Do not retry the same call; ask the user or take another approach.",
  });
}
