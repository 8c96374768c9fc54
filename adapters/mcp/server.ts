/**
 * The MCP server: a toolbox and one session behind the official SDK's
 * low-level `Server`.
 *
 * - `tools/list`: the listed tools with annotations from their metadata. A
 *   tool MCP cannot show (its input schema is no object, its output has no
 *   JSON Schema) is left out, and unknown to `tools/call`; stderr says why,
 *   once per tool.
 * - `tools/call`: every call through the toolbox; a tool's failure is a result
 *   with `isError: true` and the text the model should read. Protocol errors
 *   are kept for protocol faults (an unknown tool, a malformed request).
 *   Progress from `ctx.progress` becomes `notifications/progress` when the
 *   request carries a progress token; `notifications/cancelled` aborts the
 *   call's `ctx.signal`; deferred images follow the text as image content.
 * - A tool that declares `output` has it advertised as `outputSchema`, and a
 *   successful call answers its output as `structuredContent` beside the text
 *   (for older clients); a cut output answers the cut envelope
 *   (`CUT_OUTPUT_SCHEMA`: the text the model read and the artifact).
 * - Artifacts (e.g. the whole of a cut output) are resources,
 *   `artifact://sha256/<hex>`, listed (except sensitive ones) and readable;
 *   results link to theirs.
 * - Questions of the policy go to the client's user through elicitation
 *   (see {@linkcode elicitationHost}) unless another host is given.
 * - Every result's `_meta["toolfence/result"]` says how the call ended and
 *   what a client needs to recover: `effectState`, `reconciliationRequired`,
 *   `declaredEffects`, `filesystemChanges`, `attemptId`, `retryDisposition`,
 *   `workerStillRunning`. A timed-out or cancelled call is also logged
 *   (`notifications/message`, `data.event` its status).
 * - A late result (a timed-out or cancelled tool that settled after it was
 *   reported) is sent twice, outside any request: as a `notifications/message`
 *   log (level `notice`, `data: { event: "late_result", callId, lateResult }`),
 *   which every client shows, and as {@linkcode LATE_RESULT_NOTIFICATION}
 *   whose params are that `lateResult`, for clients that handle it. Both carry `lateResult: true`, the
 *   `attemptId` of the reported result, `reportedStatus`, the late `status`,
 *   `effectState` and `reconciliationRequired` as now known, and the output
 *   when it is at most 64 KiB of JSON (else `outputOmitted`, its length).
 *   Over HTTP they go on the session's GET stream. The session's late results
 *   so far are also a resource, {@linkcode LATE_RESULTS_URI} (listed once
 *   there is one), for a client that missed the notifications. A session keeps
 *   a bounded number of them (see `LateResults`): the oldest are dropped, said
 *   by the resource's `dropped` and a `late_results_dropped` log notice.
 * - With {@linkcode McpServerOptions.shared} (a fleet's store), artifacts and
 *   late results made on another replica are listed and read as this
 *   process's own, and the outcome of any call of the session is a resource,
 *   `toolfence://calls/<request id>` (see {@linkcode callUri}).
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Host } from "@toolfence/core";
import type { ArtifactRef, FileChange, LateResult, StoredCall, ToolResult } from "@toolfence/core";
import { checkOutput, outputCheckedAgainst, toModelText } from "@toolfence/core";
import type { AnyTool } from "@toolfence/core";
import { Session, type SessionOptions } from "@toolfence/policy";
import { isConcurrencySafe } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import { base64, takeImagesOf } from "../_calls.ts";
import { mcpTools, mcpWrapsOutput, WRAPPED_OUTPUT_KEY } from "./dialect.ts";
import { elicitationHost } from "./elicitation_host.ts";
import { answerInvalidParams, answerUnknownMethods } from "./_param_errors.ts";
import { echoed, progressTokenOf } from "./_jsonrpc_frame.ts";
import { ignoreTaskAugmentation } from "./_task_params.ts";
import process from "node:process";
import { cancelFalsyIds, cancelInOrder } from "./_cancel_ids.ts";
import { requestIdOf, requestKey } from "./_request_key.ts";
import { knownSandboxState, limitsOfPolicy, type SandboxState, sandboxState } from "@toolfence/policy";
import { mcpServerModule, mcpTypes } from "./_sdk.ts";

const {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} = mcpTypes;

/** Options of {@linkcode createMcpServer}: the session's, plus the server's identity. */
export interface McpServerOptions extends Omit<SessionOptions, "host"> {
  /**
   * Who answers the policy's questions; default the client's user, through
   * elicitation. A function receives that elicitation host, to ask it too
   * (as the web console's host does).
   */
  host?: Host | ((elicitation: Host) => Host);
  /** Server name in the `initialize` answer. Default `toolfence`. */
  name?: string;
  /** Server version in the `initialize` answer. */
  version?: string;
  /** Instructions for the client's model. */
  instructions?: string;
  /** How long a person may take to answer an elicitation. Default 10 minutes. */
  elicitationTimeoutMs?: number;
  /** What the client's elicitation answers count as (see `ElicitationHostOptions.answers`); default `once`. */
  elicitationAnswers?: "refuse" | "once" | "grant";
  /**
   * The model's capabilities; default {@linkcode MCP_CAPABILITIES} (`vision`):
   * image content is part of every MCP tool result, so an MCP client can show
   * it, and the tools that answer images (`browser_screenshot`,
   * `request_image`) are offered. Give `[]` for a client that drops images.
   */
  capabilities?: readonly string[];
  /**
   * The session's state kept beyond this process (a fleet's store): artifacts
   * and late results of other replicas, and the outcome of every call of the
   * session, read where this process has none. Default none.
   */
  shared?: SharedSessionState;
  /**
   * The protocol version spoken until an `initialize` settles one: what
   * decides how an artifact is linked (`resource_link` content from
   * 2025-06-18, text before) and how a question's choices are written. A
   * stateless HTTP server, whose fresh server answers one request that comes
   * without an `initialize`, gives that request's `MCP-Protocol-Version`.
   * Default 2025-06-18.
   */
  protocolVersion?: string;
}

/**
 * A session's state kept beyond one process, as the server reads it (the
 * HTTP server gives one backed by its store; see docs/fleet.md). Every
 * method is about this session alone.
 */
export interface SharedSessionState {
  /** An artifact of the session, with its bytes; undefined when it has none of that id. */
  artifact(id: string): Promise<{ ref: ArtifactRef; bytes: Uint8Array } | undefined>;
  /** The session's artifacts. */
  artifacts(): Promise<ArtifactRef[]>;
  /** The session's late results, oldest first. */
  lateResults(): Promise<LateResult[]>;
  /**
   * The session's call of that JSON-RPC request id (as the key the store keeps
   * it under: a number's text; a string itself, or its JSON text when it reads
   * as a number or a quoted string), with its answer once known; undefined when
   * no such call was ever started (its tool never ran).
   */
  call(requestId: string): Promise<StoredCall | undefined>;
}

/** The resource holding a session's late results (JSON: `{ lateResults: [...] }`, each as notified). */
export const LATE_RESULTS_URI = "toolfence://late-results";

const CALLS_PREFIX = "toolfence://calls/";

/**
 * The resource URI of the outcome of a session's call, by its JSON-RPC
 * request id: `toolfence://calls/<id>` (the id percent-encoded; a string id
 * that reads as a number or as a quoted string, such as `"42"`, in its JSON
 * text, quotes and all, so that it names no numeric id). Served when
 * the server has {@linkcode McpServerOptions.shared} state. Its JSON says
 * `requestId`, `tool`, `state` (`running`, `done`, or `interrupted` when its
 * replica stopped first) and `answer` (the JSON-RPC answer given for it,
 * or null while it runs).
 *
 * @example
 * ```ts
 * import { callUri } from "@toolfence/adapters/mcp";
 * console.log(callUri(7)); // toolfence://calls/7
 * console.log(callUri("7")); // toolfence://calls/%227%22
 * ```
 */
export function callUri(requestId: string | number): string {
  return CALLS_PREFIX + encodeURIComponent(requestKey(requestId));
}

// A malformed escape is no id of any call.
function decodedOrUndefined(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}

// Every list is answered in one page, so no cursor was ever given out: the spec asks for -32602 on an invalid one
// (answering the first page again would loop a client that follows cursors).
function refuseCursor(request: { params?: { cursor?: string } }): void {
  const cursor = request.params?.cursor;
  if (cursor !== undefined) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid cursor: ${JSON.stringify(echoed(cursor))} (this server lists in one page)`,
    );
  }
}

// Whether MCP can show a tool, by tool: mcpTools throws for a tool whose input schema is no object or whose output has
// no JSON Schema, and tools/list failed whole for it, leaving the client no tool at all. Such a tool is left out of the
// list and is unknown to tools/call, as one the session may not call is; the operator reads why once, on stderr.
const showable = new WeakMap<AnyTool, boolean>();

function canShow(tool: AnyTool): boolean {
  let shown = showable.get(tool);
  if (shown === undefined) {
    try {
      mcpTools([tool]);
      shown = true;
    } catch (error) {
      shown = false;
      process.stderr.write(`toolfence: the tool ${tool.name} is not listed over MCP: ${(error as Error).message}\n`);
    }
    showable.set(tool, shown);
  }
  return shown;
}

/** The capabilities an MCP session has unless told otherwise: `vision` (MCP results carry image content). */
export const MCP_CAPABILITIES: readonly string[] = Object.freeze(["vision"]);

/** A server with its session. */
export interface McpToolServer {
  /** The SDK server; connect it to a transport. */
  readonly server: Server;
  /** The session every call runs in. */
  readonly session: Session;
  /** Resolves once no tool call is running. */
  idle(): Promise<void>;
  /** Cancels every call in flight (each still answers, as cancelled); later calls are cancelled at once. */
  cancelAll(reason?: string): void;
  /** Closes the server and the session. */
  close(): Promise<void>;
}

/** The package version reported to clients when none is given: the root deno.json's, written by `scripts/version.ts --set`. */
export const TOOLFENCE_VERSION = "0.1.0";

const ARTIFACT_URI = /^artifact:\/\/sha256\/([0-9a-f]{64})$/;

/**
 * The resource URI of an artifact: `artifact://sha256/<hex>`.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { artifactUri } from "@toolfence/adapters/mcp";
 * console.log(artifactUri({ sha256: "ab".repeat(32) })); // artifact://sha256/abab...
 * ```
 */
export function artifactUri(ref: Pick<ArtifactRef, "sha256">): string {
  return `artifact://sha256/${ref.sha256}`;
}

// The SDK answers `initialize` itself; this wraps its answer: with `instructions` (before bubblewrap has been
// probed), the answer waits for them so that they state the sandbox (the SDK keeps them in a field it reads there),
// and `negotiated` hears the protocol version the answer settles on.
function wrapInitialize(
  server: Server,
  instructions: (() => Promise<string>) | undefined,
  negotiated: (version: string) => void,
): void {
  const internals = server as unknown as {
    _instructions?: string;
    _oninitialize?: (request: unknown) => Promise<unknown>;
  };
  const answer = internals._oninitialize;
  if (typeof answer !== "function") return;
  // "The initialization phase MUST be the first interaction": one initialize per connection. A second one (answered
  // by the SDK as the first was) negotiated again mid-session: a new protocol version (batches taken or refused, links
  // or text for artifacts) and new client capabilities under the calls already made. Taken from the moment one is
  // being answered, so two at once are one too many; freed again if that one failed, which opened nothing.
  let taken = false;
  server.setRequestHandler(InitializeRequestSchema, async (request) => {
    if (taken) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        "Invalid request: this connection is already initialized; initialize comes once, first " +
          "(open a new connection to start over)",
      );
    }
    taken = true;
    try {
      if (instructions) internals._instructions = await instructions();
      const result = await answer.call(server, request) as { protocolVersion?: unknown };
      if (typeof result.protocolVersion === "string") negotiated(result.protocolVersion);
      return result as never;
    } catch (error) {
      taken = false;
      throw error;
    }
  });
}

// The SDK parses a tools/call with zod before the handler sees it (and its Server checked the handler's result the same
// way, before setToolCallHandler): each copies a record key by key into a new object, and an own `__proto__` key
// (JSON.parse makes one) becomes the copy's prototype instead of a key. The model's `{"path": "a", "__proto__": {...}}` reached the pipeline as `{path: "a"}`
// and ran, where the same arguments in process are refused ("__proto__: unexpected argument"); a tool's output with
// such a key lost it in `structuredContent`. This wraps the SDK's tools/call entry: the handler reads the arguments as
// received (the SDK's parse still judges their shape) and the client gets the result as made (once the SDK's check
// of it passed). Keyed by the request's `extra`, which the SDK hands unchanged through its layers.
function keepRawToolCalls(server: Server): {
  argumentsOf: (extra: object, parsed: Record<string, unknown> | undefined) => Record<string, unknown> | undefined;
  keep: (extra: object, result: unknown) => void;
} {
  const rawArguments = new WeakMap<object, Record<string, unknown>>();
  const made = new WeakMap<object, unknown>();
  const handlers =
    (server as unknown as { _requestHandlers?: Map<string, (r: unknown, e: object) => Promise<unknown>> })
      ._requestHandlers;
  const sdkCall = handlers?.get("tools/call");
  if (handlers && sdkCall) {
    handlers.set("tools/call", async (request, extra) => {
      const args = (request as { params?: { arguments?: unknown } }).params?.arguments;
      if (typeof args === "object" && args !== null && !Array.isArray(args)) {
        rawArguments.set(extra, args as Record<string, unknown>);
      }
      const checked = await sdkCall(request, extra);
      return made.has(extra) ? made.get(extra) : checked;
    });
  }
  return {
    argumentsOf: (extra, parsed) => rawArguments.get(extra) ?? parsed,
    keep: (extra, result) => made.set(extra, result),
  };
}

type ToolCallHandler = Parameters<typeof Server.prototype.setRequestHandler<typeof CallToolRequestSchema>>[1];

// The SDK's Server parses every tools/call twice on the way in (its protocol layer, then its own tools/call wrapper,
// with the same schema) and once on the way out (the answer against CallToolResultSchema, a key-by-key copy that
// keepRawToolCalls sends in place of the answer anyway). The answer is built by the handler below from fields of
// known types (text, resource links, images, the tool's output object already checked against the tool's own
// schema, the result's metadata), so that check could only fail on a bug there, and the pair cost about 6 µs of CPU
// per call in-process (4.8 for a read_file answer, 1.1 for the second parse of the request). The handler is
// registered with the protocol layer's setRequestHandler itself: the request is parsed once, as every other
// method's is, and the answer goes out as made. A request the schema refuses is answered -32602 as before
// (answerInvalidParams reads the protocol layer's zod error as it reads the wrapper's).
// Where the installed SDK's Server extends no protocol class with its own setRequestHandler (another version's
// layout), the handler is registered the Server's way: a shortcut, never a condition of serving.
function setToolCallHandler(server: Server, handler: ToolCallHandler): void {
  const protocol = Object.getPrototypeOf(mcpServerModule.Server.prototype) as {
    setRequestHandler?: (this: Server, schema: typeof CallToolRequestSchema, handler: ToolCallHandler) => void;
  };
  if (typeof protocol.setRequestHandler === "function") {
    protocol.setRequestHandler.call(server, CallToolRequestSchema, handler);
  } else {
    server.setRequestHandler(CallToolRequestSchema, handler);
  }
}

// The first protocol version that defines `resource_link` content; an older client's schema refuses a result
// that holds one, so it is told of an artifact in text instead.
const RESOURCE_LINKS_SINCE = "2025-06-18";

/**
 * The most `filesystemChanges` entries a result's `_meta` carries: a command may change any number of files (one
 * that made 100,001 sent them all, 17 MB of JSON, twice when it was also logged). Past it, as for an output over the
 * cap, the head and the tail are kept (the first and the last half), the cut is said with its count, and the whole
 * list is kept as a JSON artifact of the session (`filesystemChangesArtifact`), readable as a resource.
 */
export const META_FILE_CHANGES = 1_000;

/**
 * `filesystemChanges`, cut to {@linkcode META_FILE_CHANGES} with the marker and the counts when over it, and the
 * artifact that holds them all (JSON) when one was made.
 */
function cappedFileChanges(changes: readonly FileChange[], whole?: ArtifactRef): Record<string, unknown> {
  if (changes.length <= META_FILE_CHANGES) return { filesystemChanges: changes };
  const half = META_FILE_CHANGES / 2;
  return {
    filesystemChanges: [...changes.slice(0, half), ...changes.slice(-half)],
    // The entries left out are those after the first `half`: the list is the first and the last `half` of the whole.
    filesystemChangesTruncated: true,
    filesystemChangesOmitted: changes.length - META_FILE_CHANGES,
    filesystemChangesTotal: changes.length,
    ...(whole ? { filesystemChangesArtifact: whole.id } : {}),
  };
}

/** Keeps a call's whole `filesystemChanges` as a JSON artifact of the session when they are over the cap. */
async function wholeFileChanges(session: Session, result: ToolResult): Promise<ArtifactRef | undefined> {
  const changes = result.filesystemChanges;
  if (changes.length <= META_FILE_CHANGES) return undefined;
  return await session.artifacts.put(JSON.stringify(changes), {
    mediaType: "application/json",
    summary: `every file change of ${result.toolName}${
      result.attemptId ? ` (call ${result.attemptId.callId})` : ""
    }, ${changes.length} of them`,
  }).catch(() => undefined);
}

/**
 * What the model-facing part of a result does not say, for clients
 * (`_meta["toolfence/result"]`): how it ended, and what a client needs to
 * recover after a timeout or a cancel (the declared effects, the effect
 * state, whether someone must look at the workspace before going on, which
 * attempt it was, whether the tool was still running when it was reported).
 */
export function resultMeta(result: ToolResult, wholeChanges?: ArtifactRef): Record<string, unknown> {
  return {
    status: result.status,
    ...(result.errorCode ? { errorKind: result.errorKind, errorCode: result.errorCode } : {}),
    truncated: result.truncated,
    attempts: result.attempts,
    latencyMs: Math.round(result.latencyMs * 1000) / 1000,
    artifacts: result.artifacts.map((a) => a.id),
    ...cappedFileChanges(result.filesystemChanges, wholeChanges),
    // Why the list may miss changes (a command's report past its bounds; see ChangeReportIncomplete).
    ...(result.metadata.filesystemChangesIncomplete !== undefined
      ? { filesystemChangesIncomplete: result.metadata.filesystemChangesIncomplete }
      : {}),
    declaredEffects: result.declaredEffects,
    effectState: result.effectState,
    reconciliationRequired: result.reconciliationRequired,
    retryDisposition: result.retryDisposition,
    ...(result.attemptId ? { attemptId: result.attemptId } : {}),
    ...(result.workerStillRunning ? { workerStillRunning: true } : {}),
  };
}

/** The method of the notification that carries a late result (see {@linkcode createMcpServer}). */
export const LATE_RESULT_NOTIFICATION = "notifications/toolfence/late_result";

/** The largest late output (as JSON, in characters) sent whole in a late-result notification. */
const LATE_OUTPUT_CHARS = 64 * 1024;

/** What a client is told of a late result: its meta, the late fields, and its output when small. */
function lateResultParams(late: LateResult): Record<string, unknown> {
  const output = JSON.stringify(late.output ?? null);
  return {
    tool: late.toolName,
    callId: late.attemptId.callId,
    lateResult: true,
    reportedStatus: late.reportedStatus,
    staleOwner: late.staleOwner,
    ...resultMeta(late),
    ...(late.error === undefined ? {} : { error: late.error }),
    ...(output.length <= LATE_OUTPUT_CHARS ? { output: late.output ?? null } : { outputOmitted: output.length }),
  };
}

/**
 * What `tools/call` answers for a tool that declares `output`: its JSON output
 * as `structuredContent` (checked once more where an after-call hook ran,
 * which may have replaced it; wrapped as `{ result }` when its schema admits more than
 * objects), or the cut envelope of `CUT_OUTPUT_SCHEMA` when the output was
 * over the cap. A mismatch is answered as an `invalid_output` error, never
 * sent.
 */
async function structuredOf(
  tool: AnyTool,
  result: ToolResult,
): Promise<{ structuredContent: Record<string, unknown> } | { error: string }> {
  if (result.truncated) {
    const text = typeof result.output === "string" ? result.output : JSON.stringify(result.output);
    const whole = result.artifacts.findLast((ref) => text.includes(ref.id));
    if (whole) {
      return {
        structuredContent: {
          truncated: true,
          text,
          omitted: result.omitted,
          artifact: { id: whole.id, uri: artifactUri(whole) },
        },
      };
    }
  } else {
    // Checked once more unless the pipeline's own check is the last word on it (no after-call hook ran since).
    const mismatch = outputCheckedAgainst(result, tool.output!)
      ? undefined
      : await checkOutput(tool.name, tool.output!, result.output);
    if (mismatch) return { error: `Error [${mismatch.code}]: ${mismatch.message}` };
    if (mcpWrapsOutput(tool)) return { structuredContent: { [WRAPPED_OUTPUT_KEY]: result.output } };
    if (typeof result.output === "object" && result.output !== null && !Array.isArray(result.output)) {
      return { structuredContent: result.output as Record<string, unknown> };
    }
  }
  return { error: `Error [invalid_output]: ${tool.name} gave an output that is not the object its schema declares` };
}

/**
 * A signal that aborts when either of two does, with the first one's reason,
 * and `release()` to stop following them once the call has ended. Not
 * `AbortSignal.any`, which keeps every signal it made reachable through weak
 * references for its sources' lifetime: about 25 µs per call here, in a
 * server whose `stopping` signal lives as long as it does.
 */
function cancelledByEither(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const fromA = () => controller.abort(a.reason);
  const fromB = () => controller.abort(b.reason);
  if (a.aborted) fromA();
  else if (b.aborted) fromB();
  else {
    a.addEventListener("abort", fromA, { once: true });
    b.addEventListener("abort", fromB, { once: true });
  }
  return {
    signal: controller.signal,
    release() {
      a.removeEventListener("abort", fromA);
      b.removeEventListener("abort", fromB);
    },
  };
}

/**
 * Creates an MCP server over a toolbox, with one session (made from
 * `options`) for every call. Connect `server` to a transport (see
 * {@linkcode serveStdio} for stdio).
 *
 * Requires whatever permissions the tools need.
 *
 * @example
 * ```ts
 * import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
 * import { ToolBox } from "@toolfence/core";
 * import { createMcpServer } from "@toolfence/adapters/mcp";
 * const { server, close } = createMcpServer(new ToolBox(), { workspace: Deno.cwd() });
 * const [, serverSide] = InMemoryTransport.createLinkedPair();
 * await server.connect(serverSide);
 * await close();
 * ```
 */
export function createMcpServer(toolbox: ToolBox, options: McpServerOptions): McpToolServer {
  const {
    name,
    version,
    instructions,
    elicitationTimeoutMs,
    elicitationAnswers,
    host,
    shared,
    protocolVersion: assumedVersion,
    ...sessionOptions
  } = options;
  // The instructions say how commands will run: the sandbox state, once per session.
  const mode = sessionOptions.sandbox ?? "auto";
  const withSandbox = (state: SandboxState) => [instructions, state.summary].filter(Boolean).join("\n\n");
  // ... and the resource limits of its policy files.
  const limits = limitsOfPolicy({ rules: sessionOptions.rules });
  const known = knownSandboxState(mode, limits);
  const server = new mcpServerModule.Server(
    { name: name ?? "toolfence", version: version ?? TOOLFENCE_VERSION },
    {
      capabilities: { tools: {}, resources: { listChanged: true }, logging: {} },
      ...(known ? { instructions: withSandbox(known) } : instructions ? { instructions } : {}),
    },
  );
  let protocolVersion = assumedVersion ?? RESOURCE_LINKS_SINCE;
  wrapInitialize(
    server,
    known === undefined ? async () => withSandbox(await sandboxState(mode, limits)) : undefined,
    (version) => protocolVersion = version,
  );
  // The client's notifications/initialized: questions (elicitation/create, a request) wait for it.
  let markInitialized!: () => void;
  const initialized = new Promise<void>((resolve) => markInitialized = resolve);
  const onInitialized = server.oninitialized;
  server.oninitialized = () => {
    markInitialized();
    onInitialized?.();
  };
  const session = new Session({
    ...sessionOptions,
    capabilities: sessionOptions.capabilities ?? MCP_CAPABILITIES,
    host: typeof host === "object" ? host : (host ?? ((elicitation) => elicitation))(
      elicitationHost(server, {
        timeoutMs: elicitationTimeoutMs,
        answers: elicitationAnswers,
        requestOfCall: (callId) => requestOfCall.get(callId),
        protocolVersion: () => protocolVersion,
        initialized,
      }),
    ),
  });
  // The SDK keeps the level of logging/setLevel by the transport's session id (over HTTP, the MCP session's) and
  // filters only messages sent with that id: without it, a client that asked for errors alone heard every notice.
  const log = (level: "notice", data: Record<string, unknown>) =>
    void server.sendLoggingMessage({ level, logger: "toolfence", data }, server.transport?.sessionId).catch(() => {});
  // A timed-out or cancelled tool that settles later: the client hears how (see the module's notes).
  // The capability says `listChanged`: the client hears of every change of resources/list, which holds the artifacts
  // and, once there is one, the late results (a late result may also have made artifacts).
  let listedArtifacts = 0;
  let listedLateResults = false;
  const resourcesChanged = () => {
    const artifactCount = session.artifacts.list().length;
    const lateResults = session.lateResults.list().length > 0;
    if (artifactCount === listedArtifacts && lateResults === listedLateResults) return;
    listedArtifacts = artifactCount;
    listedLateResults = lateResults;
    void server.sendResourceListChanged().catch(() => {});
  };
  let toldDropped = 0;
  session.lateResults.onLateResult((late) => {
    const params = lateResultParams(late);
    log("notice", { event: "late_result", callId: params.callId, lateResult: params });
    // Past the session's bounds the oldest late results are dropped: the client hears how many, never silently.
    const dropped = session.lateResults.dropped;
    if (dropped > toldDropped) {
      log("notice", { event: "late_results_dropped", dropped, newlyDropped: dropped - toldDropped });
      toldDropped = dropped;
    }
    void server.notification({ method: LATE_RESULT_NOTIFICATION, params }).catch(() => {});
    resourcesChanged();
  });
  const gate = session.callGate;
  const running = new Set<Promise<unknown>>();
  // The request of each call in flight, by call id: its questions are sent as part of it.
  const requestOfCall = new Map<string, RequestId>();
  const stopping = new AbortController();
  const cancelAll = (reason = "the server is shutting down") => stopping.abort(new Error(reason));
  const idle = async () => {
    while (running.size > 0) await Promise.allSettled([...running]);
  };

  // What this session may list and call now: its capabilities, its fence and its workspace decide.
  const listOptions = () => ({ capabilities: session.capabilities, session });

  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    refuseCursor(request);
    return { tools: mcpTools(toolbox.list(listOptions()).filter(canShow)) };
  });

  setToolCallHandler(server, async (request, extra) => {
    const { name: toolName } = request.params;
    const args = rawToolCalls.argumentsOf(extra, request.params.arguments);
    // A tool left out of tools/list (by the session's capabilities, the fence, or MCP) is as unknown as an unregistered
    // one: the same protocol error, which does not say that it exists (the executor's own refusal would).
    const tool = toolbox.listed(toolName, listOptions());
    if (!tool || !canShow(tool)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${echoed(toolName)}`);
    }
    // One call id per call: a cancelled request's id may be used again while its tool still runs.
    let callId = `mcp-${extra.requestId}`;
    for (let n = 2; requestOfCall.has(callId); n++) callId = `mcp-${extra.requestId}#${n}`;
    requestOfCall.set(callId, extra.requestId);
    const progressToken = progressTokenOf(request.params._meta);
    let progress = 0;
    // Set once the call is reported (answered, or cancelled with no answer): "progress notifications MUST stop after
    // completion", but a tool reported as timed out or cancelled may run on and report progress until it settles.
    let reported = false;
    const cancel = cancelledByEither(extra.signal, stopping.signal);
    const call = gate.run(isConcurrencySafe(tool), () =>
      toolbox.call(session, toolName, args ?? {}, {
        callId,
        signal: cancel.signal,
        onProgress: progressToken === undefined ? undefined : (event) => {
          if (reported || extra.signal.aborted) return;
          // Progress must grow with every notification, with or without a known fraction. A fraction that is no
          // number from 0 to 1 (a tool's NaN, Infinity, 2) counts as none: NaN went out as "progress": null, which a
          // client's schema refuses, and stayed NaN for every later notification of the call.
          const fraction = typeof event.fraction === "number" && event.fraction >= 0 && event.fraction <= 1
            ? event.fraction
            : undefined;
          const next = fraction === undefined ? progress + 1 : Math.max(fraction * 100, progress + 0.001);
          progress = next;
          void extra.sendNotification({
            method: "notifications/progress",
            params: {
              progressToken,
              progress: next,
              // Out of 100 while it is a share of the work; steps past it (unknown fractions) have no total.
              ...(fraction === undefined || next > 100 ? {} : { total: 100 }),
              message: event.message,
            },
          }).catch(() => {});
        },
      }), cancel.signal);
    running.add(call);
    const result = await call.finally(() => {
      reported = true;
      running.delete(call);
      requestOfCall.delete(callId);
      cancel.release();
    });
    // Past the cap of `_meta`, every change is kept as an artifact, as an output over its cap is.
    const changes = await wholeFileChanges(session, result);
    const structured = tool.output !== undefined && result.status === "success"
      ? await structuredOf(tool, result)
      : undefined;
    const content: CallToolResult["content"] = [{
      type: "text",
      text: structured && "error" in structured ? structured.error : toModelText(result),
    }];
    for (const ref of result.artifacts) {
      if (ref.sensitivity === "sensitive") continue;
      const uri = artifactUri(ref);
      // Versions are dates (YYYY-MM-DD): they compare as text.
      content.push(
        protocolVersion >= RESOURCE_LINKS_SINCE
          ? {
            type: "resource_link",
            uri,
            name: ref.id,
            mimeType: ref.mediaType,
            description: ref.summary,
            size: ref.byteLength,
          }
          : {
            type: "text",
            text: `Artifact ${uri} (${ref.mediaType}, ${ref.byteLength} bytes${
              ref.summary ? `: ${ref.summary}` : ""
            }), readable with resources/read.`,
          },
      );
    }
    for (const image of takeImagesOf(session, new Set([callId]))) {
      content.push({ type: "image", data: base64(image.data), mimeType: image.mediaType });
    }
    if (result.status === "cancelled" || result.status === "timed_out") {
      log("notice", { event: result.status, tool: toolName, callId, ...resultMeta(result, changes) });
    }
    resourcesChanged();
    const answer = {
      content,
      ...(structured && "structuredContent" in structured ? { structuredContent: structured.structuredContent } : {}),
      ...(result.status === "success" && !(structured && "error" in structured) ? {} : { isError: true }),
      _meta: { "toolfence/result": resultMeta(result, changes) },
    };
    rawToolCalls.keep(extra, answer);
    return answer;
  });
  const rawToolCalls = keepRawToolCalls(server);

  // With shared state, the store holds every replica's late results; this process's own are there once written.
  const lateResults = async () => {
    const local = session.lateResults.list();
    if (!shared) return local;
    const all = await shared.lateResults();
    const kept = new Set(all.map((late) => JSON.stringify(late)));
    return [...all, ...local.filter((late) => !kept.has(JSON.stringify(late)))];
  };

  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    refuseCursor(request);
    const refs = new Map(session.artifacts.list().map((ref) => [ref.id, ref]));
    for (const ref of await shared?.artifacts() ?? []) if (!refs.has(ref.id)) refs.set(ref.id, ref);
    const resources: { uri: string; name: string; description?: string; mimeType?: string; size?: number }[] = [
      ...refs.values(),
    ].filter((ref) => ref.sensitivity !== "sensitive").map((ref) => ({
      uri: artifactUri(ref),
      name: ref.id,
      description: ref.summary,
      mimeType: ref.mediaType,
      size: ref.byteLength,
    }));
    if ((await lateResults()).length > 0) {
      resources.push({
        uri: LATE_RESULTS_URI,
        name: "late-results",
        description: "What timed-out or cancelled calls of this session did once they settled",
        mimeType: "application/json",
      });
    }
    return { resources };
  });

  // The artifacts' URIs are a template of their own; clients that see the resources capability ask for templates.
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (request) => {
    refuseCursor(request);
    return {
      resourceTemplates: [
        {
          uriTemplate: "artifact://sha256/{sha256}",
          name: "artifact",
          description: "An artifact of this session by its SHA-256 (hex), e.g. the whole of a cut output",
        },
        ...(shared
          ? [{
            uriTemplate: `${CALLS_PREFIX}{requestId}`,
            name: "call",
            description: "The outcome of this session's call of that JSON-RPC request id, on whichever replica it ran",
            mimeType: "application/json",
          }]
          : []),
      ],
    };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const asJson = (value: unknown) => ({
      contents: [{ uri, mimeType: "application/json", text: JSON.stringify(value) }],
    });
    if (uri === LATE_RESULTS_URI) {
      const dropped = session.lateResults.dropped;
      return asJson({ lateResults: (await lateResults()).map(lateResultParams), ...(dropped > 0 ? { dropped } : {}) });
    }
    if (shared && uri.startsWith(CALLS_PREFIX)) {
      const requestId = decodedOrUndefined(uri.slice(CALLS_PREFIX.length));
      const call = requestId === undefined ? undefined : await shared.call(requestId);
      if (call) {
        return asJson({
          requestId: requestIdOf(call.requestId),
          tool: call.tool,
          state: call.state,
          answer: call.answer,
        });
      }
      throw new McpError(
        -32002,
        `Resource not found: ${echoed(uri)} (no call of this session had that id: it never ran)`,
        { uri: echoed(uri) },
      );
    }
    const hex = ARTIFACT_URI.exec(uri)?.[1];
    const local = hex ? session.artifacts.ref(`sha256:${hex}`) : undefined;
    const found = local
      ? { ref: local, bytes: await session.artifacts.get(local.id) }
      : hex
      ? await shared?.artifact(`sha256:${hex}`)
      : undefined;
    const ref = found?.ref;
    const bytes = ref && ref.sensitivity !== "sensitive" ? found.bytes : undefined;
    if (!ref || !bytes) {
      throw new McpError(-32002, `Resource not found: ${echoed(uri)}`, { uri: echoed(uri) });
    }
    return {
      contents: [
        ref.encoding === "utf-8"
          ? { uri, mimeType: ref.mediaType, text: new TextDecoder().decode(bytes) }
          : { uri, mimeType: ref.mediaType, blob: base64(bytes) },
      ],
    };
  });

  answerInvalidParams(server);
  answerUnknownMethods(server);
  ignoreTaskAugmentation(server);
  cancelFalsyIds(server);
  cancelInOrder(server);

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      try {
        await server.close();
      } finally {
        await session.close();
      }
    })();
    return closed;
  };
  server.onclose = () => void close();
  return { server, session, idle, cancelAll, close };
}
