/**
 * Errors that tools, the policy and the pipeline throw to end a call with a
 * specific, stable outcome instead of a generic `tool_error`.
 *
 * @module
 */

import { type ErrorCode, errorCodeInfo } from "./error_codes.ts";

/** Which layer an unsuccessful outcome belongs to. */
export type ErrorKind = "semantic" | "execution" | "policy";

/** The unsuccessful statuses a thrown {@linkcode ToolError} can produce. */
export type ThrownStatus = "error" | "skipped";

/** Options of a {@linkcode ToolError}. */
export interface ToolErrorOptions {
  /** Stable machine-readable code from {@linkcode ERROR_CODES} (e.g. `outside_workspace`), or a tool's own. */
  code: ErrorCode | (string & Record<never, never>);
  /** Layer of the failure; defaults to the code's in {@linkcode ERROR_CODES} (`execution` for a code not there). */
  kind?: ErrorKind;
  /** `skipped` for policy refusals that did nothing; defaults to the code's (`error` for a code not there). */
  status?: ThrownStatus;
  /** Whether the model can fix the call and try again; defaults to the code's (`true` for a code not there). */
  recoverable?: boolean;
  /** One short sentence telling the model what to do instead. */
  recoveryHint?: string;
  /** Structured details for the developer; never shown to the model. */
  details?: Record<string, unknown>;
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * An error with a stable code. Throw it from a tool (or from the policy a tool
 * uses) and the pipeline turns it into a result with that status, kind and code.
 * Retries never apply to `policy` or `semantic` errors.
 *
 * @example Refusing with a policy outcome
 * ```ts
 * import { ToolError } from "@toolfence/core";
 * throw new ToolError("Path /etc/passwd is not within the agent's workspace", {
 *   code: "outside_workspace",
 *   kind: "policy",
 *   recoveryHint: "Use a path inside the workspace.",
 * });
 * ```
 */
export class ToolError extends Error {
  /** Stable machine-readable code. */
  readonly code: string;
  /** Layer of the failure. */
  readonly kind: ErrorKind;
  /** Result status this error produces. */
  readonly status: ThrownStatus;
  /** Whether the model can fix the call and try again. */
  readonly recoverable: boolean;
  /** What the model should do instead, if known. */
  readonly recoveryHint?: string;
  /** Structured details for the developer. */
  readonly details?: Record<string, unknown>;

  /** Creates an error that ends a call with the given code. */
  constructor(message: string, options: ToolErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ToolError";
    this.code = options.code;
    const defaults = errorCodeInfo(options.code);
    this.kind = options.kind ?? defaults.kind;
    this.status = options.status ?? defaults.status;
    this.recoverable = options.recoverable ?? defaults.recoverable;
    this.recoveryHint = options.recoveryHint;
    this.details = options.details;
  }
}

/**
 * Thrown (not returned) for programming errors of the caller, such as calling
 * without a session; the pipeline never turns these into results.
 *
 * @example
 * ```ts
 * import { UsageError } from "@toolfence/core";
 * throw new UsageError("toolbox.call needs a Session");
 * ```
 */
export class UsageError extends Error {
  /** Creates a usage error. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Thrown by {@linkcode ToolBox.register} when two tools share a name and neither
 * side allows an override.
 *
 * @example
 * ```ts
 * import { ToolNameConflictError } from "@toolfence/core";
 * const error = new ToolNameConflictError("read_file");
 * console.log(error.message);
 * ```
 */
export class ToolNameConflictError extends Error {
  /** The conflicting name. */
  readonly toolName: string;
  /** Creates the error for `toolName`. */
  constructor(toolName: string) {
    super(
      `Conflict tool name: "${toolName}" is already registered; set override: true on one of them to replace it`,
    );
    this.name = "ToolNameConflictError";
    this.toolName = toolName;
  }
}
