/**
 * The OS sandbox for shell commands. Deno's and Node's permission flags stop at
 * the process boundary: a program started with `--allow-run` may do anything
 * the user may. Where bubblewrap works, commands run with the root file system
 * read-only, only the workspace and temp dir writable, a private `/tmp`, no
 * network unless allowed, and they die with the process that started them.
 *
 * @module
 */
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { ToolError } from "@toolfence/core";
import { isAbsoluteClean, isWithin } from "./_paths.ts";
import { runProbe } from "./_probe_process.ts";

/** `auto`: sandbox when bubblewrap works here; `required`: refuse to run without it; `off`: never. */
export type SandboxMode = "auto" | "required" | "off";

/** Whether bubblewrap can sandbox commands here, and why not. */
export interface BubblewrapStatus {
  /** Path of a working `bwrap`; the bare name `bwrap` when a narrow fence hid the folders. */
  path?: string;
  /** Why bubblewrap is unavailable (not installed, or cannot create namespaces here). */
  reason?: string;
}

const KNOWN_LOCATIONS = [
  "/usr/bin/bwrap",
  "/usr/local/bin/bwrap",
  "/bin/bwrap",
];
const PROBE_TIMEOUT_MS = 5000;

let statusPromise: Promise<BubblewrapStatus> | undefined;

async function candidates(): Promise<string[]> {
  const found: string[] = [];
  let searchPath = "";
  try {
    searchPath = process.env.PATH ?? "";
  } catch {
    // Without env access (Deno's --allow-env) only the usual locations are tried.
  }
  for (
    const dir of [
      ...searchPath.split(":").filter((d) => path.isAbsolute(d)),
      ...KNOWN_LOCATIONS,
    ]
  ) {
    const file = dir.endsWith("/bwrap") ? dir : path.join(dir, "bwrap");
    if (found.includes(file)) continue;
    try {
      // stat, not access(X_OK): under Deno with read but no sys permission, access
      // fails in a way no try/catch sees and ends the process.
      const info = await fsp.stat(file);
      if (info.isFile() && (info.mode & 0o111) !== 0) found.push(file);
    } catch {
      // not here, or not visible under the fence
    }
  }
  // Under a narrow fence the folders cannot be searched, but the runtime can
  // still start a program it was allowed to run by name (--allow-run=bwrap).
  found.push("bwrap");
  return found;
}

// Every sandbox starts from this root: everything read-only, private /dev, /proc and /tmp.
const ROOT_MOUNTS = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
// And ends with this isolation: its own session, no capabilities, gone with its parent.
const CONFINEMENT = ["--die-with-parent", "--new-session", "--cap-drop", "ALL"];

// The probe uses the same namespaces and mounts as real commands: in many
// containers bwrap is installed but user namespaces or /proc mounts are not allowed.
const PROBE_ARGS = [...ROOT_MOUNTS, "--unshare-all", ...CONFINEMENT, "--", "true"];

/**
 * Whether bubblewrap works here: found and able to start a sandbox like the ones
 * {@linkcode sandboxArgv} builds. Probed once per process and cached.
 *
 * Requires `--allow-run=bwrap`.
 *
 * @example
 * ```ts
 * import { bubblewrapStatus } from "@toolfence/policy";
 * const status = await bubblewrapStatus();
 * console.log(status.path ?? `no sandbox: ${status.reason}`);
 * ```
 */
export function bubblewrapStatus(): Promise<BubblewrapStatus> {
  statusPromise ??= (async () => {
    const files = await candidates();
    const failures: string[] = [];
    for (const file of files) {
      const probe = await runProbe(file, PROBE_ARGS, PROBE_TIMEOUT_MS);
      if (probe.ok) return { path: file };
      failures.push(`${file}: ${probe.message}`);
    }
    const reason = files.length === 1
      ? "bubblewrap (bwrap) is not installed, or the runtime may not run it (--allow-run=bwrap)"
      : "bubblewrap cannot create a sandbox here";
    return { reason: `${reason}: ${failures.join("; ")}` };
  })();
  return statusPromise;
}

/**
 * The path of a working `bwrap`, or `undefined` when bubblewrap is missing or
 * cannot run here (see {@linkcode bubblewrapStatus} for the reason).
 *
 * Requires `--allow-run=bwrap`.
 *
 * @example
 * ```ts
 * import { bubblewrapPath } from "@toolfence/policy";
 * console.log(await bubblewrapPath());
 * ```
 */
export async function bubblewrapPath(): Promise<string | undefined> {
  return (await bubblewrapStatus()).path;
}

/** Options of {@linkcode sandboxArgv}. */
export interface SandboxOptions {
  /** The folder the command starts in (absolute). */
  workdir: string;
  /** Absolute real paths the command may write: the workspace and the temp dir. */
  writable: string[];
  /** Keep the network (default: only a private loopback). */
  allowNet?: boolean;
  /** See {@linkcode SandboxMode}. */
  mode: SandboxMode;
}

/**
 * Wraps `argv` so that it runs under bubblewrap: `/` bound read-only, `/dev`
 * and `/proc` fresh, a private `/tmp`, then the writable paths bound
 * read-write (after the `/tmp` mount, so a workspace under `/tmp` stays
 * visible), every namespace unshared (the network kept only with `allowNet`),
 * all capabilities dropped, a new session (so the command cannot push input
 * into the caller's terminal with TIOCSTI; the price is no job control), and
 * killed when its parent dies.
 *
 * With `mode: "off"`, or `"auto"` where bubblewrap does not work, `argv` comes
 * back unchanged with `sandboxed: false`; `"required"` then throws
 * `sandbox_unavailable`.
 *
 * Requires `--allow-run=bwrap` to probe bubblewrap.
 *
 * @example
 * ```ts
 * import { sandboxArgv } from "@toolfence/policy";
 * const { argv, sandboxed } = await sandboxArgv(["bash", "-c", "ls"], {
 *   workdir: "/home/me/project",
 *   writable: ["/home/me/project"],
 *   mode: "auto",
 * });
 * console.log(sandboxed, argv);
 * ```
 */
export async function sandboxArgv(
  argv: string[],
  options: SandboxOptions,
): Promise<{ argv: string[]; sandboxed: boolean }> {
  if (argv.length === 0) throw new TypeError("sandboxArgv needs a command");
  if (options.mode === "off") return { argv: [...argv], sandboxed: false };
  if (options.mode !== "auto" && options.mode !== "required") {
    throw new TypeError(`Unknown sandbox mode ${JSON.stringify(options.mode)}`);
  }
  for (const p of [options.workdir, ...options.writable]) {
    if (!isAbsoluteClean(p)) {
      throw new TypeError(
        `Sandbox paths must be absolute, got ${JSON.stringify(p)}`,
      );
    }
  }
  const status = await bubblewrapStatus();
  if (status.path === undefined) {
    if (options.mode === "auto") return { argv: [...argv], sandboxed: false };
    throw new ToolError(
      `The OS sandbox is required but unavailable: ${status.reason}`,
      {
        code: "sandbox_unavailable",
        kind: "policy",
        recoverable: false,
        recoveryHint: "Ask the user to install bubblewrap or to allow running without the sandbox.",
        details: { reason: status.reason },
      },
    );
  }
  // Parents before children, so that a nested bind is not hidden by its parent's.
  const writable = [...new Set(options.writable.map((p) => path.normalize(p)))]
    .sort((a, b) => a.split("/").length - b.split("/").length);
  const workdir = path.normalize(options.workdir);
  // A read-only workdir under /tmp would otherwise vanish under the private /tmp.
  const readOnlyWorkdir = writable.some((p) => isWithin(workdir, p)) ? [] : ["--ro-bind", workdir, workdir];
  const wrapped = [
    status.path,
    ...ROOT_MOUNTS,
    ...readOnlyWorkdir,
    ...writable.flatMap((p) => ["--bind", p, p]),
    "--unshare-all",
    ...(options.allowNet ? ["--share-net"] : []),
    ...CONFINEMENT,
    "--chdir",
    workdir,
    "--",
    ...argv,
  ];
  return { argv: wrapped, sandboxed: true };
}
