/**
 * A private PostgreSQL cluster for a test: `initdb` in a temp dir, the server
 * on a free port of 127.0.0.1 (and a socket in that dir), stopped and removed
 * by `stop()`. The binaries come from `PG_BIN`, else the newest
 * `/usr/lib/postgresql/<version>/bin` (Debian's place, not on the PATH), else
 * the PATH. PostgreSQL refuses to run as root: as root, the cluster runs as
 * `nobody` (through `setpriv`), in a temp dir that user owns.
 *
 * A test that needs it asks {@linkcode postgresMissing} first and skips with
 * its reason when PostgreSQL is not installed.
 *
 * @module
 */

import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { exited } from "./_exited.ts";

const NOBODY = 65534;

function binDir(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      if (existsSync(join(root, version, "bin", "initdb"))) return join(root, version, "bin");
    }
  }
  const found = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).stdout.trim();
  return found ? found.replace(/\/initdb$/, "") : undefined;
}

const asRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** Why no cluster can be started here, or undefined when one can. */
export function postgresMissing(): string | undefined {
  const bin = binDir();
  if (!bin || !existsSync(join(bin, "postgres"))) {
    return "PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin, PG_BIN or the PATH)";
  }
  if (asRoot && spawnSync("setpriv", ["--version"]).status !== 0) {
    return "running as root without setpriv: PostgreSQL refuses to run as root";
  }
  return undefined;
}

/** A running private cluster. */
export interface PostgresCluster {
  /** `postgres://toolfence@127.0.0.1:PORT/postgres` */
  url: string;
  /** Stops the server and removes its files. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

function command(bin: string, program: string, args: string[]): [string, string[]] {
  const path = join(bin, program);
  return asRoot
    ? ["setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", path, ...args]]
    : [path, args];
}

/** Starts a private cluster; throws when it does not come up within 60 s. */
export async function startPostgres(): Promise<PostgresCluster> {
  const missing = postgresMissing();
  if (missing) throw new Error(missing);
  const bin = binDir()!;
  const dir = mkdtempSync(join(tmpdir(), "toolfence-pg-"));
  if (asRoot) chownSync(dir, NOBODY, NOBODY);
  const data = join(dir, "data");
  const [initProgram, initArgs] = command(bin, "initdb", [
    "-D",
    data,
    "-U",
    "toolfence",
    "-A",
    "trust",
    "-E",
    "UTF8",
    "--locale=C",
    "--no-sync",
    "--no-instructions",
  ]);
  const init = spawnSync(initProgram, initArgs, { encoding: "utf8", cwd: dir });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.error?.message}`);
  }
  const port = await freePort();
  const [program, args] = command(bin, "postgres", [
    "-D",
    data,
    "-p",
    String(port),
    "-k",
    dir,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "fsync=off",
    "-c",
    "synchronous_commit=off",
    "-c",
    "full_page_writes=off",
    "-c",
    "max_connections=200",
  ]);
  const server = spawn(program, args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  const done = exited(server);
  let log = "";
  server.stderr!.on("data", (chunk) => (log = (log + chunk).slice(-4000)));
  const stop = async () => {
    // SIGINT: PostgreSQL's fast shutdown (disconnects clients, no waiting for them).
    if (server.exitCode === null) server.kill("SIGINT");
    await done;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = spawnSync(join(bin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-q"]);
    if (ready.status === 0) break;
    if (server.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`PostgreSQL did not start: ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url: `postgres://toolfence@127.0.0.1:${port}/postgres`, stop };
}
