/**
 * A host that asks the person behind an MCP client, through elicitation
 * (`elicitation/create`, a form). A client that did not declare the
 * elicitation capability cannot ask anyone, so every question is refused with
 * `permission_denied`, saying how to allow such actions.
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { ElicitResult, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { textPrefix, ToolError } from "@toolfence/core";
import { describeIssues } from "./_param_errors.ts";
import { mcpTypes } from "./_sdk.ts";
import type { ChoiceOutcome, ChoiceRequest, ConfirmRequest, Host } from "@toolfence/core";

/** Options of {@linkcode elicitationHost}. */
export interface ElicitationHostOptions {
  /** How long a person may take to answer. Default 10 minutes. */
  timeoutMs?: number;
  /**
   * What the client's answers count as (the policy files' `answers.elicitation`).
   * A client can answer its own prompts, so by default (`once`) an answer is
   * recorded as the client's (`source: "client"`): it may allow one action,
   * never grant, and never answer a question only a person may answer.
   * `grant` counts answers as a person's (`source: "user"`); `refuse` asks
   * nothing and refuses, as a client without elicitation.
   */
  answers?: "refuse" | "once" | "grant";
  /**
   * The client's request a call's question belongs to, by the call id the
   * question is `about`: the question is sent as part of that request (over
   * Streamable HTTP, on its response stream, which the client is reading;
   * the stream of a GET is one a client may never open). Default none.
   */
  requestOfCall?: (callId: string) => RequestId | undefined;
  /**
   * The protocol version the client negotiated, which decides how a choice's
   * options are written: `oneOf` from 2025-11-25, `enum` with `enumNames`
   * before. Default: the latest.
   */
  protocolVersion?: () => string | undefined;
  /**
   * Settles once the client has sent `notifications/initialized`. A server
   * should send no request but pings before it (the MCP lifecycle), yet a
   * client may call a tool as soon as initialize is answered: its questions
   * wait for it (within `timeoutMs`, and the call's signal), and are refused
   * when it never comes. Default: no wait.
   */
  initialized?: Promise<void>;
}

// The first protocol version whose forms have a single-select field written as `oneOf: [{ const, title }]`. Before it
// (2025-06-18, the first with elicitation) the only choice field is `enum` with `enumNames`: a client of that version
// reads a `oneOf` field as a plain string one, and its user sees no options to choose from.
const TITLED_ONE_OF_SINCE = "2025-11-25";

const DEFAULT_TIMEOUT_MS = 10 * 60_000;

const { ErrorCode, McpError } = mcpTypes;

// Why a question is withdrawn, as the client reads it.
const WITHDRAWN = "the call that asked it was cancelled";

function refused(title: string, message: string, why: string, hint: string): ToolError {
  return new ToolError(`${title}: refused because ${why} (${message})`, {
    code: "permission_denied",
    kind: "policy",
    status: "skipped",
    recoverable: false,
    recoveryHint: hint,
    details: { title, question: message, why },
  });
}

/** Why `error` (the SDK's rejection of an elicitation) allows nothing, in one short clause. */
function noUsableAnswer(error: unknown, timeout: number): string {
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return `the question got no answer within ${formatWait(timeout)}`;
  }
  // A result that is not an elicitation result at all: the SDK throws zod's issues, or their JSON dump in a message.
  const text = (error instanceof Error ? error.message : String(error)).replace(/^(MCP error -?\d+: )+/, "");
  const issues = (error as { issues?: unknown } | null)?.issues ?? issuesDumpedIn(text);
  if (Array.isArray(issues) && issues.length > 0) {
    const first = describeIssues(issues).replace(/^Invalid params: /, "");
    return `the client's answer is not an elicitation result (${first})`;
  }
  return `the question got no usable answer (${text.length > 300 ? `${textPrefix(text, 300)}…` : text})`;
}

// The issues a message ends with as zod's JSON dump, if it does.
function issuesDumpedIn(text: string): unknown {
  const dump = /(\[[\s\S]*\])\s*$/.exec(text)?.[1];
  if (dump === undefined) return undefined;
  try {
    return JSON.parse(dump);
  } catch {
    return undefined;
  }
}

function formatWait(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} minute${ms === 60_000 ? "" : "s"}` : `${ms / 1000} s`;
}

/** Waits for the client's `notifications/initialized`; refuses the question when it does not come within `timeout`. */
async function untilInitialized(
  initialized: Promise<void>,
  timeout: number,
  signal: AbortSignal | undefined,
  title: string,
  message: string,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  try {
    const ready = await Promise.race([
      initialized.then(() => true),
      new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), timeout)),
      new Promise<never>((_, reject) => {
        onAbort = () => reject(signal!.reason);
        signal?.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
    if (!ready) {
      throw refused(
        title,
        message,
        "the MCP client never finished initializing (it sent no notifications/initialized), and a server asks " +
          "nothing before that",
        "Send notifications/initialized once initialize is answered, then call again.",
      );
    }
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * A {@linkcode Host} that asks through MCP elicitation. Choices are a form
 * with one single-select field (a free-text field when other answers are
 * allowed); yes/no questions a form with one boolean field, where declining
 * the form counts as "no". Declining a choice, or dismissing any form, refuses
 * the action (`permission_denied`). Answers are marked `user`: a person gave them.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { Server } from "@modelcontextprotocol/sdk/server/index.js";
 * import { elicitationHost } from "@toolfence/adapters/mcp";
 * const server = new Server({ name: "demo", version: "1.0.0" }, { capabilities: { tools: {} } });
 * const host = elicitationHost(server);
 * // Before a client connects there is nobody to ask:
 * await host.confirm({ title: "Run", message: "Run ls?", defaultChoice: true }).catch((e) => console.log(e.code));
 * ```
 */
export function elicitationHost(server: Server, options: ElicitationHostOptions = {}): Host {
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const answers = options.answers ?? "once";
  const source = answers === "grant" ? "user" as const : "client" as const;

  async function elicit(
    title: string,
    message: string,
    field: Record<string, unknown>,
    callId: string | undefined,
    signal?: AbortSignal,
  ): Promise<ElicitResult> {
    signal?.throwIfAborted();
    if (answers === "refuse") {
      throw refused(
        title,
        message,
        "the policy does not take answers from the MCP client (answers.elicitation is refuse)",
        "Do something that needs no approval, or ask the user to change the policy.",
      );
    }
    const capabilities = server.getClientCapabilities();
    // No initialize reached this server (a stateless HTTP server serves each request alone): it cannot know what the
    // client supports, and has no session to carry a question. Before, the model read that the client "does not
    // support elicitation", which a client that declared it does.
    if (capabilities === undefined) {
      throw refused(
        title,
        message,
        "this server has no session with the MCP client to ask through (each request is served alone: --stateless)",
        "Do something that needs no approval, or ask the user to allow it (e.g. serve with sessions, or with " +
          "--auto-confirm).",
      );
    }
    if (!capabilities.elicitation?.form) {
      throw refused(
        title,
        message,
        capabilities.elicitation
          // 2025-11-25's URL mode alone: the client can send its user to a page, not show a form.
          ? "the MCP client cannot show its user a form (it declared elicitation in URL mode only; questions are forms)"
          : "the MCP client cannot ask its user (it does not support elicitation)",
        "Do something that needs no approval, or ask the user to allow it (e.g. restart the server with --auto-confirm).",
      );
    }
    if (options.initialized) await untilInitialized(options.initialized, timeout, signal, title, message);
    // The question is withdrawn with a reason of the server's own: the SDK sends its signal's reason to the client
    // (notifications/cancelled), and a client's cancel reason of 1 MB came back to it whole.
    const withdraw = new AbortController();
    const onAbort = () => withdraw.abort(WITHDRAWN);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    try {
      return await server.elicitInput(
        {
          mode: "form",
          message: `${title}: ${message}`,
          requestedSchema: { type: "object", properties: { answer: field as never }, required: ["answer"] },
        },
        {
          signal: withdraw.signal,
          timeout,
          relatedRequestId: callId === undefined ? undefined : options.requestOfCall?.(callId),
        },
      );
    } catch (error) {
      // The call was stopped: its own reason, as every other wait of a call throws it. The SDK rejects with an
      // McpError wrapping the reason, which a tool took for a failure of its own (bash: command_start_failed, a late
      // result saying a command that never started needs reconciling).
      if (signal?.aborted) throw signal.reason;
      // No usable answer (one outside the form, an error from the client, no answer in time) allows nothing: a
      // refusal of the policy, not a failure of the tool.
      throw refused(
        title,
        message,
        noUsableAnswer(error, timeout),
        "Do not retry the same action; ask the user or take another approach.",
      );
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  return {
    // The call a question is about names the request to send it with.
    showsCall: options.requestOfCall !== undefined,
    async choose<T extends string>(request: ChoiceRequest<T>, signal?: AbortSignal): Promise<ChoiceOutcome<T>> {
      const field = request.allowExtra
        ? {
          type: "string",
          title: "Answer",
          description: `Options: ${
            request.options.map((o) => `${o.value} (${o.label})`).join(", ")
          }; or any other answer`,
          default: request.defaultChoice,
        }
        // Versions are dates (YYYY-MM-DD): they compare as text.
        : (options.protocolVersion?.() ?? TITLED_ONE_OF_SINCE) >= TITLED_ONE_OF_SINCE
        ? {
          type: "string",
          title: "Answer",
          oneOf: request.options.map((o) => ({ const: o.value, title: o.label })),
          default: request.defaultChoice,
        }
        : {
          type: "string",
          title: "Answer",
          enum: request.options.map((o) => o.value),
          enumNames: request.options.map((o) => o.label),
          default: request.defaultChoice,
        };
      const result = await elicit(request.title, request.message, field, request.about?.callId, signal);
      if (result.action !== "accept") {
        throw refused(
          request.title,
          request.message,
          `the user ${result.action === "decline" ? "declined" : "dismissed"} the question`,
          "Do not retry the same action; ask the user or take another approach.",
        );
      }
      const answer = result.content?.answer;
      const valid = typeof answer === "string" &&
        (request.allowExtra || request.options.some((o) => o.value === answer));
      if (!valid) {
        throw refused(
          request.title,
          request.message,
          `the answer ${JSON.stringify(answer)} is not one of the options`,
          "Ask again or take another approach.",
        );
      }
      return { choice: answer as T, source };
    },

    async confirm(request: ConfirmRequest, signal?: AbortSignal): Promise<ChoiceOutcome<boolean>> {
      const field = { type: "boolean", title: "Allow", default: request.defaultChoice };
      const result = await elicit(request.title, request.message, field, request.about?.callId, signal);
      if (result.action === "decline") return { choice: false, source };
      if (result.action !== "accept") {
        throw refused(
          request.title,
          request.message,
          "the user dismissed the question",
          "Do not retry the same action; ask the user or take another approach.",
        );
      }
      const answer = result.content?.answer;
      if (typeof answer !== "boolean") {
        throw refused(
          request.title,
          request.message,
          `the answer ${JSON.stringify(answer)} is not yes or no`,
          "Ask again or take another approach.",
        );
      }
      return { choice: answer, source };
    },
  };
}
