/**
 * The one way out of a sandbox's network namespace: inside, where only `lo`
 * exists, a relay listens on 127.0.0.1:PORT and passes every connection to
 * the egress proxy's unix socket, bound into the sandbox from the host. The
 * command starts only once the relay listens, so its first connection cannot
 * race it.
 *
 * The relay is a resident Perl program of ours where `perl` is installed
 * (`policy/egress/_relay.ts`: one process for all of a command's
 * connections; perl-base is part of every Debian and Ubuntu system), else
 * `socat` (what the sandbox runtime behind Claude Code uses), which forks a
 * child per connection: on a loaded machine that fork costs tens of
 * milliseconds per connection, more than a 1 MB download itself. Either
 * starts in milliseconds; a relay in JavaScript would cost a runtime start
 * (tens of milliseconds, tens of MiB) per command. The relay decides
 * nothing: the proxy on the host judges every connection.
 *
 * @module
 */
import path from "node:path";
import { execFile } from "node:child_process";
import { PROBE_PERL, RELAY_CONSTANTS, RELAY_PERL } from "./_relay.ts";
import { hostProgramCandidates, runProbe } from "@toolfence/internal";

/** Where the proxy's socket is bound inside the sandbox (the private /tmp, so nothing of the host's is shadowed). */
export const SANDBOX_PROXY_SOCKET = "/tmp/.toolfence-egress.sock";

/** The egress proxy a sandbox reaches: see `SandboxOptions.network`. */
export interface SandboxProxy {
  /** The proxy's unix socket on the host. */
  socket: string;
  /** The port inside the sandbox where the forwarder listens on 127.0.0.1. */
  port: number;
  /** The program that relays (see {@linkcode findForwarder}). */
  forwarder: Forwarder;
}

/**
 * The relay inside the sandbox: the resident Perl relay (with this system's
 * socket constants, probed once, so that the relay loads no Perl module), or
 * socat (a process per connection).
 */
export type Forwarder =
  | { kind: "perl"; path: string; constants: string }
  | { kind: "socat"; path: string };

const found = new Map<string, Promise<string | undefined>>();

// Where a program the server itself runs is looked for: system folders only. The PATH may lead into the workspace
// (`npm run` puts node_modules/.bin first), where a command could plant a `perl` that the probe would run outside
// the sandbox. socat runs beside every command with egress, so it is looked for in the system folders first too, and
// then only in PATH's absolute folders outside the server's working folder (see hostProgramCandidates): before
// 2026-12-05 PATH came first, and under the narrow read of `deno task serve` (which does not read /usr, so perl was
// never found) the relay was a `socat` the workspace's node_modules/.bin held: a program no rule judged, started
// beside an allowlisted `ls`.
const SYSTEM_DIRS = ["/usr/bin", "/bin", "/usr/local/bin"];

// The first `name` of the system folders (then PATH's, when `onPath`) that answers `answers`, looked up once per
// process. One the runtime may not look at (a narrow --allow-read) is tried by its absolute path.
function findProgram(
  name: string,
  onPath: boolean,
  answers: (file: string) => Promise<boolean>,
): Promise<string | undefined> {
  let lookup = found.get(name);
  if (lookup === undefined) {
    lookup = (async () => {
      const known = SYSTEM_DIRS.map((dir) => path.join(dir, name));
      const files = (await hostProgramCandidates(name, known)).filter((file) => onPath || known.includes(file));
      for (const file of files) if (await answers(file)) return file;
      return undefined;
    })();
    found.set(name, lookup);
  }
  return lookup;
}

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
  return findProgram("socat", true, async (file) => (await runProbe(file, ["-V"], PROBE_MS)).ok);
}

const PROBE_MS = 10_000;

/**
 * The relay sandboxed commands get: `perl` (resident, preferred) where it is
 * installed in a system folder (`/usr/bin`, `/bin`, `/usr/local/bin`: the
 * server runs it once to probe the constants, so never from a PATH that may
 * lead into a workspace) and answers the probe, else `socat`, else `undefined`:
 * sandboxed commands then get no network at all. Looked up once per process.
 *
 * Requires `--allow-read` of the folders, `--allow-env=PATH`, `--allow-run` of perl.
 *
 * @example
 * ```ts
 * import { findForwarder } from "@toolfence/policy";
 * const forwarder = await findForwarder();
 * console.log(forwarder ? `${forwarder.kind} at ${forwarder.path}` : "no egress for sandboxed commands");
 * ```
 */
export function findForwarder(): Promise<Forwarder | undefined> {
  forwarderFound ??= (async () => {
    let constants: string | undefined;
    const perl = await findProgram(
      "perl",
      false,
      async (file) => (constants = await probeConstants(file)) !== undefined,
    );
    if (perl !== undefined && constants !== undefined) return { kind: "perl", path: perl, constants };
    const socat = await findSocat();
    return socat === undefined ? undefined : { kind: "socat", path: socat };
  })();
  return forwarderFound;
}

let forwarderFound: Promise<Forwarder | undefined> | undefined;

// The relay's constants as perl prints them, or undefined when perl lacks its modules or may not run.
function probeConstants(perl: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    try {
      // No inherited environment (PERL5LIB, PERL5OPT could point perl at modules in a workspace) and no workspace cwd.
      execFile(perl, ["-e", PROBE_PERL], { timeout: PROBE_MS, env: {}, cwd: "/" }, (error, stdout) => {
        const numbers = stdout.trim().split(" ");
        const valid = !error && numbers.length === RELAY_CONSTANTS.length && numbers.every((n) => /^\d+$/.test(n));
        resolve(valid ? numbers.join(" ") : undefined);
      });
    } catch {
      resolve(undefined);
    }
  });
}

// socat's: $1 the port, $2 the socket, then the command. A forwarder that dies or
// does not listen within ~3000 looks ends the sandbox with 125 and a reason.
const SOCAT_LAUNCHER = [
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
 * POSIX shell inside (socat's launcher needs one; the Perl relay execs the
 * command itself).
 */
export function forwarderArgv(proxy: SandboxProxy, argv: readonly string[], shell = "/bin/sh"): string[] {
  const forwarder = proxy.forwarder;
  const where = [String(proxy.port), SANDBOX_PROXY_SOCKET];
  return forwarder.kind === "perl"
    ? [forwarder.path, "-e", RELAY_PERL, forwarder.constants, ...where, ...argv]
    : [shell, "-c", SOCAT_LAUNCHER, forwarder.path, ...where, ...argv];
}

/** The bubblewrap arguments that bind the proxy's socket inside (read-only: connecting needs no write). */
export function proxyMountArgs(proxy: SandboxProxy): string[] {
  return ["--ro-bind", proxy.socket, SANDBOX_PROXY_SOCKET];
}

/**
 * The environment that sends a command's clients through the forwarder:
 * the standard proxy variables (curl, wget, git, pip, deno, Go, Python), npm's
 * and cargo's own. Loopback is left direct (`NO_PROXY`), where only the
 * sandbox's own private loopback answers, unless `proxyLoopback`: then
 * `NO_PROXY` is empty and every loopback request goes to the proxy, which
 * judges it and connects from the host (where `network.allow` names a
 * loopback server: a direct request would reach the sandbox's empty loopback).
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { proxyEnvironment } from "@toolfence/policy";
 * console.log(proxyEnvironment(3128).HTTPS_PROXY); // http://127.0.0.1:3128
 * ```
 */
export function proxyEnvironment(port: number, proxyLoopback = false): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  const direct = proxyLoopback ? "" : "localhost,127.0.0.1,::1";
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
