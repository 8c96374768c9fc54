/**
 * The runtime-specific half of the fence: asking Deno or Node whether an
 * operation is permitted, and recognising the errors each runtime throws when it
 * is not. Everything else in `policy/` is runtime-neutral.
 *
 * @module
 */

import os from "node:os";

/** The permissions the fence knows; mirrors `FencePermission` in fence.ts. */
export type RuntimePermission = "read" | "write" | "run" | "net" | "env" | "sys";

/** A runtime's answer, with the flag that would open a closed permission. */
export interface RuntimeAnswer {
  /** Whether the runtime allows it. */
  allowed: boolean;
  /** The flag that would open a closed permission (`--allow-read=/x`). */
  flag?: string;
}

interface DenoPermissionStatusLike {
  state: "granted" | "prompt" | "denied";
}
interface DenoLike {
  permissions: {
    querySync(descriptor: Record<string, unknown>): DenoPermissionStatusLike;
  };
}
interface NodePermissionLike {
  has(scope: string, reference?: string): boolean;
}

function deno(): DenoLike | undefined {
  const candidate = (globalThis as unknown as { Deno?: DenoLike }).Deno;
  return typeof candidate?.permissions?.querySync === "function" ? candidate : undefined;
}

function nodePermission(): NodePermissionLike | undefined {
  if (deno()) return undefined;
  const proc = (globalThis as { process?: { permission?: NodePermissionLike } }).process;
  return typeof proc?.permission?.has === "function" ? proc.permission : undefined;
}

/** Which runtime fence is in force: `deno`, `node` (started with a permission flag) or `none`. */
export function runtimeFenceKind(): "deno" | "node" | "none" {
  if (deno()) return "deno";
  if (nodePermission()) return "node";
  return "none";
}

function denoDescriptor(
  permission: RuntimePermission,
  target?: string,
): Record<string, unknown> {
  if (target === undefined) return { name: permission };
  switch (permission) {
    case "read":
    case "write":
      return { name: permission, path: target };
    case "run":
      return { name: "run", command: target };
    case "net":
      return { name: "net", host: target };
    case "env":
      return { name: "env", variable: target };
    case "sys":
      return { name: "sys", kind: target };
  }
}

/** The `deno run` flag that opens `permission` for `target` (all targets when omitted). */
export function denoFlag(
  permission: RuntimePermission,
  target?: string,
): string {
  return target === undefined ? `--allow-${permission}` : `--allow-${permission}=${target}`;
}

/** The Node 20 flag that opens `permission` for `target`, if Node fences it at all. */
export function nodeFlag(
  permission: RuntimePermission,
  target?: string,
): string | undefined {
  switch (permission) {
    case "read":
      return target === undefined ? "--allow-fs-read=*" : `--allow-fs-read=${target}`;
    case "write":
      return target === undefined ? "--allow-fs-write=*" : `--allow-fs-write=${target}`;
    case "run":
      return "--allow-child-process";
    default:
      return undefined;
  }
}

/**
 * The flag that opens `permission` for `target` on the running runtime: Node's
 * under Node's permission model, Deno's otherwise. For messages written where a
 * runtime refused an operation, so that a Node user is not told a Deno flag.
 */
export function runtimeFlag(
  permission: "read" | "write" | "run",
  target?: string,
): string {
  return runtimeFenceKind() === "node" ? nodeFlag(permission, target)! : denoFlag(permission, target);
}

function nodeScope(permission: RuntimePermission): string | undefined {
  switch (permission) {
    case "read":
      return "fs.read";
    case "write":
      return "fs.write";
    case "run":
      return "child";
    default:
      // Node 20's permission model has no network, environment or system scopes.
      return undefined;
  }
}

const grantsSeen = new Set<string>();
const MAX_GRANTS_SEEN = 4096;

/**
 * Asks the runtime whether `permission` is granted for `target`. Under Deno a
 * state of `prompt` counts as closed: an agent cannot answer a prompt, and a
 * prompt on the terminal of an MCP server would hang it.
 */
export function queryRuntimePermission(
  permission: RuntimePermission,
  target?: string,
): RuntimeAnswer {
  const d = deno();
  if (d) {
    // A grant, once seen, is remembered: asking Deno costs microseconds per question and
    // every call asks several. Only the program itself can revoke a grant, and then the
    // runtime still refuses the operation; a refusal is never remembered.
    const key = `${permission}\0${target ?? ""}`;
    if (grantsSeen.has(key)) return { allowed: true };
    let state: string;
    try {
      state = d.permissions.querySync(denoDescriptor(permission, target)).state;
    } catch {
      // Deno rejects malformed descriptors (e.g. an invalid host); a question we
      // cannot ask is a door we keep closed.
      state = "denied";
    }
    if (state !== "granted") return { allowed: false, flag: denoFlag(permission, target) };
    if (grantsSeen.size >= MAX_GRANTS_SEEN) grantsSeen.clear();
    grantsSeen.add(key);
    return { allowed: true };
  }
  const n = nodePermission();
  if (n) {
    const scope = nodeScope(permission);
    if (scope === undefined) return { allowed: true };
    const allowed = scope === "child" ? n.has(scope) : n.has(scope, target);
    return allowed ? { allowed: true } : { allowed: false, flag: nodeFlag(permission, target) };
  }
  return { allowed: true };
}

function nodeFlagsGiven(): string[] {
  const proc = (globalThis as {
    process?: {
      execArgv?: string[];
      env?: Record<string, string | undefined>;
    };
  })
    .process;
  const options = proc?.env?.NODE_OPTIONS ?? "";
  return [...(proc?.execArgv ?? []), ...options.split(/\s+/)];
}

/**
 * Whether the runtime grants `permission` for no target at all. Deno reports
 * `prompt` both when nothing and when only some paths are granted, so for paths,
 * hosts and variables only an explicit `--deny-*` counts as entirely closed; for
 * `run` the shell the command tools start (`bash`) is probed, since a run grant
 * is only useful to them if it covers the shell. `probes` overrides that list.
 */
export function runtimePermissionClosedEntirely(
  permission: RuntimePermission,
  probes?: readonly string[],
): boolean {
  const d = deno();
  if (d) {
    const global = queryRuntimePermission(permission);
    if (global.allowed) return false;
    const targets = probes ?? (permission === "run" ? ["bash"] : undefined);
    if (targets !== undefined) {
      return targets.every((t) => !queryRuntimePermission(permission, t).allowed);
    }
    try {
      return d.permissions.querySync({ name: permission }).state === "denied";
    } catch {
      return true;
    }
  }
  const n = nodePermission();
  if (n) {
    const scope = nodeScope(permission);
    if (scope === undefined) return false;
    if (scope === "child") return !n.has("child");
    if (probes !== undefined) return probes.every((t) => !n.has(scope, t));
    if (n.has(scope)) return false;
    const flag = permission === "read" ? "--allow-fs-read" : "--allow-fs-write";
    return !nodeFlagsGiven().some((a) => a === flag || a.startsWith(flag + "="));
  }
  return false;
}

/**
 * What `os.tmpdir()` says, or `/tmp` (where it looks when the variables are
 * unset) when the runtime may not read TMPDIR (Deno without `--allow-env`).
 */
export function systemTempFolder(): string {
  try {
    return os.tmpdir();
  } catch (error) {
    if (isRuntimePermissionError(error)) return "/tmp";
    throw error;
  }
}

/**
 * Whether `error` is the runtime refusing an operation for lack of a permission
 * flag (Deno's `NotCapable`, Node's `ERR_ACCESS_DENIED`), as opposed to the
 * operating system refusing it.
 */
export function isRuntimePermissionError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const e = error as { name?: unknown; code?: unknown };
  return e.name === "NotCapable" || e.code === "ERR_ACCESS_DENIED";
}
