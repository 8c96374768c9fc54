/**
 * Serving the MCP server over Streamable HTTP, for agents on other machines:
 * the SDK's web-standard transport on `Deno.serve` (or `node:http` under
 * Node), one toolfence session per MCP session, each owned by the tenant whose
 * token opened it.
 *
 * Every request passes, in order: the Host and Origin checks (DNS
 * rebinding), authentication (bearer tokens from a file, or JWTs of an OAuth
 * authorization server), the per-token rate limit, the body limit and the
 * JSON-RPC judgement of the stdio transport, the session's owner check (a
 * session id of another tenant is "not found", exactly as a guessed one), the
 * token's scopes for the tool called, and the per-session limit on calls in
 * flight. Each refusal is an HTTP status with a JSON-RPC error body that says
 * why.
 *
 * A session owns its toolfence session (grants, allowlist additions,
 * artifacts, background jobs) and its temp dir; `DELETE`, idle expiry and
 * shutdown end all of it.
 *
 * With a `store`, the server is one replica of a fleet (see docs/fleet.md):
 * sessions, the events of their streams, calls and their answers, and the
 * audit go to the shared store; a replica that gets a request for a session it
 * does not hold takes it over from the store, and a client resuming a stream
 * (`Last-Event-ID`) on any replica reads the answers sent on it, or, for a
 * call whose replica died, an answer saying so.
 *
 * @module
 */

import { mkdir, readdir } from "node:fs/promises";
import process from "node:process";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import type {
  EventStore,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import {
  type BeforeCallHook,
  type Host,
  type MemoryArtifactPool,
  MemoryArtifactStore,
  OPEN_FENCE,
  type Store,
  type StoredGrant,
  type StoredSession,
  type ToolBox,
  ToolError,
} from "@toolfence/core";
import {
  AuditLog,
  commandSandbox,
  FileHistory,
  folderRelation,
  type PolicyDecisionEvent,
  PolicyRules,
  policySettings,
  PolicyState,
  type Session,
  SYSTEM_READ_VIEW,
  Workspace,
} from "@toolfence/policy";
import {
  createMcpServer,
  MCP_CAPABILITIES,
  type McpServerOptions,
  type McpToolServer,
  type SharedSessionState,
} from "./server.ts";
import { DEFAULT_MAX_MESSAGE_BYTES } from "./line_transport.ts";
import { BATCH_PROTOCOL_VERSION, errorReply, type Frame, JSONRPC_ERRORS, shownId } from "./_jsonrpc_frame.ts";
import { describeIssues } from "./_param_errors.ts";
import { BodyBudgets, BodyLease, judgeBody, refusedBatch, TENANT_BODY_BUDGET_BODIES } from "./_http_body.ts";
import { type BatchPart, joinBatchAnswers } from "./_http_batch.ts";
import { BoundedEventStore, notingAnswers } from "./_http_event_store.ts";
import { countingUnread } from "./_http_unread.ts";
import { AdoptedArtifacts, OwnArtifacts } from "./_adopted_artifacts.ts";
import { FleetReplica, StoreEvents } from "./_http_fleet.ts";
import { requestKey } from "./_request_key.ts";
import { MAX_ID_CHARS } from "./_id_scan.ts";
import { unrefTimer } from "./_replica_liveness.ts";
import { type JwtVerifier, TokenRefused } from "./_http_jwt.ts";
import { type Handler, listen, type Listener, type RequestConnection } from "./_http_listen.ts";
import {
  corsOrigin,
  isLoopbackHost,
  isPreflight,
  originPolicy,
  preflightAnswer,
  refusedOrigin,
  withCors,
} from "./_http_origin.ts";
import { type Scope, scopeOf } from "./_http_scopes.ts";
import type { Identity, TokenFile } from "./_http_tokens.ts";
import { RateLimiter } from "./_http_rate.ts";
import { within } from "./_within.ts";
import { mcpHttpModule, mcpTypes } from "./_sdk.ts";

const {
  InitializeRequestSchema,
  isJSONRPCNotification,
  isJSONRPCRequest,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} = mcpTypes;

export { type Identity, TokenFile, tokenHash } from "./_http_tokens.ts";
export { type JwtOptions, JwtVerifier, tenantName } from "./_http_jwt.ts";
export { type Scope, SCOPES } from "./_http_scopes.ts";

/** Options of {@linkcode serveHttp}. */
export interface HttpServeOptions extends Omit<McpServerOptions, "workspace" | "protocolVersion"> {
  /** The address to listen on; default `127.0.0.1`. */
  hostname?: string;
  /** The port; 0 picks a free one. */
  port: number;
  /** The path of the MCP endpoint; default `/mcp`. */
  path?: string;
  /** The workspace folder of tenants that have none of their own. */
  workspace?: string;
  /** A folder holding one workspace folder per tenant (`<root>/<tenant>`, made on first use). */
  tenantRoot?: string;
  /** Where session temp dirs are made; default the system temp folder. */
  tempParent?: string;
  /** Bearer tokens from a file. */
  tokens?: TokenFile;
  /** OAuth resource-server mode: JWT access tokens. */
  jwt?: JwtVerifier;
  /** The issuer(s) named in the Protected Resource Metadata; default the verifier's issuer. */
  authorizationServers?: string[];
  /** This endpoint's public URL, for the Protected Resource Metadata; default `http://host:port/mcp`. */
  resourceUrl?: string;
  /** Allow serving with no authentication (loopback addresses only). */
  allowNoAuth?: boolean;
  /** A fresh server per request, no sessions (for plain load balancers). */
  stateless?: boolean;
  /** Extra Host values (`name` or `name:port`) to answer to, e.g. a reverse proxy's public name. */
  allowedHosts?: string[];
  /** Extra Origins allowed (`https://app.example.com`). */
  allowedOrigins?: string[];
  /** Host and Origin checks; default on. */
  dnsRebindingProtection?: boolean;
  /** The largest request body in bytes; default 64 MiB. */
  maxBodyBytes?: number;
  /** Tool calls one session may have in flight; default 16. */
  maxConcurrentCalls?: number;
  /** Tool calls one token may start per minute; default 600. */
  callsPerMinute?: number;
  /**
   * Bytes of answers one tenant's clients may leave unread at once; default
   * 128 MiB. An answer that would go over ends its response and connection
   * (the client may resume the stream); a tenant holding none always gets one.
   */
  maxUnreadBytes?: number;
  /** Sessions one tenant may hold open; default 32. */
  maxSessionsPerTenant?: number;
  /** A session with no request for this long is ended (its jobs killed); default 30 minutes. */
  idleTimeoutMs?: number;
  /** How long calls in flight may take to finish on shutdown before they are cancelled; default 10 s. */
  drainMs?: number;
  /**
   * Connections held at once, all addresses; default 1024. At the cap a new
   * connection closes the oldest one still waiting for a request head.
   */
  maxConnections?: number;
  /**
   * Connections one remote address (an IPv6 one by its /64) may hold at once
   * before a tenant's request claims them; default 256.
   */
  maxConnectionsPerAddress?: number;
  /** Connections one tenant may hold at once, those that carried its requests; default 256. */
  maxConnectionsPerTenant?: number;
  /** How long a connection has to send a request's head, from its opening or its last response's end; default 10 s. */
  headersTimeoutMs?: number;
  /** How long a request has to send its body, from the end of its head; default 60 s. */
  bodyTimeoutMs?: number;
  /**
   * `deno`: serve with `Deno.serve`, which has none of the connection limits
   * above (for a listener behind a reverse proxy that has them); default
   * `node` (node:http under Deno too).
   */
  platform?: "deno" | "node";
  /**
   * The host of a tenant's sessions, given the session's elicitation host and
   * its MCP session id (e.g. the web console's `consoleHost`); default `host`,
   * else elicitation.
   */
  hostFor?: (tenant: string, elicitation: Host, session: string) => Host;
  /**
   * Saves a person's "allow from now on" of a command to the policy file
   * every tenant's sessions read (see `McpServerOptions.saveRule`). Used as
   * given only while the server serves one tenant: with `jwt`, a `tenantRoot`
   * or a token file naming several tenants, the answer is saved as the
   * tenant's grant in the `store` alone, and is not offered without one.
   */
  saveRule?: McpServerOptions["saveRule"];
  /**
   * Let the commands of a server of several tenants run without a working OS
   * sandbox, where each tenant's commands can read and change every other
   * tenant's workspace, temp dirs and jobs (tenants that trust one another,
   * tests). Default false: there, the tools that run programs refuse, saying
   * why.
   */
  allowUnsandboxedTenants?: boolean;
  /**
   * The memory the sessions' artifact stores share (whole outputs, images); default
   * `SERVER_ARTIFACT_POOL` (`@toolfence/core`), 2 GiB shared by every memory store of the process. Each session's
   * store (and its file history's before-images) counts in it as its tenant's: past it, the tenant holding the most
   * gives up its oldest first.
   */
  artifactPool?: MemoryArtifactPool;
  /** The store shared with the fleet's other replicas (see {@linkcode openStore}); default none (this process only). */
  store?: Store;
  /** This replica's name in the store; default a random one. */
  replicaId?: string;
}

/** A server serving over HTTP. */
export interface HttpServer {
  /** The MCP endpoint's URL on the address listened on. */
  readonly url: URL;
  /** The port listened on. */
  readonly port: number;
  /** Open sessions (for tests and /healthz). */
  readonly sessionCount: () => number;
  /** Resolves once the server has shut down. */
  readonly closed: Promise<void>;
  /**
   * Stops accepting requests, lets calls in flight finish (up to `drainMs`),
   * cancels the rest, ends every session (killing jobs, removing temp dirs)
   * and closes the listener.
   */
  shutdown(reason?: string): Promise<void>;
}

// An initialize being served: the session it opens, once made, and (in a fleet) once the store holds it.
interface Opening {
  open?: OpenSession;
  stored?: boolean;
}

interface OpenSession {
  id?: string;
  identity: Identity;
  transport: WebStandardStreamableHTTPServerTransport;
  served: McpToolServer;
  workspace: Workspace;
  /**
   * The requests in flight, by id (as a string: `1` and `"1"` are one id here,
   * since the call ids made of them would be), each marked whether it is a tool
   * call (the limit counts calls, and an id in flight cannot be used again),
   * with the id as the request spelled it (the SDK cancels by the exact id).
   */
  inflight: Map<string, { kind: "call" | "other"; id: RequestId; lease?: BodyLease }>;
  /** Frees the slot of a request that was answered or cancelled. */
  release(id: RequestId): void;
  /** Resolves once every call of the session has been answered (the answer handed to the transport). */
  answered(): Promise<void>;
  lastActive: number;
  ended?: Promise<void>;
  /** With a store: the session's events there. */
  events?: StoreEvents;
  /** With a store: the calls recorded there and not yet answered, by request id. */
  recorded: Set<string>;
  /** With a store: audit records on their way there (a call is answered once its records are kept). */
  auditWrites: Set<Promise<unknown>>;
  /** With a store: the ids of the session's artifacts kept there. */
  sharedArtifacts: Set<string>;
  /** With a store: the grants (see grantKey) the session took from there, and had not of its own. */
  storeGrants: Set<string>;
  /** Where the session's stream events are kept (to find a resumed event's stream). */
  eventStore: EventStore;
  /** The streams ended because their request was cancelled, oldest first: a resumption of one is told it is over. */
  cancelledStreams: Set<string>;
  /** The streams whose request was answered, oldest first: a resumption after the answer is told it is over. */
  answeredStreams: Set<string>;
  /** The protocol version its initialize settled on (none for a stateless server's request). */
  protocolVersion?: string;
  /** When the latest token shown for the session stops counting (a JWT's `exp`); none: never. */
  tokenUntil?: number;
  /** Ends the session at `tokenUntil`. */
  tokenTimer?: ReturnType<typeof setTimeout>;
}

// The version the SDK's server answers an initialize with: the client's, when supported, else the latest.
function negotiatedVersion(initialize: unknown): string | undefined {
  const asked = (initialize as { params?: { protocolVersion?: unknown } } | undefined)?.params?.protocolVersion;
  if (asked === undefined) return undefined;
  return typeof asked === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
}

const grantKey = (grant: Pick<StoredGrant, "kind" | "subject">) => `${grant.kind}\0${grant.subject}`;
const splitGrantKey = (key: string) => {
  const cut = key.indexOf("\0");
  return [key.slice(0, cut), key.slice(cut + 1)] as const;
};

const CANCEL_GRACE_MS = 3_000;
/**
 * The request bodies one tenant's clients may be sending at once; past it a POST is refused (429) before its body is
 * read. A connection whose body is still coming is being served, and is never closed to make room for another (see
 * _http_connections.ts): one tenant's valid token, on 1,024 connections from four addresses each sending a body's
 * first bytes, held every connection the server takes, and another tenant's initialize was refused, for the 60 s of
 * the body deadline and again after. A client's bodies arrive in milliseconds; 64 at once is many sessions' worth.
 */
const MAX_BODIES_READING = 64;
/** The default of {@linkcode HttpServeOptions.maxUnreadBytes}. */
const DEFAULT_MAX_UNREAD_BYTES = 128 * 1024 * 1024;
/**
 * The largest initialize (its params as JSON, in characters). A session keeps what its client declared (the SDK
 * its capabilities and name, a fleet's store the whole initialize) for as long as it lives: initializes of 50 MiB,
 * within the body limit, each held its session's 50 MiB while it stayed open, 32 sessions a tenant. A client's
 * capabilities and name take a few KiB.
 */
const MAX_INITIALIZE_CHARS = 256 * 1024;
/** How many cancelled (or answered) streams a session remembers, to tell a client resuming one that it is over. */
const CANCELLED_STREAMS_KEPT = 256;

/** Adds `streamId` to `streams`, keeping the newest CANCELLED_STREAMS_KEPT. */
function remember(streams: Set<string>, streamId: string): void {
  streams.delete(streamId);
  streams.add(streamId);
  if (streams.size > CANCELLED_STREAMS_KEPT) streams.delete(streams.values().next().value!);
}
/**
 * The answer to a resumption of one of `streams` (at `lastEventId`), a stream with nothing more to say: 204, which
 * tells an SSE client to stop reconnecting; undefined for any other stream.
 */
async function streamOver(open: OpenSession, lastEventId: string, streams: Set<string>): Promise<Response | undefined> {
  if (streams.size === 0) return undefined;
  const streamId = await open.eventStore.getStreamIdForEventId?.(lastEventId);
  if (streamId === undefined || !streams.has(streamId)) return undefined;
  return new Response(null, { status: 204, headers: { "mcp-session-id": open.id! } });
}
/** The code of a "Session not found" (404), the SDK's transport's. */
const SESSION_NOT_FOUND = -32001;
const EXPIRED = "the session expired";
const REVOKED = "the token that opened the session was removed from the token file, or lost a scope it held";
const TOKEN_EXPIRED = "the session's access token expired; open a new session with a fresh token";
/** The longest delay a timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Why a replica's copy of a session ends when the session was ended on another (see endedElsewhere). */
const ENDED_ELSEWHERE = "the session was ended on another replica";
/** The reason of a fleet replica's shutdown, which leaves its sessions open in the store. */
const SHUTDOWN = "this replica is shutting down; the session goes on on another";
const DEFAULT_PATH = "/mcp";
/** The protocol version from which the SDK's transport sends a stream's priming event (an id to resume from). */
const PRIMED_SINCE = "2025-11-25";

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function refusal(status: number, message: string, id: string | number | null = null, headers = {}): Response {
  return json(status, errorReply(id, -32000, message), headers);
}

/** Whether `identity` holds every one of `scopes`. */
function holdsScopes(identity: Identity, scopes: readonly Scope[]): boolean {
  return scopes.every((scope) => identity.scopes.includes(scope));
}

function bearer(request: Request): string | undefined {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer[ ]+([^\s]+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/**
 * Serves a toolbox over MCP Streamable HTTP and resolves once listening.
 * Refuses to start on a non-loopback address without authentication.
 *
 * Requires `--allow-net` for the address, plus whatever the tools need.
 *
 * @example
 * ```ts ignore
 * import { ToolBox } from "@toolfence/toolfence";
 * import "@toolfence/tools";
 * import { serveHttp, TokenFile } from "@toolfence/adapters/mcp";
 * const server = await serveHttp(new ToolBox().withDefaults("fs", "search"), {
 *   port: 8765,
 *   workspace: Deno.cwd(),
 *   tokens: await TokenFile.open("tokens.json"),
 * });
 * Deno.addSignalListener("SIGTERM", () => void server.shutdown("SIGTERM"));
 * await server.closed;
 * ```
 */
export async function serveHttp(toolbox: ToolBox, options: HttpServeOptions): Promise<HttpServer> {
  const hostname = options.hostname ?? "127.0.0.1";
  const authenticated = options.tokens !== undefined || options.jwt !== undefined;
  if (!authenticated && !isLoopbackHost(hostname)) {
    throw new Error(
      `Refusing to serve on ${hostname} without authentication: give --token-file or --oauth-issuer (or listen on 127.0.0.1)`,
    );
  }
  if (!authenticated && !options.allowNoAuth) {
    throw new Error(
      "Serving over HTTP needs authentication (--token-file or --oauth-issuer), or --no-auth on loopback",
    );
  }
  if (options.tokens && options.jwt) throw new Error("Give either a token file or an OAuth issuer, not both");
  if (options.workspace === undefined && options.tenantRoot === undefined) {
    throw new Error("Serving over HTTP needs a workspace or a tenant root");
  }
  const path = options.path ?? DEFAULT_PATH;
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const maxInflight = options.maxConcurrentCalls ?? 16;
  const maxSessions = options.maxSessionsPerTenant ?? 32;
  const idleMs = options.idleTimeoutMs ?? 30 * 60_000;
  const drainMs = options.drainMs ?? 10_000;
  const rate = new RateLimiter(options.callsPerMinute ?? 600, 60_000);
  // The bodies each tenant's requests hold while they are read (see TENANT_BODY_BUDGET_BODIES).
  const bodyBudgets = new BodyBudgets(TENANT_BODY_BUDGET_BODIES * maxBody);
  const unreadBudgets = new BodyBudgets(options.maxUnreadBytes ?? DEFAULT_MAX_UNREAD_BYTES);
  // The request bodies each tenant's clients are sending now.
  const bodiesReading = new Map<string, number>();
  const {
    hostname: _h,
    port: _p,
    path: _path,
    workspace: defaultWorkspace,
    tenantRoot,
    tempParent,
    tokens,
    jwt,
    authorizationServers,
    resourceUrl: _r,
    allowNoAuth: _a,
    stateless,
    allowedHosts,
    allowedOrigins,
    dnsRebindingProtection,
    maxBodyBytes: _m,
    maxConcurrentCalls: _c,
    callsPerMinute: _cpm,
    maxSessionsPerTenant: _s,
    maxUnreadBytes: _u,
    idleTimeoutMs: _i,
    drainMs: _d,
    maxConnections,
    maxConnectionsPerAddress,
    maxConnectionsPerTenant,
    headersTimeoutMs,
    bodyTimeoutMs,
    platform,
    hostFor,
    store,
    replicaId,
    allowUnsandboxedTenants,
    artifactPool,
    // Given to a session only as saveRuleOf decides.
    saveRule: fileSaveRule,
    ...serverOptions
  } = options;
  // The token file is denied to every tool (and masked in every sandbox that would show it): a tenant's
  // command must not read the other tenants' entries.
  if (tokens) {
    serverOptions.rules = (serverOptions.rules ?? PolicyRules.empty(defaultWorkspace ?? tenantRoot!))
      .denyingFiles([{ path: tokens.path }]);
  }
  const fleet = store && !stateless ? new FleetReplica(store, replicaId ?? crypto.randomUUID(), toolbox) : undefined;
  await fleet?.start();
  // The take-overs under way, by tenant and session id.
  const adopting = new Map<string, Promise<OpenSession | undefined>>();
  const report = (error: unknown) => process.stderr.write(`toolfence: the store: ${(error as Error)?.message}\n`);

  const sessions = new Map<string, OpenSession>();
  const transient = new Set<OpenSession>();
  // A stateless server's requests being served, per tenant (see the cap in handleMessage).
  const transientOf = new Map<string, number>();
  // The initializes of each tenant being served, in the order they began (see the cap on sessions).
  const opening = new Map<string, Set<Opening>>();
  let draining = false;
  let resourceUrl = options.resourceUrl ?? "";
  let policy = originPolicy(hostname, options.port, allowedHosts, allowedOrigins);
  const metadataUrl = () =>
    new URL("/.well-known/oauth-protected-resource" + new URL(resourceUrl).pathname, resourceUrl);

  const anonymous: Identity = {
    tenant: "local",
    scopes: ["tools:read", "tools:write", "tools:commands"],
    key: "local",
  };

  async function workspaceOf(identity: Identity): Promise<string> {
    if (identity.workspace !== undefined) return await apart(identity.tenant, identity.workspace);
    if (tenantRoot !== undefined) {
      const dir = join(tenantRoot, identity.tenant);
      // Before the folder is made (a tenant refused must not make one that refuses the other), and after (two made at
      // once: on a file system that ignores case, the second's mkdir found the first's folder).
      await apartInCase(identity.tenant, tenantRoot);
      await mkdir(dir, { recursive: false }).catch((error) => {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      });
      await apartInCase(identity.tenant, tenantRoot);
      return await apart(identity.tenant, dir);
    }
    return await apart(identity.tenant, defaultWorkspace!);
  }

  // A tenant's workspace must not hold another tenant's, nor lie in one: the tools and the sandbox confine a
  // session to its workspace, and all that lies in it is the session's. Before, a token file giving alice /srv/w
  // and bob /srv/w/bob had alice's read_file print bob's files. The same folder for two tenants is a workspace they
  // share (as the shared --workspace is), said so by the operator; the tenant root may lie in none (see also
  // apartFromTemp).
  async function apart(tenant: string, workspace: string): Promise<string> {
    const others: { what: string; folder: string; shared?: boolean; named?: boolean }[] = [];
    const placements = await tokens?.placements();
    for (const entry of placements ?? []) {
      if (entry.tenant !== tenant && entry.workspace !== undefined) {
        others.push({ what: `the workspace of another tenant`, folder: entry.workspace });
      }
    }
    // Every sandbox shows the system folders and the policy's `sandbox.read` read-only: a tenant's own folder there
    // lies open to the other tenants' commands (with the tenant root under /usr/local, alice's sandboxed
    // `cat ../bob/secret.txt` printed bob's file).
    if (workspace !== defaultWorkspace && (await serving()).many) {
      const settings = policySettings(serverOptions.rules ?? PolicyRules.empty(workspace));
      for (const folder of [...SYSTEM_READ_VIEW, ...settings.sandboxRead]) {
        others.push({ what: "a folder every tenant's commands see", folder, shared: false, named: true });
      }
    }
    if (tenantRoot !== undefined) {
      others.push({ what: "the tenant root", folder: tenantRoot, shared: false });
    } else if (defaultWorkspace !== undefined && (!placements || placements.some((entry) => !entry.workspace))) {
      // The shared workspace, where some tenant works in it.
      others.push({ what: "the shared workspace", folder: defaultWorkspace });
    }
    for (const other of others) {
      const relation = folderRelation(workspace, other.folder);
      if (relation === undefined || (relation === "same" && other.shared !== false)) continue;
      // A tenant's own folder under the tenant root, or a folder in it, holds no other tenant's.
      if (other.folder === tenantRoot && relation === "inside") {
        const own = folderRelation(workspace, join(tenantRoot, tenant));
        if (own === "same" || own === "inside") continue;
      }
      // Another tenant's folder is not named: where it lies is none of this tenant's business.
      const shown = other.named || other.folder === tenantRoot || other.folder === defaultWorkspace
        ? ` (${other.folder})`
        : "";
      throw new Error(
        `the workspace of tenant ${tenant} (${workspace}) ${
          relation === "inside" ? "lies in" : relation === "same" ? "is" : "holds"
        } ${other.what}${shown}; tenants' workspaces must lie apart, and no session of ${tenant} opens until ` +
          "the server's operator gives it a folder of its own",
      );
    }
    return workspace;
  }

  // Tenant names that differ only in case (alice, Alice: a token file's or a JWT subject's) name one folder under the
  // tenant root on a file system that ignores case (macOS, Windows, a casefold folder): before, Alice's session opened
  // in alice's folder. Whatever the file system, a tenant whose folder name differs only in case from one already in
  // the tenant root opens no session; the folder's own tenant keeps it. The names are ASCII (tenantName, TokenFile).
  async function apartInCase(tenant: string, root: string): Promise<void> {
    const folded = tenant.toLowerCase();
    const entries = await readdir(root);
    if (!entries.some((name) => name !== tenant && name.toLowerCase() === folded)) return;
    throw new Error(
      `the folder of tenant ${tenant} under the tenant root (${root}) differs only in case from another tenant's, ` +
        "one folder on a file system that ignores case; no session of " + tenant + " opens until the server's " +
        "operator names the tenants apart by more than case",
    );
  }

  // On a server of several tenants, the folder of the session temp dirs (every tenant's temp dir, with its
  // commands' outputs) may lie in no workspace, where the tools would reach them as the workspace's.
  async function apartFromTemp(tenant: string, workspace: Workspace): Promise<void> {
    const relation = folderRelation(workspace.workdir, workspace.tempParent);
    if ((relation !== "same" && relation !== "around") || !(await serving()).many) return;
    await workspace.dispose();
    throw new Error(
      `the workspace of tenant ${tenant} (${workspace.workdir}) ${
        relation === "same" ? "is" : "holds"
      } the folder of the session temp dirs (${workspace.tempParent}), which holds the other tenants' temp dirs; ` +
        "the server's operator must make them elsewhere",
    );
  }

  // RFC 6750's challenge; it names the protected resource metadata (RFC 9728) only where it is served, under OAuth: a
  // client that follows the link of a token-file server would read a 404 and go looking for an authorization server.
  const challengeStart = () => jwt ? `Bearer resource_metadata="${metadataUrl()}"` : `Bearer realm="toolfence"`;

  function challenge(status: 401 | 403, message: string, error?: string, scope?: string): Response {
    const parts = [challengeStart()];
    if (error) parts.push(`error="${error}"`, `error_description="${message.replace(/["\\]/g, "")}"`);
    if (scope) parts.push(`scope="${scope}"`);
    return refusal(status, `${status === 401 ? "Unauthorized" : "Forbidden"}: ${message}`, null, {
      "www-authenticate": parts.join(", "),
    });
  }

  async function authenticate(request: Request): Promise<Identity | Response> {
    if (!tokens && !jwt) return anonymous;
    const token = bearer(request);
    if (token === undefined) {
      return challenge(401, "this server needs a bearer token (Authorization: Bearer <token>)");
    }
    if (tokens) {
      const identity = await tokens.identify(token);
      return identity ?? challenge(401, "the token is not valid", "invalid_token");
    }
    try {
      return await jwt!.identify(token);
    } catch (error) {
      if (error instanceof TokenRefused) {
        return error.oauthError === "insufficient_scope"
          ? challenge(403, error.message, "insufficient_scope", "tools:read tools:write tools:commands")
          : challenge(401, error.message, "invalid_token");
      }
      throw error;
    }
  }

  // A stateless server's session lasts one request: a tool that builds on what its session keeps (a job, a page, an
  // artifact) would start a job killed with the answer, or name one gone at the next call; it is not offered.
  function toolboxFor(scopes: readonly Scope[]): ToolBox {
    const box = toolbox.clone();
    // Every tool its session could list, by the capabilities the session will have and whatever its fence: box.list()
    // alone left out a tool requiring vision (browser_screenshot, which starts a browser) and so never hid it from a
    // tools:read token, whose sessions, which have vision, listed it and ran it.
    const hidden = box.list({ capabilities: serverOptions.capabilities ?? MCP_CAPABILITIES, fence: OPEN_FENCE })
      .filter((tool) => !scopes.includes(scopeOf(tool)) || (stateless && tool.sessionState))
      .map((tool) => tool.name);
    if (hidden.length > 0) box.disable(...hidden);
    return box;
  }

  // With a store, each session's calls and decisions are audited there too, with its tenant and MCP session.
  function storeAudit(open: OpenSession, box: ToolBox, identity: Identity, id: string) {
    const audit = new AuditLog({
      onRecord: (record) => {
        const write = fleet!.store.appendAudit(identity.tenant, {
          ...record,
          tenant: identity.tenant,
          mcpSession: id,
          replica: fleet!.id,
        }).catch(report);
        open.auditWrites.add(write);
        void write.finally(() => open.auditWrites.delete(write));
      },
    }).attach(box);
    const fileDecision = serverOptions.onDecision;
    return (session: Session, event: PolicyDecisionEvent) => {
      fileDecision?.(session, event);
      audit.decision(session, event);
    };
  }

  // Whether the server can serve more than one tenant: with OAuth or a tenant root it can, with a token file once
  // the file names a second tenant (it is read again when it changes).
  async function serving(): Promise<{ many: boolean; why: string }> {
    if (jwt) return { many: true, why: "its tenants come from OAuth tokens" };
    if (tenantRoot !== undefined) return { many: true, why: `it gives tenants their folders under ${tenantRoot}` };
    const named = tokens ? await tokens.tenants() : [];
    // Said to tenants (in refusals): how many others there are is none of their business, only that there are.
    return { many: named.length > 1, why: "its token file names more than one tenant" };
  }

  // Where a person's "allow from now on" goes, decided as a session opens. Every tenant's sessions read the policy
  // files: on a server of several tenants one tenant's rule saved there applied to the others (after a restart, on
  // a replica that starts). There it is saved as the tenant's grant in the fleet's store alone, which only that
  // tenant's sessions read, and without a store it is not offered. A server of one tenant saves to the file as
  // the policy's `answers.save` says, and to the store too, where every replica's sessions read it; it refuses to
  // once a second tenant has come into its token file since the session opened.
  async function saveRuleOf(identity: Identity, id: string): Promise<McpServerOptions["saveRule"]> {
    const file = fileSaveRule;
    if (file === undefined) return undefined;
    const saveGrant = (pattern: string) =>
      fleet!.store.saveGrant({
        tenant: identity.tenant,
        kind: "command",
        subject: pattern,
        data: { replica: fleet!.id, mcpSession: id },
        savedAt: Date.now(),
      });
    if ((await serving()).many) {
      return fleet ? { where: `the fleet's store, for ${identity.tenant} only`, save: saveGrant } : undefined;
    }
    return {
      where: fleet ? `${file.where} and the fleet's store` : file.where,
      save: async (pattern) => {
        const now = await serving();
        if (now.many) {
          throw new Error(
            `this server now serves more than one tenant (${now.why}), and ${file.where} is read by every ` +
              `tenant's sessions; allow it this time only, or have the server's operator add the rule`,
          );
        }
        await file.save(pattern);
        if (fleet) await saveGrant(pattern);
      },
    };
  }

  // A session's state that another replica may need: what it reads of the store (SharedSessionState) ...
  function sharedState(identity: Identity, id: string): SharedSessionState {
    const { store } = fleet!;
    return {
      artifact: (artifactId) => store.artifact(identity.tenant, id, artifactId),
      artifacts: () => store.artifacts(identity.tenant, id),
      lateResults: () => store.lateResults(identity.tenant, id),
      // A call still running on a replica that is gone is ended first, so that the client reads how it ended.
      call: async (requestId) => {
        const call = await store.call(identity.tenant, id, requestId);
        if (call?.state !== "running" || (await fleet!.settle([call])).length > 0) return call;
        return await store.call(identity.tenant, id, requestId);
      },
    };
  }

  // ... and what it writes there: each new artifact (but a sensitive one, which never leaves its replica), before
  // the answer that links to it is sent.
  async function shareArtifacts(open: OpenSession): Promise<void> {
    const artifacts = open.served.session.artifacts;
    for (const ref of artifacts.list()) {
      if (open.sharedArtifacts.has(ref.id) || ref.sensitivity === "sensitive") continue;
      const bytes = await artifacts.get(ref.id);
      if (!bytes) continue;
      await fleet!.store.putArtifact(open.identity.tenant, open.id!, ref, bytes);
      open.sharedArtifacts.add(ref.id);
    }
  }

  // The tenant's saved grants apply to a call however recently another replica saved them, and stop applying
  // once revoked there: the session drops what it took from the store that the store no longer holds (what the
  // session's own person granted stays). A store that cannot be read counts as holding none (never wider).
  async function applyGrants(open: OpenSession): Promise<void> {
    const state = open.served.session.state;
    const grants = await fleet!.store.grants(open.identity.tenant).catch((error) => {
      report(error);
      return [];
    });
    const held = new Set(grants.map(grantKey));
    for (const key of open.storeGrants) {
      if (held.has(key)) continue;
      const [kind, subject] = splitGrantKey(key);
      if (kind === "command") state.removeCommand(subject);
      else state.revokeWrite(subject);
      open.storeGrants.delete(key);
    }
    for (const grant of grants) {
      if (open.storeGrants.has(grantKey(grant))) continue;
      const before = state.commandAllowlist().length + state.writeGrants().length;
      if (grant.kind === "command") state.addCommand(grant.subject);
      else if (grant.kind === "write") state.grantWrite(grant.subject);
      if (state.commandAllowlist().length + state.writeGrants().length > before) open.storeGrants.add(grantKey(grant));
    }
  }

  // Tenants apart without the OS sandbox. A command the sandbox does not confine runs with the server's own access
  // to files: the policy judges the paths a command names (one outside the workspace asks), but a path only the
  // run knows (`cat $(cat list)`, `cd ..`, a link made by the command, an interpreter's code) it cannot judge, and
  // the person who would answer is the tenant's own, so no rule or question keeps one tenant's commands out of
  // another's workspace, temp dirs and jobs. On a server that can serve several tenants (as serving() decides,
  // looked at for each call: a token file is read again when it changes), the tools that run programs refuse
  // unless the sandbox works, whatever the session's scopes and rules (see docs/http.md, "Tenants apart").
  const mode = serverOptions.sandbox ?? "auto";
  const tenantsApartWithoutSandbox: BeforeCallHook = async ({ toolName }) => {
    if (allowUnsandboxedTenants) return;
    const tool = toolbox.get(toolName);
    if (tool === undefined || scopeOf(tool) !== "tools:commands") return;
    const tenants = await serving();
    if (!tenants.many) return;
    const sandbox = await commandSandbox(mode);
    if (sandbox.available) return;
    throw new ToolError(
      `${toolName} is refused: this server serves several tenants (${tenants.why}) and the OS sandbox that keeps ` +
        `one tenant's programs out of the others' files is not working (${
          sandbox.reason ?? "no reason given"
        }); without it a program runs with the server's own access to every tenant's workspace`,
      {
        code: "permission_denied",
        kind: "policy",
        recoveryHint: "Use the file tools, which keep to the workspace; the server's operator can serve tenants " +
          "with --sandbox required on a host where bubblewrap runs, or one tenant per server.",
        details: { reason: "tenants_apart", sandbox: mode },
      },
    );
  };

  // Tenants apart from the server's host. A browser page or a sandboxed command's connection to an address of the
  // server's machine or its network (loopback, link-local such as a cloud's metadata service, private) is asked
  // about, and on a server of several tenants the one asked is the tenant's own person (or client), who has no say
  // over the host's services: a tenant's "allow" let its browser read a service listening on the server's loopback.
  // There such a question is refused without asking; the operator allows a destination by naming its address in
  // network.allow, which the judge applies before it would ask.
  function offHostNetworks(host: Host): Host {
    const choose: Host["choose"] = async (request, signal) => {
      const destination = request.about?.destination;
      if (destination?.inside !== undefined) {
        const tenants = await serving();
        if (tenants.many) {
          throw new ToolError(
            `it is an address of the server's machine or its network, and this server serves several tenants ` +
              `(${tenants.why}), whose people cannot allow what lies inside the server's host; its operator can, ` +
              "by naming the address in the policy's network.allow",
            {
              code: "url_not_allowed",
              kind: "policy",
              status: "skipped",
              recoverable: false,
              recoveryHint: "Use a public address; the server's operator can allow this one by naming its " +
                "address in the policy's network.allow.",
              details: { origin: destination.origin, class: destination.inside, reason: "tenants_apart" },
            },
          );
        }
      }
      return await host.choose(request, signal);
    };
    // The host itself in every other respect (a console host's tenant, which the audit reads, included).
    return new Proxy(host, {
      get: (target, key) => {
        if (key === "choose") return choose;
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  async function openSession(
    identity: Identity,
    request: Request,
    initialize?: JSONRPCMessage,
    adopted?: StoredSession,
  ): Promise<OpenSession> {
    const id = adopted?.id ?? crypto.randomUUID();
    // The other tenants' folders are closed to this one's paths (the tenant root, the workspaces the token file names).
    const closedFolders = [
      ...(tenantRoot === undefined ? [] : [tenantRoot]),
      ...((await tokens?.placements()) ?? []).flatMap((entry) =>
        entry.tenant !== identity.tenant && entry.workspace !== undefined ? [entry.workspace] : []
      ),
    ];
    const workspace = new Workspace(await workspaceOf(identity), { tempParent, closedFolders });
    await apartFromTemp(identity.tenant, workspace);
    const given = hostFor ? (elicitation: Host) => hostFor(identity.tenant, elicitation, id) : serverOptions.host;
    const host = (elicitation: Host) =>
      offHostNetworks(typeof given === "object" ? given : given ? given(elicitation) : elicitation);
    // What the options give every session is each session's own: an artifact store is seen through the artifacts
    // the session put there, a policy state is copied. Given as they are, every session of every tenant listed and
    // read the others' artifacts and took the grants their people gave.
    // A memory store counts in its pool as its tenant's: past the pool, the tenant that holds the most gives up first
    // (a tenant's 32 sessions each holding a little less than another tenant's one pushed out all of that one's).
    const inPool = { owner: identity.tenant, ...(artifactPool ? { pool: artifactPool } : {}) };
    const own = serverOptions.artifacts ? new OwnArtifacts(serverOptions.artifacts) : new MemoryArtifactStore(inPool);
    const state = serverOptions.state instanceof PolicyState ? serverOptions.state.clone() : serverOptions.state;
    // The file history's before-images, kept in memory, count in the pool as the tenant's too: else a tenant's
    // write_file over its own files put 256 MiB a session in the pool outside its share.
    const history = serverOptions.history instanceof FileHistory || serverOptions.history?.dir !== undefined
      ? serverOptions.history
      : { ...serverOptions.history, images: inPool };
    // A session taken over brings the artifacts it made on its earlier replica (kept in the store).
    const kept = adopted ? await fleet!.store.artifacts(identity.tenant, id) : [];
    const artifacts = adopted
      ? new AdoptedArtifacts(own, kept, (artifactId) => fleet!.store.artifact(identity.tenant, id, artifactId))
      : own;
    const open = {
      recorded: new Set(),
      auditWrites: new Set(),
      sharedArtifacts: new Set(kept.map((ref) => ref.id)),
      storeGrants: new Set(),
    } as unknown as OpenSession;
    const box = toolboxFor(identity.scopes);
    const onDecision = fleet ? storeAudit(open, box, identity, id) : serverOptions.onDecision;
    const saveRule = await saveRuleOf(identity, id);
    const served = createMcpServer(box, {
      ...serverOptions,
      // A stateless server's fresh server never sees an initialize: it speaks the request's version, which a client
      // of 2025-03-26 does not send (the header came in 2025-06-18), and the specification then has it assume that one.
      ...(stateless ? { protocolVersion: request.headers.get("mcp-protocol-version") ?? BATCH_PROTOCOL_VERSION } : {}),
      host,
      ...(onDecision ? { onDecision } : {}),
      ...(saveRule ? { saveRule } : {}),
      ...(fleet ? { shared: sharedState(identity, id) } : {}),
      artifacts,
      ...(state ? { state } : {}),
      history,
      workspace,
    });
    served.session.hooks.before.push(tenantsApartWithoutSandbox);
    if (fleet) {
      served.session.lateResults.onLateResult((late) =>
        void fleet.store.recordLateResult(identity.tenant, id, late).catch(report)
      );
    }
    open.events = fleet &&
      new StoreEvents(fleet.store, id, (key, answer) => fleet.finishCall(identity.tenant, id, key, answer));
    open.cancelledStreams = new Set();
    open.answeredStreams = new Set();
    open.eventStore = notingAnswers(
      open.events ?? new BoundedEventStore(),
      (streamId) => remember(open.answeredStreams, streamId),
    );
    open.protocolVersion = negotiatedVersion(initialize ?? adopted?.data.initialize);
    const transport = new mcpHttpModule.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: stateless ? undefined : () => id,
      eventStore: stateless ? undefined : open.eventStore,
      // The checks run before the transport; its own would only repeat them.
      enableDnsRebindingProtection: false,
      maxRequestBodySize: maxBody,
      onsessioninitialized: async (id) => {
        open.id = id;
        sessions.set(id, open);
        if (fleet && !adopted) {
          const now = Date.now();
          await fleet.store.createSession({
            id,
            tenant: identity.tenant,
            generation: 0,
            owner: fleet.id,
            createdAt: now,
            lastActive: now,
            endedAt: null,
            // The opening token's key (see Identity.key; never the token) and scopes: another replica hands the
            // session to that token alone (one that holds those scopes), as this one does (sameOwner).
            data: { initialize, key: identity.key, scopes: identity.scopes },
          });
        }
      },
      onsessionclosed: () => void endSession(open, "the client ended the session"),
    });
    let waiters: (() => void)[] = [];
    const answered = () =>
      open.inflight.size === 0 ? Promise.resolve() : new Promise<void>((done) => waiters.push(done));
    Object.assign(open, {
      identity,
      transport,
      served,
      workspace,
      inflight: new Map(),
      answered,
      lastActive: Date.now(),
    });
    keepWhileTokenCounts(open, identity);
    // A response leaving ends that request's slot; so does its cancellation (a cancelled request gets no answer).
    open.release = (id) => {
      const entry = open.inflight.get(String(id));
      if (!open.inflight.delete(String(id))) return;
      // The request's body stops counting against its tenant's budget once it is answered (or cancelled).
      entry?.lease?.drop();
      if (open.inflight.size === 0) {
        const ready = waiters;
        waiters = [];
        for (const done of ready) done();
      }
    };
    const send = transport.send.bind(transport);
    transport.send = async (message: JSONRPCMessage, sendOptions) => {
      const isAnswer = "id" in message && ("result" in message || "error" in message);
      const key = isAnswer && message.id != null ? requestKey(message.id) : undefined;
      const recorded = key !== undefined && open.recorded.delete(key);
      try {
        // An answered call's audit records are kept first: an answer the client saw is never missing from the audit;
        // so are its artifacts, which the answer links to.
        if (recorded) await Promise.all([...open.auditWrites, shareArtifacts(open).catch(report)]);
        // The call is ended in the store as its answer is kept (see StoreEvents), before the client can see it.
        if (recorded) open.events!.answering.add(key!);
        return await send(message, sendOptions);
      } finally {
        // An answer the transport did not keep (its stream gone) still ends the call.
        if (recorded && open.events!.answering.delete(key!)) {
          await fleet!.finishCall(identity.tenant, id, key!, message).catch(report);
        }
        if (isAnswer) open.release(message.id as RequestId);
      }
    };
    transport.onerror = () => {};
    await served.server.connect(transport);
    if (adopted) await rebuild(open, adopted, request);
    return open;
  }

  // A session taken over from another replica: its client's initialize is answered once more, here, so that
  // the server and the transport stand where the first replica's stood (the answer is dropped).
  async function rebuild(open: OpenSession, adopted: StoredSession, request: Request): Promise<void> {
    const initialize = adopted.data.initialize as JSONRPCMessage;
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const post = (body: JSONRPCMessage, extra: Record<string, string> = {}) =>
      open.transport.handleRequest(
        new Request(request.url, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) }),
        { parsedBody: body },
      );
    await (await post(initialize)).text();
    await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": adopted.id }))
      .text();
  }

  // Requests for one session that come together wait on one take-over, each tenant on its own: a take-over asked by
  // another tenant finds nothing, and its owner's request waiting on it would be told its session is gone.
  function adopt(identity: Identity, id: string, request: Request): Promise<OpenSession | undefined> {
    const key = `${identity.tenant}\n${id}`;
    let pending = adopting.get(key);
    if (!pending) {
      pending = (async () => {
        // A session answers the token that opened it on every replica: before, another token of its tenant (a
        // `tools:read` one) was given it by the store, which checks the tenant alone, and read its commands' output.
        // Checked before the take-over, which would move the session away from the replica serving its token.
        const stored = await fleet!.store.session(identity.tenant, id);
        const scopes = Array.isArray(stored?.data.scopes) ? stored.data.scopes as Scope[] : [];
        if (stored?.data.key !== identity.key || !holdsScopes(identity, scopes)) return undefined;
        const taken = await fleet!.store.takeOverSession(identity.tenant, id, fleet!.id);
        return taken && await openSession(identity, request, undefined, taken);
      })().finally(() => adopting.delete(key));
      adopting.set(key, pending);
    }
    return pending;
  }

  // A session lives no longer than the access token shown for it counts: a JWT's `exp`, pushed back by each request of
  // the session that shows a later one (a refreshed token). Before, a session whose token expired lived on until idle:
  // its GET stream stayed open, its calls in flight ran to their end and answered, its background jobs ran on, while
  // every request showing that token was answered 401. It ends as a revoked token's does, its streams closed and its calls cancelled.
  function keepWhileTokenCounts(open: OpenSession, identity: Identity): void {
    if (identity.expiresAt === undefined || open.ended) return;
    if (open.tokenUntil !== undefined && open.tokenUntil >= identity.expiresAt) return;
    open.tokenUntil = identity.expiresAt;
    const arm = () => {
      clearTimeout(open.tokenTimer);
      const left = open.tokenUntil! - Date.now();
      if (left <= 0) {
        void endSession(open, TOKEN_EXPIRED);
        return;
      }
      open.tokenTimer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      unrefTimer(open.tokenTimer);
    };
    arm();
  }

  function endSession(open: OpenSession, reason: string): Promise<void> {
    open.ended ??= (async () => {
      clearTimeout(open.tokenTimer);
      if (open.id) sessions.delete(open.id);
      if (open.id && fleet && reason !== SHUTDOWN) await endStored(open, reason).catch(report);
      transient.delete(open);
      open.served.cancelAll(reason);
      // Cancelled calls still answer (as cancelled) before their streams close.
      await within(CANCEL_GRACE_MS, Promise.all([open.served.idle(), open.answered()]));
      try {
        await open.served.close();
      } catch {
        // closing a transport whose streams are gone
      }
      await open.workspace.dispose().catch(() => {});
      // A request the session never answered (its stream gone) no longer holds its tenant's budget.
      for (const { id } of [...open.inflight.values()]) open.release(id);
    })();
    return open.ended;
  }

  // A session idle here may live on on the replica that took it over: only its owner ends it in the store by expiry.
  // So may one whose token expired here: the replica that took it over may have been shown a fresh token.
  async function endStored(open: OpenSession, reason: string): Promise<void> {
    if (reason === ENDED_ELSEWHERE) return;
    if (reason === EXPIRED || reason === TOKEN_EXPIRED) {
      const stored = await fleet!.store.session(open.identity.tenant, open.id!);
      if (stored?.owner !== fleet!.id) return;
      if (reason === EXPIRED && Date.now() - stored.lastActive <= idleMs) return;
    }
    await fleet!.store.endSession(open.id!, Date.now());
  }

  // A session this replica holds may have been taken over by another, and ended there (DELETE, idle expiry, its
  // token revoked or expired): the copy here then answered on, its background jobs running, as if the DELETE had not
  // been. The store says whether the session has ended; the copy here ends with it (jobs killed, temp dir removed).
  // A store that cannot be read ends nothing: the session goes on where it is.
  async function endedElsewhere(open: OpenSession): Promise<boolean> {
    if (open.ended) return true;
    const stored = await fleet!.store.session(open.identity.tenant, open.id!).catch((error) => {
      report(error);
      return undefined;
    });
    // No row yet (its initialize's answer may come before the store has it) is no ending.
    if (!stored || stored.endedAt === null) return false;
    void endSession(open, ENDED_ELSEWHERE);
    return true;
  }

  // `requestId` is the id of the request refused, when one POST carries one: JSON-RPC 2.0 has an error reply carry the
  // request's id whenever it could be read (null only when it could not), so that the client knows what failed.
  // Whether a request's identity owns a session: the same tenant, through the same token (a JWT's key is its tenant's,
  // so a refreshed access token keeps its sessions).
  // A JWT's key is its tenant's, whatever it grants: a token of that tenant holding less than the one that opened the
  // session (`tools:read` beside `tools:commands`, as a read-only client of the same person is given) ended the session
  // with DELETE and read its commands' whole outputs (resources/read of their artifacts, read_artifact), which that
  // token could not have made. A session answers a token that holds every scope of the one that opened it.
  const sameOwner = (owner: Identity, asking: Identity) =>
    owner.tenant === asking.tenant && owner.key === asking.key && holdsScopes(asking, owner.scopes);

  async function ownedSession(
    request: Request,
    identity: Identity,
    requestId: RequestId | null = null,
  ): Promise<OpenSession | Response> {
    const id = request.headers.get("mcp-session-id");
    if (!id) return refusal(400, "Bad Request: Mcp-Session-Id header is required", requestId);
    let open = sessions.get(id);
    // Another tenant's session held here is looked for in the store as any id this replica does not hold: refused
    // here at once, it was told from a guessed id by its time alone (0.6 ms against 1.9 ms on PostgreSQL). So is a
    // session another token of the same tenant opened: a session answers the token that opened it (before, a
    // `tools:read` token could end a full token's session with DELETE, or read its commands' output with bash_read).
    if (open && !sameOwner(open.identity, identity)) open = undefined;
    if (open && fleet && await endedElsewhere(open)) open = undefined;
    // A session this replica does not hold may be another's: the store says whose (and it is never another tenant's).
    if (!open && fleet) open = await adopt(identity, id, request);
    // Another tenant's (or token's) session is exactly as unknown as a guessed id.
    if (!open || !sameOwner(open.identity, identity) || open.ended) {
      // -32001, as the SDK's transport answers an id it does not know (this check stands in for its own).
      return json(
        404,
        errorReply(requestId, SESSION_NOT_FOUND, "Session not found: it ended, expired, or never existed"),
      );
    }
    open.lastActive = Date.now();
    if (fleet) void fleet.store.touchSession(id, open.lastActive).catch(report);
    keepWhileTokenCounts(open, identity);
    return open;
  }

  // The request a notifications/cancelled names, when it is one of the session's requests in flight, by the id that
  // request was sent with; the notification is made to name it so. The SDK finds the call to stop by the exact id:
  // a cancellation of `"1"` for the request `1` freed its slot while the call ran on to the end (past the limit on
  // calls in flight, a command finishing what its client had stopped).
  function cancelledInFlight(open: OpenSession, message: JSONRPCMessage): RequestId | undefined {
    if (!isJSONRPCNotification(message) || message.method !== "notifications/cancelled") return undefined;
    const params = message.params as { requestId?: unknown } | undefined;
    const id = params?.requestId;
    const sent = (typeof id === "string" || typeof id === "number") ? open.inflight.get(String(id))?.id : undefined;
    if (sent !== undefined && sent !== id) params!.requestId = sent;
    return sent;
  }

  // A cancelled request gets no answer (the specification's cancellation), so the transport, which ends a request's
  // stream once it has sent the answer, would hold its stream open (and its keep-alive timer) as long as the session
  // lives: it is ended here. Each request has a stream of its own (a batch's requests too: see handleBatch), so the
  // stream is that request's alone. A client of 2025-11-25 was given an event id on it (the priming event) and
  // resumes it with GET and Last-Event-ID, as it would after a dropped connection; that resumption is answered 204
  // (see the GET below).
  function endCancelledStream(open: OpenSession, id: RequestId): void {
    // The SDK keeps the stream of each request in flight in a private map; without it the stream stays open, as before.
    const streams = (open.transport as unknown as { _requestToStreamMapping?: Map<RequestId, string> })
      ._requestToStreamMapping;
    const streamId = streams?.get(id);
    if (streamId === undefined) return;
    remember(open.cancelledStreams, streamId);
    open.transport.closeSSEStream(id);
    streams!.delete(id);
  }

  // A request whose id is still in flight is refused: the SDK routes answers and cancellations by id, so a second
  // request of that id would take the first one's answer and slot (and each would escape the limit on calls).
  function checkRequest(
    open: OpenSession,
    identity: Identity,
    message: JSONRPCMessage,
    lease?: BodyLease,
  ): Response | undefined {
    if (isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
      const cancelled = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof cancelled === "string" || typeof cancelled === "number") open.release(cancelled);
      return undefined;
    }
    if (!isJSONRPCRequest(message)) return undefined;
    if (open.inflight.has(String(message.id))) {
      return json(
        400,
        errorReply(
          message.id,
          JSONRPC_ERRORS.invalidRequest,
          `Invalid request: the id ${shownId(message.id)} belongs to a request still in flight; use a new id`,
        ),
      );
    }
    const refused = checkCall(open, identity, message);
    if (refused) return refused;
    open.inflight.set(String(message.id), {
      kind: message.method === "tools/call" ? "call" : "other",
      id: message.id,
      lease,
    });
    lease?.hold();
    return undefined;
  }

  function callsInFlight(open: OpenSession): number {
    let calls = 0;
    for (const { kind } of open.inflight.values()) if (kind === "call") calls++;
    return calls;
  }

  function checkCall(open: OpenSession | undefined, identity: Identity, message: JSONRPCMessage): Response | undefined {
    if (!isJSONRPCRequest(message) || message.method !== "tools/call") return undefined;
    const name = (message.params as { name?: unknown } | undefined)?.name;
    const tool = typeof name === "string" && toolbox.isEnabled(name) ? toolbox.get(name) : undefined;
    if (tool && !identity.scopes.includes(scopeOf(tool))) {
      const needed = scopeOf(tool);
      return json(
        403,
        errorReply(message.id, JSONRPC_ERRORS.invalidParams, `Forbidden: ${name} needs the scope ${needed}`, {
          scope: needed,
        }),
        {
          "www-authenticate": `${challengeStart()}, error="insufficient_scope", scope="${needed}"`,
        },
      );
    }
    const wait = rate.take(identity.key);
    if (wait > 0) {
      return json(
        429,
        errorReply(message.id, -32000, `Too many calls: this token may start ${rate.limit} calls a minute`, {
          retryAfterSec: Math.ceil(wait / 1000),
        }),
        { "retry-after": String(Math.ceil(wait / 1000)) },
      );
    }
    if (open && callsInFlight(open) >= maxInflight) {
      return json(
        429,
        errorReply(message.id, -32000, `Too many calls in flight: a session may run ${maxInflight} at once`),
        { "retry-after": "1" },
      );
    }
    return undefined;
  }

  async function handlePost(request: Request, identity: Identity, connection: RequestConnection): Promise<Response> {
    // The header says the version; a client of 2025-03-26 sends none (it came in 2025-06-18), and the specification
    // then has the server take the version its session settled on, else 2025-03-26.
    // Only the caller's own session says it: another tenant's answered a batch with "batches are taken only under
    // protocol 2025-03-26" where a made-up id got "Session not found", telling bob that alice's id was live (and on
    // which version).
    const named = sessions.get(request.headers.get("mcp-session-id") ?? "");
    const version = request.headers.get("mcp-protocol-version") ??
      (named?.identity.tenant === identity.tenant ? named.protocolVersion : undefined) ?? BATCH_PROTOCOL_VERSION;
    const batches = version === BATCH_PROTOCOL_VERSION;
    // Bodies being received hold their connections until they end (see MAX_BODIES_READING).
    const reading = bodiesReading.get(identity.tenant) ?? 0;
    if (reading >= MAX_BODIES_READING) {
      return json(
        429,
        errorReply(
          null,
          -32000,
          `Too many request bodies at once: this tenant's clients are sending ${reading}, the most a tenant may ` +
            "send at once; send this one again once those have arrived",
          { limit: MAX_BODIES_READING, retryAfterSec: 1 },
        ),
        { "retry-after": "1" },
      );
    }
    bodiesReading.set(identity.tenant, reading + 1);
    let judged: Awaited<ReturnType<typeof judgeBody>>;
    try {
      judged = await judgeBody(request, maxBody, batches, { budgets: bodyBudgets, key: identity.tenant });
    } finally {
      const left = (bodiesReading.get(identity.tenant) ?? 1) - 1;
      if (left > 0) bodiesReading.set(identity.tenant, left);
      else bodiesReading.delete(identity.tenant);
    }
    if (judged.kind === "refuse") {
      const headers: Record<string, string> = judged.status === 429
        ? { "retry-after": "1" }
        : judged.status === 415
        ? { "accept-encoding": "identity" }
        : {};
      return json(judged.status, judged.body, headers);
    }
    // The body counts against the tenant's budget until this POST is served and each request it carries answered.
    const lease = new BodyLease(() => bodyBudgets.give(identity.tenant, judged.held));
    try {
      if (judged.kind === "batch") return await handleBatch(request, identity, judged.frames, lease, connection);
      return await handleMessage(request, identity, judged.message, undefined, lease);
    } finally {
      lease.drop();
    }
  }

  // A JSON-RPC batch (protocol 2025-03-26): its messages served in order, each as if it had come alone (so each gets
  // every check and request its own stream, as the stdio transport serves one), their answers joined into one
  // response (_http_batch.ts). A broken notification in it is dropped, as JSON-RPC answers no notification.
  async function handleBatch(
    request: Request,
    identity: Identity,
    frames: Frame[],
    lease: BodyLease,
    connection: RequestConnection,
  ): Promise<Response> {
    if (
      frames.some((frame) =>
        frame.kind === "message" && "method" in frame.message && frame.message.method === "initialize"
      )
    ) {
      return json(
        400,
        errorReply(null, JSONRPC_ERRORS.invalidRequest, "Invalid request: initialize comes alone, not in a batch"),
      );
    }
    let owned: OpenSession | undefined;
    if (!stateless) {
      const open = await ownedSession(request, identity);
      if (open instanceof Response) return open;
      // A session takes batches when it settled on 2025-03-26, whatever version a request's header names: one of
      // 2025-06-18, which has no batches, took a batch sent with "MCP-Protocol-Version: 2025-03-26" and served it.
      if (open.protocolVersion !== BATCH_PROTOCOL_VERSION) {
        const { status, body } = refusedBatch();
        return json(status, body);
      }
      owned = open;
    }
    const parts: BatchPart[] = [];
    // The answers of a batch's messages are joined once all are served: until then each waits whole in its own
    // stream (five unread batches of 256 `resources/read` of a 16 MiB artifact: 242 to 2,482 MiB in 15 s). Each counts
    // against the tenant's unread budget as it comes (_http_unread.ts), and once one goes over, the batch's connection
    // is closed and the messages not yet served are not.
    let over = false;
    const cut = () => {
      over = true;
      connection.close();
    };
    // The ids of the batch's requests so far (as strings, as the ids in flight are kept). A request whose id one
    // before it in the batch took is refused, as the stdio transport refuses it (all of a batch is in flight until
    // its one answer): MCP says an id is never used twice in a session, and JSON-RPC's client matches the batch's
    // answers by id. A stateless server, where each request is a session of its own, ran both and answered the id
    // twice.
    const idsInBatch = new Set<string>();
    for (const frame of frames) {
      if (over || request.signal.aborted) break;
      if (frame.kind === "reply") parts.push(frame.reply);
      if (frame.kind !== "message") continue;
      if (isJSONRPCRequest(frame.message)) {
        const key = String(frame.message.id);
        if (idsInBatch.has(key)) {
          parts.push(errorReply(
            frame.message.id,
            JSONRPC_ERRORS.invalidRequest,
            `Invalid request: the id ${shownId(frame.message.id)} belongs to a request still in flight; use a new id`,
          ));
          continue;
        }
        idsInBatch.add(key);
      }
      // A message served settles in microtasks alone (a ping does): without a turn of the event loop between two,
      // no other request, of this tenant or another, would be read until the whole batch was.
      if (parts.length > 0) await new Promise((resolve) => setTimeout(resolve, 0));
      const response = await handleMessage(request, identity, frame.message, owned, lease);
      // The headers every message of the batch shares decide these, before anything is dispatched: the batch's answer.
      if (parts.length === 0 && (response.status === 406 || response.status === 415)) return response;
      parts.push(countingUnread(response, unreadBudgets, identity.tenant, cut));
    }
    if (over || request.signal.aborted) {
      for (const part of parts) if (part instanceof Response) void part.body?.cancel().catch(() => {});
      return json(
        429,
        errorReply(
          null,
          -32000,
          `Too many answer bytes unread: the batch's answers would hold more than ${unreadBudgets.limit} bytes the ` +
            "client has not read; read the answers as they come, or ask for fewer at once",
          { limitBytes: unreadBudgets.limit },
        ),
      );
    }
    return await joinBatchAnswers(parts);
  }

  // `owned`: the session a batch was found to own, looked up (and its activity recorded) once for all its messages.
  async function handleMessage(
    request: Request,
    identity: Identity,
    message: JSONRPCMessage,
    owned?: OpenSession,
    lease?: BodyLease,
  ): Promise<Response> {
    // An id is echoed in every answer and event of its request, and a fleet's store keeps it with the call, its answer
    // and each event: a call whose id was a megabyte long wrote 7 MB to the store every tenant shares.
    if (isJSONRPCRequest(message) && typeof message.id === "string" && message.id.length > MAX_ID_CHARS) {
      return json(
        400,
        errorReply(
          message.id,
          JSONRPC_ERRORS.invalidRequest,
          `Invalid request: the id is ${message.id.length} characters long, over ${MAX_ID_CHARS}; use a shorter id`,
          { limitChars: MAX_ID_CHARS },
        ),
      );
    }
    if (stateless) {
      const refused = checkCall(undefined, identity, message);
      if (refused) return refused;
      // Each request is a session of its own, which neither the cap on sessions nor that on calls in flight per
      // session saw: one tenant ran 40 calls at once on a server whose tenants could hold 32 sessions of one call each
      // (--max-concurrent-calls 1), and nothing bounded it but the rate. A tenant holds at most the requests its
      // sessions could hold.
      const held = transientOf.get(identity.tenant) ?? 0;
      if (held >= maxSessions * maxInflight) {
        return json(
          429,
          errorReply(
            isJSONRPCRequest(message) ? message.id : null,
            -32000,
            `Too many requests in flight: a tenant may have ${maxSessions * maxInflight} served at once ` +
              `(${maxSessions} sessions of ${maxInflight} calls); send it again once one has been answered`,
          ),
          { "retry-after": "1" },
        );
      }
      transientOf.set(identity.tenant, held + 1);
      lease?.hold();
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        lease?.drop();
        const left = (transientOf.get(identity.tenant) ?? 1) - 1;
        if (left > 0) transientOf.set(identity.tenant, left);
        else transientOf.delete(identity.tenant);
      };
      let open: OpenSession;
      try {
        open = await openSession(identity, request);
      } catch (error) {
        release();
        throw error;
      }
      transient.add(open);
      const end = () => void endSession(open, "the request was answered").finally(release);
      let response: Response;
      try {
        response = await open.transport.handleRequest(request, { parsedBody: message });
      } catch (error) {
        end();
        throw error;
      }
      if (!isJSONRPCRequest(message)) {
        end();
        return response;
      }
      // A request the transport refused names its id, as a session's does (see withRequestId): a stateless server's
      // answer to an unsupported MCP-Protocol-Version, a missing Accept or a wrong Content-Type said id null.
      if (!response.ok) {
        end();
        return await withRequestId(response, message.id);
      }
      return closingWhenDone(response, end);
    }
    // An initialize whose params are malformed is answered as over stdio (-32602, naming the field), not taken for
    // a request outside any session; "initialize" sent as a notification asks for nothing and opens no session.
    if (isJSONRPCRequest(message) && message.method === "initialize" && !request.headers.get("mcp-session-id")) {
      const parsed = InitializeRequestSchema.safeParse(message);
      if (!parsed.success) {
        return json(400, errorReply(message.id, JSONRPC_ERRORS.invalidParams, describeIssues(parsed.error.issues)));
      }
      const size = JSON.stringify(message.params ?? {}).length;
      if (size > MAX_INITIALIZE_CHARS) {
        return json(
          400,
          errorReply(
            message.id,
            JSONRPC_ERRORS.invalidParams,
            `Invalid params: the initialize's params are ${size} characters of JSON, over ${MAX_INITIALIZE_CHARS}: ` +
              "a session keeps them (the client's capabilities and name) for as long as it lives; send them without " +
              "the padding",
            { limitChars: MAX_INITIALIZE_CHARS },
          ),
        );
      }
    }
    if (isJSONRPCRequest(message) && message.method === "initialize") {
      if (request.headers.get("mcp-session-id")) {
        return json(
          400,
          errorReply(
            message.id,
            JSONRPC_ERRORS.invalidRequest,
            "Invalid request: initialize opens a new session; send it without Mcp-Session-Id",
          ),
        );
      }
      // Counted against the cap from before the count is read until it has opened (or not): initializes sent at
      // once each counted the sessions open before any of them had opened, and all opened (45 at once, cap 32).
      const pending = opening.get(identity.tenant) ?? new Set<Opening>();
      opening.set(identity.tenant, pending);
      const mine: Opening = {};
      pending.add(mine);
      try {
        const held = fleet
          ? await fleet.store.openSessionCount(identity.tenant)
          : [...sessions.values()].filter((s) => s.identity.tenant === identity.tenant).length;
        // Those begun before this one and not yet among the open ones (first come, first served).
        let before = 0;
        for (const other of pending) {
          if (other === mine) break;
          if (other.open?.id === undefined || (fleet && !other.stored)) before++;
        }
        if (held + before >= maxSessions) {
          return refusal(
            429,
            `Too many sessions: a tenant may hold ${maxSessions} open; DELETE the ones it no longer uses`,
            message.id,
          );
        }
        const open = mine.open = await openSession(identity, request, message);
        const response = await open.transport.handleRequest(request, { parsedBody: message });
        mine.stored = true;
        if (open.id) return response;
        void endSession(open, "the session did not open");
        // Refused by the transport (an Accept without text/event-stream, a Content-Type that is not JSON): the
        // reply names the initialize's id, as a session's request's does.
        return await withRequestId(response, message.id);
      } finally {
        pending.delete(mine);
        if (pending.size === 0) opening.delete(identity.tenant);
      }
    }
    // A session that ended while the batch was served is looked up again, to be refused as any ended one is.
    const open = owned && !owned.ended
      ? owned
      : await ownedSession(request, identity, isJSONRPCRequest(message) ? message.id : null);
    if (open instanceof Response) return open;
    const cancelled = cancelledInFlight(open, message);
    const refused = checkRequest(open, identity, message, lease);
    if (refused) return refused;
    if (cancelled !== undefined) {
      const response = await open.transport.handleRequest(request, { parsedBody: message });
      endCancelledStream(open, cancelled);
      return response;
    }
    if (open.events && isJSONRPCRequest(message) && message.method === "tools/call") {
      await applyGrants(open);
      // Recorded with its stream before the tool runs (see StoreEvents), so that another replica can answer for it.
      // A name the toolbox does not know runs nothing, and is kept as unknown: a client's name of a megabyte was kept
      // whole with every call that named it.
      const name = String((message.params as { name?: unknown } | undefined)?.name);
      const tool = toolbox.has(name) ? name : "(unknown)";
      const key = requestKey(message.id);
      const record = async (streamId: string | null) => {
        open.recorded.add(key);
        await fleet!.store.startCall({
          sessionId: open.id!,
          requestId: key,
          tenant: identity.tenant,
          owner: fleet!.id,
          tool,
          streamId,
          startedAt: Date.now(),
          state: "running",
          answer: null,
          endedAt: null,
        });
      };
      // The transport primes a stream (an event id to resume from) only for clients of 2025-11-25 and later: an
      // older client's call is recorded here, with no stream to resume (its outcome is read by request id).
      if ((request.headers.get("mcp-protocol-version") ?? "") < PRIMED_SINCE) await record(null);
      else open.events.claimStream = record;
    }
    try {
      const response = await open.transport.handleRequest(request, { parsedBody: message });
      // A request the transport refused (e.g. an unknown protocol version) was never dispatched: no answer will free
      // its slot, and a call recorded for it ran no tool, which its record says.
      if (!response.ok && isJSONRPCRequest(message)) {
        open.release(message.id);
        if (open.recorded.delete(requestKey(message.id))) {
          const refused = errorReply(message.id, -32000, `The call was refused with HTTP ${response.status}`);
          await fleet!.finishCall(identity.tenant, open.id!, requestKey(message.id), refused).catch(report);
        }
        return await withRequestId(response, message.id);
      }
      return response;
    } finally {
      if (open.events) open.events.claimStream = undefined;
    }
  }

  // A browser client on an allowed origin reads every answer (_http_origin.ts: CORS).
  const handler: Handler = async (request, connection) => {
    const response = await answer(request, connection);
    const origin = dnsRebindingProtection === false ? undefined : corsOrigin(request.headers, policy);
    return origin === undefined ? response : withCors(response, origin);
  };

  const answer: Handler = async (request, connection) => {
    // Deno makes the URL of the Host header: one that forms none (`127.0.0.1:8765.evil`) was a 500 with a stack on
    // stderr for each request. It is refused as the Host check refuses a Host it does not answer to.
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return refusal(400, `Bad Request: the Host ${JSON.stringify(request.headers.get("host"))} forms no URL`);
    }
    if (url.pathname === "/healthz") {
      return json(draining ? 503 : 200, { status: draining ? "draining" : "ok" });
    }
    if (dnsRebindingProtection !== false) {
      const reason = refusedOrigin(request.headers, policy);
      if (reason) return refusal(403, `Forbidden: ${reason}`);
      // A browser's preflight carries no token: answered before the token is asked for.
      const origin = corsOrigin(request.headers, policy);
      if (origin !== undefined && isPreflight(request)) return preflightAnswer(origin);
    }
    if (url.pathname.startsWith("/.well-known/oauth-protected-resource")) {
      if (!jwt) return refusal(404, "Not found: this server does not use OAuth");
      return json(200, {
        resource: resourceUrl,
        authorization_servers: authorizationServers ?? [jwt.options.issuer],
        scopes_supported: ["tools:read", "tools:write", "tools:commands"],
        bearer_methods_supported: ["header"],
        resource_name: "toolfence",
      });
    }
    if (url.pathname !== path) return refusal(404, `Not found: the MCP endpoint is ${path}`);
    if (draining) return refusal(503, "Service Unavailable: the server is shutting down", null, { "retry-after": "5" });
    const identity = await authenticate(request);
    if (identity instanceof Response) return identity;
    // The connection is the tenant's from now on: counted against its share, not its address's (_http_connections.ts).
    const crowded = connection.claim(identity.tenant);
    if (crowded) return refusal(503, crowded, null, { "retry-after": "1" });
    // What the tenant's clients have not read of the answers is bounded (see _http_unread.ts).
    const response = await serve(request, identity, connection);
    return countingUnread(response, unreadBudgets, identity.tenant, () => connection.close());
  };

  async function serve(request: Request, identity: Identity, connection: RequestConnection): Promise<Response> {
    try {
      if (request.method === "POST") return await handlePost(request, identity, connection);
      if (request.method === "GET" || request.method === "DELETE") {
        if (stateless) {
          return refusal(405, `Method Not Allowed: a stateless server has no sessions to ${request.method}`, null, {
            allow: "POST",
          });
        }
        const open = await ownedSession(request, identity);
        if (open instanceof Response) return open;
        const lastEventId = request.headers.get("last-event-id");
        // A stream ended because its request was cancelled has nothing more to say: 204, which tells an SSE client to
        // stop reconnecting (the SDK's client then stops; a resumed stream would stay open, with nothing ever to come).
        // Each time: the stream stays remembered (the newest CANCELLED_STREAMS_KEPT), as a second resumption of it
        // (another client of the session, one that does not stop at 204) would be held open as well.
        if (request.method === "GET" && lastEventId) {
          const over = await streamOver(open, lastEventId, open.cancelledStreams);
          if (over) return over;
        }
        if (fleet && request.method === "GET" && lastEventId) {
          // A resumed stream's calls are first ended (by their replica, or as interrupted): the replay has their answers.
          const streamId = await fleet.store.eventStream(open.id!, lastEventId);
          if (streamId) await fleet.settleStream(open.identity.tenant, open.id!, streamId);
        }
        // (A GET the transport would refuse, for its Accept or its protocol version, is left to it to refuse.)
        const version = request.headers.get("mcp-protocol-version");
        if (
          request.method === "GET" && lastEventId &&
          (request.headers.get("accept") ?? "").includes("text/event-stream") &&
          (version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version))
        ) {
          const finished = await finishedReplay(open.eventStore, lastEventId, open.id!);
          if (finished) return finished;
          // Resumed at or after its answer (the answer's own event id, as an SSE client that reconnects whenever a
          // stream ends sends): nothing more will come on it. The transport held such a stream open, with nothing to
          // send, until the session ended.
          const over = await streamOver(open, lastEventId, open.answeredStreams);
          if (over) return over;
        }
        return await open.transport.handleRequest(request);
      }
      return refusal(405, `Method Not Allowed: ${request.method}`, null, {
        allow: stateless ? "POST" : "GET, POST, DELETE",
      });
    } catch (error) {
      return json(500, errorReply(null, JSONRPC_ERRORS.internalError, `Internal error: ${(error as Error).message}`));
    }
  }

  const listener: Listener = await listen(handler, {
    hostname,
    port: options.port,
    platform,
    connections: { maxConnections, maxConnectionsPerAddress, maxConnectionsPerTenant, headersTimeoutMs, bodyTimeoutMs },
  });
  policy = originPolicy(hostname, listener.port, allowedHosts, allowedOrigins);
  const shownHost = hostname.includes(":") ? `[${hostname}]` : hostname;
  const url = new URL(`http://${shownHost}:${listener.port}${path}`);
  resourceUrl ||= url.href;

  // A session whose token left the token file ends with it: before, a revoked tenant's session lived on until idle
  // (30 minutes by default, never while a call ran), and its background jobs with it (a job of alice's writing a line
  // a second went on writing after her token was removed and her requests answered 401).
  const reportRevocation = (error: unknown) =>
    process.stderr.write(`toolfence: checking a session's token: ${(error as Error)?.message}\n`);
  // A token now given to another tenant (or workspace) no longer speaks for the session's either; nor does one that
  // no longer holds every scope it opened the session with, which the session then no longer answers (sameOwner):
  // left to idle out, its jobs ran on for its idle time with nobody able to reach them.
  const revoked = async (open: OpenSession) => {
    const now = tokens ? await tokens.current(open.identity) : open.identity;
    return !now || now.tenant !== open.identity.tenant || now.workspace !== open.identity.workspace ||
      !holdsScopes(now, open.identity.scopes);
  };
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const open of sessions.values()) {
      if (open.inflight.size === 0 && now - open.lastActive > idleMs) void endSession(open, EXPIRED);
      else {
        if (tokens) {
          void revoked(open).then((gone) => gone ? endSession(open, REVOKED) : undefined).catch(reportRevocation);
        }
        if (fleet && open.id) void endedElsewhere(open);
      }
    }
  }, Math.max(50, Math.min(idleMs / 4, 5_000)));
  unrefTimer(sweep);

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let stopping: Promise<void> | undefined;
  const shutdown = (reason = "the server is shutting down") => {
    stopping ??= (async () => {
      draining = true;
      clearInterval(sweep);
      const all = [...sessions.values(), ...transient];
      await within(drainMs, Promise.all(all.map((open) => open.answered())));
      // In a fleet, sessions outlive this replica: the others take them over.
      await Promise.all(all.map((open) => endSession(open, fleet ? SHUTDOWN : reason)));
      await fleet?.stop();
      await listener.close();
    })().finally(resolveClosed);
    return stopping;
  };

  return { url, port: listener.port, sessionCount: () => sessions.size, closed, shutdown };
}

// A resumed stream whose request's answer is among the events it missed: those events, then the end of the stream.
// The SDK's transport replays them and then holds the stream open as one still awaiting its answer, which had
// already been sent, so nothing would ever come on it or close it (a client whose connection dropped during a call
// and resumed it held that connection, and a keep-alive timer, until the session ended), where MCP says the server
// closes the stream once the answer is sent. A request's stream carries one request (a batch's messages are served
// each alone), so an answer on it ends it; the session's own GET stream carries none, and is left to the transport.
async function finishedReplay(
  store: EventStore,
  lastEventId: string,
  sessionId: string,
): Promise<Response | undefined> {
  const events: { id: string; message: JSONRPCMessage }[] = [];
  let answered = false;
  await store.replayEventsAfter(lastEventId, {
    send: (id, message) => {
      events.push({ id, message });
      if ("id" in message && ("result" in message || "error" in message)) answered = true;
      return Promise.resolve();
    },
  });
  if (!answered) return undefined;
  const body = events.map(({ id, message }) => `event: message\nid: ${id}\ndata: ${JSON.stringify(message)}\n\n`)
    .join("");
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
      "mcp-session-id": sessionId,
    },
  });
}

// The SDK's transport answers a request it refuses (an unsupported MCP-Protocol-Version, a missing Accept) with id
// null, which JSON-RPC 2.0 keeps for an id that could not be read: this one was, and the reply names it.
async function withRequestId(response: Response, id: RequestId): Promise<Response> {
  if (!(response.headers.get("content-type") ?? "").startsWith("application/json")) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return new Response(text, { status: response.status, headers: response.headers });
  }
  const reply = body as { id?: unknown; error?: unknown };
  if (typeof body === "object" && body !== null && reply.error !== undefined && reply.id === null) reply.id = id;
  return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
}

/** `response` with `done` called once its body has been sent or dropped. */
function closingWhenDone(response: Response, done: () => void): Response {
  if (!response.body) {
    done();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: finished, value } = await reader.read();
        if (finished) {
          controller.close();
          done();
        } else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
        done();
      }
    },
    cancel(reason) {
      void reader.cancel(reason).catch(() => {});
      done();
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}
