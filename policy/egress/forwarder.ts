/**
 * The one way out of a sandbox's network namespace: inside, where only `lo`
 * exists, `socat` listens on 127.0.0.1:PORT and relays every connection to
 * the egress proxy's unix socket, bound into the sandbox from the host. The
 * command starts only once the forwarder listens (read from
 * `/proc/net/tcp`, which shows the namespace's own sockets), so its first
 * connection cannot race the forwarder.
 *
 * socat and not a program of ours: it is one small process per sandbox
 * (a few hundred KiB), starts in about a millisecond, and is what the
 * sandbox runtime behind Claude Code uses for the same relay; a forwarder in
 * JavaScript would cost a runtime start (tens of milliseconds, tens of MiB)
 * per command.
 *
 * @module
 */
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";

/** Where the proxy's socket is bound inside the sandbox (the private /tmp, so nothing of the host's is shadowed). */
export const SANDBOX_PROXY_SOCKET = "/tmp/.toolfence-egress.sock";

/** The egress proxy a sandbox reaches: see `SandboxOptions.network`. */
export interface SandboxProxy {
  /** The proxy's unix socket on the host. */
  socket: string;
  /** The port inside the sandbox where the forwarder listens on 127.0.0.1. */
  port: number;
  /** The `socat` that forwards (see {@linkcode findSocat}). */
  socat: string;
}

const SOCAT_LOCATIONS = ["/usr/bin/socat", "/usr/local/bin/socat", "/bin/socat"];

let socatFound: Promise<string | undefined> | undefined;

/**
 * The path of `socat` (on the PATH or in the usual places), or `undefined`
 * when it is not installed: sandboxed commands then get no network at all.
 * Looked up once per process.
 *
 * Requires `--allow-read` of the folders, `--allow-env=PATH`.
 *
 * @example
 * ```ts
 * import { findSocat } from "@toolfence/policy";
 * console.log(await findSocat() ?? "socat is not installed: no egress for sandboxed commands");
 * ```
 */
export function findSocat(): Promise<string | undefined> {
  socatFound ??= (async () => {
    let searchPath = "";
    try {
      searchPath = process.env.PATH ?? "";
    } catch {
      // Without env access only the usual places are tried.
    }
    const dirs = searchPath.split(":").filter((d) => path.isAbsolute(d));
    for (const file of [...dirs.map((d) => path.join(d, "socat")), ...SOCAT_LOCATIONS]) {
      try {
        const info = await fsp.stat(file);
        if (info.isFile() && (info.mode & 0o111) !== 0) return file;
      } catch {
        // not here
      }
    }
    return undefined;
  })();
  return socatFound;
}

// $1 the port, $2 the socket, then the command. A forwarder that dies or
// does not listen within ~3000 looks ends the sandbox with 125 and a reason.
const LAUNCHER = [
  `"$0" -b 262144 TCP-LISTEN:"$1",bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:"$2" </dev/null >/dev/null 2>&1 &`,
  "f=$!",
  `p=$(printf %04X "$1")`,
  "i=0",
  `until grep -qs " 0100007F:$p 00000000:0000 0A" /proc/net/tcp; do`,
  "  i=$((i+1))",
  `  if ! kill -0 "$f" 2>/dev/null || [ "$i" -gt 3000 ]; then`,
  `    echo "toolfence: the egress forwarder (socat) did not start; the command has no network" >&2`,
  "    exit 125",
  "  fi",
  "done",
  "shift 2",
  `exec "$@"`,
].join("\n");

/**
 * The argv that starts the forwarder inside the sandbox and then `argv`
 * (exec'd, so it keeps the process's place and exit status). `shell` is the
 * POSIX shell inside.
 */
export function forwarderArgv(proxy: SandboxProxy, argv: readonly string[], shell = "/bin/sh"): string[] {
  return [shell, "-c", LAUNCHER, proxy.socat, String(proxy.port), SANDBOX_PROXY_SOCKET, ...argv];
}

/** The bubblewrap arguments that bind the proxy's socket inside (read-only: connecting needs no write). */
export function proxyMountArgs(proxy: SandboxProxy): string[] {
  return ["--ro-bind", proxy.socket, SANDBOX_PROXY_SOCKET];
}

/**
 * The environment that sends a command's clients through the forwarder:
 * the standard proxy variables (curl, wget, git, pip, deno, Go, Python), npm's
 * and cargo's own; loopback is left direct, where only the sandbox's own
 * private loopback answers.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { proxyEnvironment } from "@toolfence/policy";
 * console.log(proxyEnvironment(3128).HTTPS_PROXY); // http://127.0.0.1:3128
 * ```
 */
export function proxyEnvironment(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  const direct = "localhost,127.0.0.1,::1";
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    all_proxy: url,
    NO_PROXY: direct,
    no_proxy: direct,
    npm_config_proxy: url,
    npm_config_https_proxy: url,
    CARGO_HTTP_PROXY: url,
    PIP_PROXY: url,
  };
}
