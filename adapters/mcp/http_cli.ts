/**
 * `toolfence serve --http`: the command-line options turned into a running
 * {@linkcode serveHttp} server, with its signals (SIGTERM and SIGINT shut it
 * down gracefully, SIGHUP reloads the token file).
 *
 * @module
 */

import path from "node:path";
import process from "node:process";
import { importPeer, type ToolBox } from "@toolfence/core";
import { AuditLog, PolicyRules, type SandboxMode } from "@toolfence/policy";
import { parseHttpAddress } from "./_http_args.ts";
import { type HttpServeOptions, JwtVerifier, serveHttp, TokenFile } from "./http.ts";
import { openStore } from "./open_store.ts";
import type { McpServerOptions } from "./server.ts";
import type { ConsoleServer } from "./console/serve_console.ts";
import { HONO } from "../_peers.ts";

/** A problem with the command line; main.ts reports it as a usage error. */
export class HttpUsageError extends Error {
  /** Always `HttpUsageError`. */
  override name = "HttpUsageError";
}

/** The parsed values main.ts hands over. */
export interface HttpCliValues {
  /** `--http HOST:PORT`: where to listen. */
  http: string;
  /** `--workspace DIR`: the folder the tools work in (or, with tenants, under which theirs are made). */
  workspace: string;
  /** `--temp-dir DIR`: where session temp dirs are made. */
  tempDir?: string;
  /** `--auto-confirm`: answer every question with its default instead of asking. */
  autoConfirm: boolean;
  /** `--sandbox MODE`: the OS sandbox mode. */
  sandbox?: SandboxMode;
  /** `--max-message-mib N` in bytes: the largest request body accepted. */
  maxBodyBytes?: number;
  /** `--stateless`: one session per request, for a plain load balancer. */
  stateless?: boolean;
  /** `--token-file FILE`: the bearer tokens (hashed), reloaded on SIGHUP. */
  tokenFile?: string;
  /** `--oauth-issuer URL`: the authorization server whose JWT access tokens are accepted. */
  oauthIssuer?: string;
  /** `--oauth-jwks URL`: where the issuer's signing keys are published. */
  oauthJwks?: string;
  /** `--resource-url URL`: this server's public URL, the audience tokens must name. */
  resourceUrl?: string;
  /** `--tenant-root DIR`: where each tenant's workspace is made. */
  tenantRoot?: string;
  /** `--allowed-host NAME`: Host headers accepted besides the listening address. */
  allowedHosts?: string[];
  /** `--allowed-origin ORIGIN`: Origin headers accepted. */
  allowedOrigins?: string[];
  /** `--no-auth`: serve without authentication (loopback only). */
  noAuth?: boolean;
  /** `--allow-unsandboxed-tenants`: several tenants' commands run without a working OS sandbox. */
  allowUnsandboxedTenants?: boolean;
  /** `--max-concurrent-calls N`: calls in flight per session. */
  maxConcurrentCalls?: string;
  /** `--calls-per-minute N`: calls per minute per token. */
  callsPerMinute?: string;
  /** `--max-connections N`: connections held at once. */
  maxConnections?: string;
  /** `--max-connections-per-address N`: connections one remote address may hold. */
  maxConnectionsPerAddress?: string;
  /** `--max-connections-per-tenant N`: connections one tenant may hold. */
  maxConnectionsPerTenant?: string;
  /** `--headers-timeout-seconds N`: how long a connection has to send a request's head. */
  headersTimeoutSeconds?: string;
  /** `--body-timeout-seconds N`: how long a request has to send its body. */
  bodyTimeoutSeconds?: string;
  /** `--idle-minutes N`: how long an idle session lives. */
  idleMinutes?: string;
  /** `--console HOST:PORT`: also serve the web console there; the sessions' questions wait in it. */
  console?: string;
  /** `--console-token-file FILE`: the console's tokens (entries with the `console` scope alone); default `--token-file`. */
  consoleTokenFile?: string;
  /** The audit log the console shows (`--audit` or the files' `audit.file`). */
  auditFile?: string;
  /** `--store ADDRESS` (or the policy file's `store`): `sqlite:PATH` or `postgres://...`, shared by a fleet of replicas. */
  store?: string;
  /** The policy files' rules and settings, and the model's capabilities, for every session (see `McpServerOptions`). */
  policy?: Pick<McpServerOptions, "rules" | "elicitationAnswers" | "saveRule" | "onDecision" | "capabilities">;
}

// The server's own files, denied to every tool: a command of one tenant must not read the others' tokens, the
// audit of all their calls, or the shared store, wherever the read view would show them (a token file under /etc).
function hidingServerFiles(rules: PolicyRules | undefined, values: HttpCliValues): PolicyRules {
  const store = values.store?.startsWith("sqlite:") ? values.store.slice("sqlite:".length) : undefined;
  return (rules ?? PolicyRules.empty(path.resolve(values.workspace))).denyingFiles([
    // The token file serveHttp denies itself.
    ...(values.consoleTokenFile === undefined ? [] : [{ path: values.consoleTokenFile }]),
    // With the audit's rotations (`FILE.1`) and SQLite's journals (`FILE-wal`).
    ...(values.auditFile === undefined ? [] : AuditLog.filesOf(values.auditFile)),
    ...(store === undefined ? [] : [{ path: store }, { path: store, suffix: "-*" }]),
  ]);
}

const seconds = (n: number | undefined) => n === undefined ? undefined : n * 1000;

function positive(name: string, text: string | undefined, max: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(n > 0) || n > max) {
    throw new HttpUsageError(`--${name} must be a number from 1 to ${max}, not ${JSON.stringify(text)}`);
  }
  return n;
}

/**
 * Starts the HTTP server from the command line's values, reports its URL on
 * stderr and resolves with exit code 0 once it has shut down.
 *
 * Requires `--allow-net` for the address, plus whatever the tools need.
 *
 * @example
 * ```ts ignore
 * import { ToolBox } from "@toolfence/toolfence";
 * import "@toolfence/tools";
 * import { runHttpServe } from "@toolfence/adapters/mcp";
 * await runHttpServe(new ToolBox().withDefaults("fs"), {
 *   http: "127.0.0.1:8765", workspace: Deno.cwd(), autoConfirm: false, noAuth: true,
 * });
 * ```
 */
export async function runHttpServe(toolbox: ToolBox, values: HttpCliValues): Promise<number> {
  let address: { hostname: string; port: number };
  try {
    address = parseHttpAddress(values.http);
  } catch (error) {
    throw new HttpUsageError((error as Error).message);
  }
  if (values.tokenFile && values.oauthIssuer) {
    throw new HttpUsageError("give either --token-file or --oauth-issuer, not both");
  }
  if (values.noAuth && (values.tokenFile || values.oauthIssuer)) {
    throw new HttpUsageError("--no-auth cannot be given with --token-file or --oauth-issuer");
  }
  let tokens: TokenFile | undefined;
  if (values.tokenFile) {
    try {
      tokens = await TokenFile.open(values.tokenFile);
    } catch (error) {
      throw new HttpUsageError(`--token-file: ${(error as Error).message}`);
    }
    tokens.onerror = (error) => process.stderr.write(`toolfence: the token file did not reload: ${error.message}\n`);
  }
  const shownHost = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname;
  if (values.oauthIssuer && !values.resourceUrl && address.port === 0) {
    throw new HttpUsageError("--oauth-issuer with port 0 needs --resource-url (the audience tokens must name)");
  }
  const resourceUrl = values.resourceUrl ?? `http://${shownHost}:${address.port}/mcp`;
  let jwt: JwtVerifier | undefined;
  if (values.oauthIssuer) {
    try {
      jwt = new JwtVerifier({
        issuer: values.oauthIssuer,
        jwksUrl: values.oauthJwks ?? new URL(".well-known/jwks.json", values.oauthIssuer.replace(/\/?$/, "/")).href,
        resource: resourceUrl,
      });
    } catch (error) {
      throw new HttpUsageError(`--oauth-issuer: ${(error as Error).message}`);
    }
  }
  const options: HttpServeOptions = {
    ...address,
    workspace: values.workspace,
    tenantRoot: values.tenantRoot,
    tempParent: values.tempDir,
    autoConfirm: values.autoConfirm,
    sandbox: values.sandbox,
    maxBodyBytes: values.maxBodyBytes,
    stateless: values.stateless,
    tokens,
    jwt,
    resourceUrl: values.resourceUrl ?? (jwt ? resourceUrl : undefined),
    allowNoAuth: values.noAuth,
    allowUnsandboxedTenants: values.allowUnsandboxedTenants,
    allowedHosts: values.allowedHosts,
    allowedOrigins: values.allowedOrigins,
    maxConcurrentCalls: positive("max-concurrent-calls", values.maxConcurrentCalls, 10_000),
    callsPerMinute: positive("calls-per-minute", values.callsPerMinute, 10_000_000),
    idleTimeoutMs: (positive("idle-minutes", values.idleMinutes, 100_000) ?? 30) * 60_000,
    maxConnections: positive("max-connections", values.maxConnections, 1_000_000),
    maxConnectionsPerAddress: positive("max-connections-per-address", values.maxConnectionsPerAddress, 1_000_000),
    maxConnectionsPerTenant: positive("max-connections-per-tenant", values.maxConnectionsPerTenant, 1_000_000),
    headersTimeoutMs: seconds(positive("headers-timeout-seconds", values.headersTimeoutSeconds, 3_600)),
    bodyTimeoutMs: seconds(positive("body-timeout-seconds", values.bodyTimeoutSeconds, 86_400)),
    ...values.policy,
  };
  options.rules = hidingServerFiles(options.rules, values);
  if (!tokens && !jwt && !values.noAuth) {
    throw new HttpUsageError("--http needs --token-file or --oauth-issuer (or --no-auth, on a loopback address)");
  }
  if (values.store !== undefined) {
    if (values.stateless) throw new HttpUsageError("--store keeps sessions; --stateless has none to keep");
    try {
      options.store = await openStore(values.store);
    } catch (error) {
      throw new HttpUsageError(`--store: ${(error as Error).message}`);
    }
  }
  // The replica's name, known before the server starts: the console's questions in the store carry it.
  if (options.store) options.replicaId = crypto.randomUUID();
  const webConsole = values.console === undefined ? undefined : await startConsole(values, tokens, jwt, options).catch(
    async (error) => {
      await options.store?.close();
      throw error;
    },
  );
  let server;
  try {
    server = await serveHttp(toolbox, { ...options, ...(webConsole ? { hostFor: webConsole.hostFor } : {}) });
  } catch (error) {
    await webConsole?.server.close();
    await options.store?.close();
    throw new HttpUsageError((error as Error).message);
  }
  const stop = (signal: string) => void server.shutdown(`the server received ${signal}`);
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("SIGHUP", () => void tokens?.reload());
  // Said once the signals are handled, so that whoever waits for it may send them.
  process.stderr.write(`toolfence: serving MCP on ${server.url.href}\n`);
  if (webConsole) process.stderr.write(`toolfence: serving the console on ${webConsole.server.url.href}\n`);
  await server.closed;
  await webConsole?.server.close();
  await options.store?.close();
  return 0;
}

// `--console`: the web console, loaded only then (it brings Hono), with its own tokens.
async function startConsole(
  values: HttpCliValues,
  mcpTokens: TokenFile | undefined,
  jwt: JwtVerifier | undefined,
  serving: HttpServeOptions,
): Promise<{ server: ConsoleServer; hostFor: NonNullable<HttpServeOptions["hostFor"]> }> {
  let address: { hostname: string; port: number };
  try {
    address = parseHttpAddress(values.console!);
  } catch (error) {
    throw new HttpUsageError(`--console: ${(error as Error).message}`);
  }
  let tokens = mcpTokens;
  if (values.consoleTokenFile) {
    try {
      tokens = await TokenFile.open(values.consoleTokenFile);
    } catch (error) {
      throw new HttpUsageError(`--console-token-file: ${(error as Error).message}`);
    }
  }
  if (!tokens && !jwt) {
    throw new HttpUsageError("--console needs console tokens: --console-token-file, --token-file or --oauth-issuer");
  }
  // The console imports hono statically: without it, importPeer names the package to install.
  const { consoleHost, MemoryQuestionQueue, serveConsole, StoreQuestionQueue } = await importPeer(
    HONO,
    () => import("./console/mod.ts"),
  );
  // With a store, every replica's console shows and answers the questions of every replica.
  const queue = serving.store
    ? new StoreQuestionQueue(serving.store, { replica: serving.replicaId })
    : new MemoryQuestionQueue();
  let server: ConsoleServer;
  try {
    server = await serveConsole({
      ...address,
      queue,
      ...(tokens ? { tokens } : { jwt }),
      auditFile: values.auditFile,
      allowedHosts: values.allowedHosts,
      allowedOrigins: values.allowedOrigins,
    });
  } catch (error) {
    throw new HttpUsageError(`--console: ${(error as Error).message}`);
  }
  return {
    server,
    hostFor: (tenant, elicitation, session) => consoleHost(queue, tenant, { elicitation, session }),
  };
}
