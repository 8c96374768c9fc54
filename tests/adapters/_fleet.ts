// Helpers of the fleet tests and the fleet bench: `serve --http` replicas as real processes of main.ts on one
// store, and a small load balancer in front of them (round robin, or failover to the next replica when one
// stops answering), streaming bodies both ways as a real one does.

import { type ChildProcess, spawn } from "node:child_process";
import { createServer, request as httpRequest, type Server } from "node:http";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { type Exit, exited } from "../_exited.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A replica: its process, its URL (and its console's, when it serves one), and how it ended. */
export interface Replica {
  url: URL;
  console?: URL;
  child: ChildProcess;
  exit: Promise<Exit>;
  /** Everything it wrote on stderr so far. */
  log(): string;
}

/** Starts `main.ts serve --http` on a free port with `args` (the store, tokens, workspace...). */
export async function startReplica(args: string[]): Promise<Replica> {
  const child = spawn(
    process.execPath,
    ["run", "-A", join(ROOT, "main.ts"), "serve", "--http", "127.0.0.1:0", ...args],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const exit = exited(child);
  let stderr = "";
  // With --console, it is serving once it has said so of both.
  const serving = args.includes("--console")
    ? /serving MCP on (\S+)\n.*serving the console on (\S+)/
    : /serving MCP on (\S+)/;
  const [url, console] = await new Promise<[URL, URL?]>((resolve, reject) => {
    child.stderr!.on("data", (chunk) => {
      stderr += chunk;
      const found = serving.exec(stderr);
      if (found) resolve([new URL(found[1]), found[2] ? new URL(found[2]) : undefined]);
    });
    void exit.then(() => reject(new Error(`the replica exited before serving:\n${stderr}`)));
  });
  return { url, ...(console ? { console } : {}), child, exit, log: () => stderr };
}

/**
 * The arguments of a replica serving the tenants of `dir` (its `tokens.json`,
 * `tenants/` and `tmp/`) on `store`, without the sandbox, then `extra`.
 */
export function replicaArgs(dir: string, store: string | undefined, ...extra: string[]): string[] {
  return [
    ...(store ? ["--store", store] : []),
    "--token-file",
    join(dir, "tokens.json"),
    "--tenant-root",
    join(dir, "tenants"),
    "--workspace",
    join(dir, "tenants"),
    "--temp-dir",
    join(dir, "tmp"),
    "--sandbox",
    "off",
    // Two tenants' commands without the sandbox: what the fleet's sessions, questions and grants are tested with.
    "--allow-unsandboxed-tenants",
    ...extra,
  ];
}

/** Stops a replica: SIGKILL (as a crash) or SIGTERM (a graceful shutdown); resolves once it has exited. */
export async function stopReplica(replica: Replica, signal: "SIGKILL" | "SIGTERM" = "SIGTERM"): Promise<void> {
  replica.child.kill(signal);
  await replica.exit;
}

/** A load balancer in front of replicas. */
export interface Balancer {
  url: URL;
  /** Takes a replica out of the rotation (as a health check would once it stops answering). */
  remove(replica: Replica): void;
  close(): Promise<void>;
}

/**
 * Round robin over `replicas` for new sessions, then sticky: a request with an
 * `Mcp-Session-Id` goes to the replica that opened (or last served) that
 * session while it is in the rotation. With `failover`, always the first
 * still in the rotation. A request a replica cannot take (its connection
 * refused) goes to the next one.
 */
export async function startBalancer(
  replicas: Replica[],
  mode: "round-robin" | "failover" = "round-robin",
): Promise<Balancer> {
  const live = [...replicas];
  const sticky = new Map<string, Replica>();
  let next = 0;
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const body = Buffer.concat(chunks);
      const attempt = (tries: number) => {
        if (live.length === 0 || tries >= live.length) {
          outgoing.writeHead(502).end();
          return;
        }
        const session = incoming.headers["mcp-session-id"] as string | undefined;
        const held = session === undefined ? undefined : sticky.get(session);
        const replica = mode === "failover"
          ? live[tries]
          : held && tries === 0 && live.includes(held)
          ? held
          : live[next++ % live.length];
        const target = replica.url;
        const forwarded = httpRequest({
          hostname: target.hostname,
          port: target.port,
          path: incoming.url,
          method: incoming.method,
          headers: { ...incoming.headers, host: target.host },
        }, (answer) => {
          const opened = answer.headers["mcp-session-id"] as string | undefined;
          if (opened) sticky.set(opened, replica);
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
          answer.on("error", () => outgoing.destroy());
        });
        forwarded.on("error", () => {
          if (outgoing.headersSent) outgoing.destroy();
          else attempt(tries + 1);
        });
        outgoing.on("close", () => forwarded.destroy());
        forwarded.end(body);
      };
      attempt(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    remove: (replica) => {
      const index = live.indexOf(replica);
      if (index >= 0) live.splice(index, 1);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
