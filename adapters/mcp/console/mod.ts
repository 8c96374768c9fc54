/**
 * The web console (`@toolfence/adapters/console`): a page where a person
 * answers the questions waiting for a person, per tenant, and reads the
 * audit log. `toolfence serve --http ... --console HOST:PORT` runs it beside
 * the MCP server; {@linkcode consoleHost} and {@linkcode serveConsole} are the
 * same as a library.
 *
 * @example
 * ```ts
 * import { consoleHost, MemoryQuestionQueue } from "@toolfence/adapters/console";
 * const queue = new MemoryQuestionQueue();
 * const host = consoleHost(queue, "alice");
 * console.log(host.tenant); // alice
 * ```
 *
 * @module
 */

export {
  type AnswerRefusal,
  MemoryQuestionQueue,
  type PendingQuestion,
  type QuestionInit,
  type QuestionOption,
  type QuestionQueue,
} from "./question_queue.ts";
export { StoreQuestionQueue, type StoreQuestionQueueOptions } from "./store_question_queue.ts";
export { type ConsoleHost, consoleHost, type ConsoleHostOptions } from "./console_host.ts";
export { type ConsoleServeOptions, type ConsoleServer, serveConsole } from "./serve_console.ts";
// The types the names above reference, type-only, so this entry's docs are complete (written by deno task surface):
export type {
  ArtifactRef,
  AttemptId,
  AuditQuery,
  BatchClosure,
  ChoiceOption,
  ChoiceOutcome,
  ChoiceRequest,
  ChoiceSource,
  ConfirmRequest,
  Effect,
  EffectState,
  ErrorKind,
  FileChange,
  FileState,
  Host,
  LateResult,
  Provenance,
  PrunedCounts,
  QuestionSubject,
  RetryDisposition,
  Store,
  StoredAuditRecord,
  StoredCall,
  StoredEvent,
  StoredGrant,
  StoredQuestion,
  StoredSession,
  ToolResult,
  ToolStatus,
} from "@toolfence/core";
export type { JwtOptions, JwtVerifier } from "../_http_jwt.ts";
export type { Scope, SCOPES } from "../_http_scopes.ts";
export type { Identity, TokenFile } from "../_http_tokens.ts";
