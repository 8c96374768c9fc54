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
  bubblewrapPath,
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

/** How many refused requests and tunnels a command's result lists; past it, one line counts the rest. */
export const MAX_REFUSALS_LISTED = 50;

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
  const questions = { max: MAX_NETWORK_QUESTIONS, asked: 0 };
  try {
    const proxy = await startEgressProxy({
      listen: { path: socket },
      judge: (scheme, host, port) =>
        policy.judgeConnection(scheme, host, port, { command, signal: ctx.signal, questions }),
      onConnection: (connection) => {
        policy.recordConnection(connection, command);
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
      env: proxyEnvironment(SANDBOX_PROXY_PORT),
      refusals,
      close: () => proxy.close().finally(() => fsp.rm(dir, { recursive: true, force: true })),
    };
  } catch (error) {
    await fsp.rm(dir, { recursive: true, force: true });
    throw error;
  }
}
