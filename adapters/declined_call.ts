/**
 * One text for a declined call, whichever framework declined it.
 *
 * @module
 */

import { makeResult, notApprovedError, toModelText } from "@toolfence/core";

/**
 * What the model reads of a call that was not approved: the text the
 * pipeline gives every declined call (`Skipped [not_approved]: The call to
 * deploy was not approved` and its hint), the same in every adapter. The
 * adapters whose framework declines without toolfence (the AI SDK, Mastra,
 * the OpenAI Agents SDK) take it as the decline's reason: the AI SDK's
 * `tool-approval-response` `reason`, Mastra's `declineToolCall*({ reason })`,
 * the OpenAI Agents SDK's `toolErrorFormatter` for `approval_rejected`.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { declinedCallText } from "@toolfence/adapters";
 * console.log(declinedCallText("deploy"));
 * // Skipped [not_approved]: The call to deploy was not approved
 * // Hint: Do not retry the same call; ask the user or take another approach.
 * ```
 */
export function declinedCallText(toolName: string): string {
  const error = notApprovedError(toolName);
  return toModelText(makeResult({
    status: error.status,
    toolName,
    error: error.message,
    errorKind: error.kind,
    errorCode: error.code,
    recoveryHint: error.recoveryHint,
  }));
}
