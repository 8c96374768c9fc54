/**
 * A sandboxed command's network: where the policy files give commands the
 * egress proxy (`sandbox.network`, or a `network.allow`), each command gets
 * its own proxy listener on a unix socket in a private folder on the host,
 * judged by the session's one judge (`Policy.judgeConnection`: answers are
 * remembered for the session), every request and tunnel recorded with the
 * command that made it, the refusals kept for the command's result.
 *
 * @module
 */
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { ToolContext } from "@toolfence/core";
import {
  allowsLoopback,
  bubblewrapPath,
  type ConnectionPool,
  type EgressConnection,
  findForwarder,
  Policy,
  proxyEnvironment,
  type SandboxProxy,
  startEgressProxy,
} from "@toolfence/policy";

/** The port of the forwarder inside the sandbox, on its private loopback. */
export const SANDBOX_PROXY_PORT = 3128;

/**
 * How many questions about destinations not on the allowlist one command may
 * cause; past it they are refused without asking (a loop over ports or
 * subdomains would otherwise ask a person again and again).
 */
export const MAX_NETWORK_QUESTIONS = 5;

/**
 * Most connections the proxies of one workspace's commands (a session's, its sub-agents', every session of an HTTP
 * tenant) hold at once, together: a quarter of the server's (`SERVER_PROXY_CONNECTIONS`). Before, one session's 8
 * background jobs, each holding its proxy's 256, held all 2,048 of the server, and every other session's commands
 * (and browsers) were answered 503; and while the share was a session's, one tenant's five sessions did the same to
 * every other tenant (bob's curl answered `503 the server's proxies hold 2048 connections at once`).
 */
export const SESSION_PROXY_CONNECTIONS = 512;

// By the workspace's folder, as the commands' shared cgroup is: a tenant's sessions each have a Workspace of their
// own, in the one folder.
const workspacePools = new Map<string, ConnectionPool>();

/** How many refused requests and tunnels a command's result lists; past it, one line counts the rest. */
export const MAX_REFUSALS_LISTED = 50;

/**
 * How many of one command's connections the audit records one by one, refused and allowed; past it, one
 * summary record each time their count reaches a power of two, and one when the command ends. Each record carried the whole
 * command line: a command of 90,000 characters that made 4,000 refused connections in 26 s rotated the whole
 * audit log (four files of 10 MiB) and every earlier record out of it.
 */
export const MAX_CONNECTIONS_RECORDED = { refused: 100, allowed: 500 } as const;

// Counts one command's connections of one kind and says which to record: each of the first `max`, then a
// summary each time the count reaches a power of two past twice `max`, and one at the end.
class ConnectionRecords {
  count = 0;
  #summarized = 0;
  constructor(readonly max: number) {}
  // "each" for a connection recorded on its own, "summary" when the count just doubled, else undefined.
  next(): "each" | "summary" | undefined {
    this.count++;
    if (this.count <= this.max) return "each";
    const doubled = this.count >= this.max * 2 && (this.count & (this.count - 1)) === 0 &&
      this.count > this.#summarized;
    if (!doubled) return undefined;
    this.#summarized = this.count;
    return "summary";
  }
  // Whether connections were left unrecorded since the last summary.
  unsummarized(): boolean {
    return this.count > this.max && this.count > this.#summarized;
  }
}

/** The egress of one command. */
export interface CommandEgress {
  /** For `sandboxArgv`'s `network`. */
  network: { proxy: SandboxProxy };
  /** The proxy variables for the command's environment. */
  env: Record<string, string>;
  /** The requests and tunnels refused so far, one line each (`CONNECT host:port: why`). */
  refusals: string[];
  /** Stops the listener and removes its folder; call once the command is gone. */
  close(): Promise<void>;
}

/**
 * The egress of `command`, or `undefined` when it gets no network: the
 * policy gives commands none, the sandbox is off or does not work here
 * (unsandboxed commands are not confined to begin with), or no relay (perl, socat) is installed.
 */
export async function commandEgress(ctx: ToolContext, command: string): Promise<CommandEgress | undefined> {
  const policy = ctx.policy;
  if (!(policy instanceof Policy) || policy.commandNetwork.mode !== "proxy" || policy.sandbox === "off") {
    return undefined;
  }
  const [bwrap, forwarder] = await Promise.all([bubblewrapPath(), findForwarder()]);
  if (bwrap === undefined || forwarder === undefined) return undefined;
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-egress-"));
  const socket = path.join(dir, "proxy.sock");
  const refusals: string[] = [];
  let unlisted = 0;
  const questions = { max: MAX_NETWORK_QUESTIONS, asked: 0, held: new Map() };
  const records = {
    refused: new ConnectionRecords(MAX_CONNECTIONS_RECORDED.refused),
    allowed: new ConnectionRecords(MAX_CONNECTIONS_RECORDED.allowed),
  };
  const summarize = (allowed: boolean, last: EgressConnection) => {
    const kind = allowed ? "allowed" : "refused";
    const { count, max } = records[kind];
    policy.recordConnection({
      ...last,
      reason: `${count} ${kind} requests and tunnels of this command so far; past the first ${max} only counted ` +
        `(the last: ${last.method} ${last.target}${last.reason ? `: ${last.reason}` : ""})`,
    }, command);
  };
  const lastOf: { allowed?: EgressConnection; refused?: EgressConnection } = {};
  try {
    // By workspace folder: a session's sub-agents and every session of its tenant work in the same one, and share
    // its count.
    const key = ctx.workspace.workdir;
    let share = workspacePools.get(key);
    if (share === undefined) workspacePools.set(key, share = { max: SESSION_PROXY_CONNECTIONS, open: 0 });
    const proxy = await startEgressProxy({
      listen: { path: socket },
      shares: [share],
      judge: (scheme, host, port) =>
        policy.judgeConnection(scheme, host, port, { command, signal: ctx.signal, questions }),
      onConnection: (connection) => {
        const kind = connection.allowed ? "allowed" : "refused";
        lastOf[kind] = connection;
        const record = records[kind].next();
        if (record === "each") policy.recordConnection(connection, command);
        else if (record === "summary") summarize(connection.allowed, connection);
        if (connection.allowed) return;
        // Kept up to a few dozen lines, then counted: a command that made a refused request a millisecond for as
        // long as it ran (a background job: for ever) grew this list, held by the server, without end.
        if (refusals.length < MAX_REFUSALS_LISTED) {
          refusals.push(`${connection.method} ${connection.target}: ${connection.reason}`);
        } else refusals[MAX_REFUSALS_LISTED] = `... and ${++unlisted} more refused`;
      },
    });
    return {
      network: { proxy: { socket, port: SANDBOX_PROXY_PORT, forwarder } },
      env: proxyEnvironment(SANDBOX_PROXY_PORT, allowsLoopback(policy.networkRules.allow)),
      refusals,
      close: () =>
        proxy.close().finally(() => {
          for (const kind of ["refused", "allowed"] as const) {
            const last = lastOf[kind];
            if (last && records[kind].unsummarized()) summarize(kind === "allowed", last);
          }
          return fsp.rm(dir, { recursive: true, force: true });
        }),
    };
  } catch (error) {
    await fsp.rm(dir, { recursive: true, force: true });
    throw error;
  }
}
