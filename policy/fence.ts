/**
 * The fence: the runtime's own permission flags (Deno's `--allow-*`, Node's
 * permission model) consulted before a tool acts, so that a closed door gives a
 * clear `fence_denied` result naming the flag instead of a runtime exception in
 * the middle of an operation.
 *
 * Deno checks the location of a symlink, not its target, and anything started
 * with `--allow-run` is outside Deno's control entirely; the workspace check
 * (which works on real paths) and the OS sandbox cover those gaps. The fence is
 * therefore always asked about real paths.
 *
 * @module
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Fence, type FenceAnswer, type FencePermission, ToolError, UsageError } from "@toolfence/core";
import { queryRuntimePermission, runtimeFenceKind, runtimePermissionClosedEntirely } from "./_runtime_permissions.ts";

// The fence's interface is the core's (the core consults a fence without knowing this module).
export type { Fence, FenceAnswer, FencePermission } from "@toolfence/core";

/**
 * The fence of the running runtime. Under Deno it asks
 * `Deno.permissions.querySync` and anything but `granted` is closed (an agent
 * cannot answer a permission prompt). Under Node started with
 * `--experimental-permission` it asks `process.permission.has` (Node 20 does not
 * fence the network or the environment, so those are open). Elsewhere it is open.
 *
 * `closedEntirely` cannot see partial grants under Deno (`--allow-read=/w` and no
 * flag at all both report `prompt`), so for read, write, net and env it only
 * reports explicit `--deny-*` flags; for `run` it probes `bash` unless given probes.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { runtimeFence } from "@toolfence/policy";
 * const answer = runtimeFence.query("write", "/tmp/out.txt");
 * if (!answer.allowed) console.log(`restart with ${answer.flag}`);
 * ```
 */
export const runtimeFence: Fence = Object.freeze({
  query: (permission: FencePermission, target?: string): FenceAnswer => queryRuntimePermission(permission, target),
  closedEntirely: (
    permission: FencePermission,
    probes?: readonly string[],
  ): boolean => runtimePermissionClosedEntirely(permission, probes),
});

/**
 * A fence that allows everything, for embedders who fence by other means and
 * for tests.
 *
 * @example
 * ```ts
 * import { openFence } from "@toolfence/policy";
 * console.log(openFence().query("run", "bash").allowed); // true
 * ```
 */
export function openFence(): Fence {
  return {
    query: () => ({ allowed: true }),
    closedEntirely: () => false,
  };
}

function describe(permission: FencePermission, target?: string): string {
  const what = {
    read: "read access",
    write: "write access",
    run: "permission to run programs",
    net: "network access",
    env: "access to environment variables",
  }[permission];
  if (target === undefined) return what;
  return permission === "run" ? `permission to run ${target}` : `${what} to ${target}`;
}

/**
 * Throws `fence_denied` (kind `policy`) naming the flag that would open the
 * fence when `fence` closes `permission` for `target`.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { requireFence, runtimeFence } from "@toolfence/policy";
 * requireFence(runtimeFence, "read", "/etc/hostname");
 * ```
 */
export function requireFence(
  fence: Fence,
  permission: FencePermission,
  target?: string,
): void {
  const answer = fence.query(permission, target);
  if (answer.allowed) return;
  const fix = answer.flag ? `it needs ${answer.flag}` : "the runtime's permission settings forbid it";
  throw new ToolError(
    `The runtime does not grant ${describe(permission, target)}: ${fix}`,
    {
      code: "fence_denied",
      kind: "policy",
      recoverable: false,
      recoveryHint: answer.flag
        ? `Work within what the runtime allows, or ask the user to restart with ${answer.flag}.`
        : "Work within what the runtime allows.",
      details: {
        permission,
        target,
        flag: answer.flag,
        runtime: runtimeFenceKind(),
      },
    },
  );
}

/** Options of {@linkcode narrowestDenoFlags}. */
export interface DenoFlagsOptions {
  /** The workspace folder (absolute, or relative to the current directory). */
  workspace: string;
  /** What the chosen tools need. */
  permissions: readonly FencePermission[];
  /** Where the session temp dir is created; default the system temp folder. */
  tempParent?: string;
  /**
   * Programs the tools start when `run` is needed; default `["bash", "bwrap"]`
   * (the shell, and bubblewrap to sandbox it). Programs named here are also
   * allowed without `run` (e.g. `["rg"]` for the search tools).
   */
  runCommands?: readonly string[];
  /** Hosts for `net`; default any host. */
  netHosts?: readonly string[];
  /** Variables for `env`; default any variable. */
  envVariables?: readonly string[];
}

function flagList(values: readonly string[], what: string): string {
  for (const v of values) {
    // Deno splits flag values on commas and has no escape for them.
    if (v.includes(",") || v.includes("\0") || v === "") {
      throw new UsageError(
        `Cannot express ${what} ${JSON.stringify(v)} in a Deno flag`,
      );
    }
  }
  return [...new Set(values)].join(",");
}

// The fence is asked about real paths, so the flags must name real paths too
// (on macOS /tmp is a symlink to /private/tmp).
function realOrResolved(p: string): string {
  try {
    return fs.realpathSync(path.resolve(p));
  } catch {
    return path.resolve(p);
  }
}

/**
 * The narrowest `deno run` flags under which tools needing `permissions` work
 * on `workspace`: reads confined to the workspace (and the temp folder when
 * writing), writes to the workspace and the temp folder, `--allow-run` only for
 * the programs named, `--allow-net` / `--allow-env` only when asked for. Never
 * `-A`. When the temp folder is not given, the variables Node's `os.tmpdir()`
 * consults are allowed, since the program must find the same folder.
 *
 * Requires `--allow-env=TMPDIR,TMP,TEMP` when `tempParent` is omitted.
 *
 * @example
 * ```ts
 * import { narrowestDenoFlags } from "@toolfence/policy";
 * const flags = narrowestDenoFlags({
 *   workspace: "/home/me/project",
 *   permissions: ["read", "write", "run"],
 *   tempParent: "/tmp",
 *   runCommands: ["bash", "bwrap"],
 * });
 * // ["--allow-read=/home/me/project,/tmp", "--allow-write=/home/me/project,/tmp", "--allow-run=bash,bwrap"]
 * console.log(flags.join(" "));
 * ```
 */
export function narrowestDenoFlags(options: DenoFlagsOptions): string[] {
  const wanted = new Set(options.permissions);
  const workspace = realOrResolved(options.workspace);
  const tempParent = realOrResolved(options.tempParent ?? os.tmpdir());
  const flags: string[] = [];
  const writes = wanted.has("write");
  // The workspace cannot even be resolved without reading it, so read is always needed.
  flags.push(
    `--allow-read=${flagList(writes ? [workspace, tempParent] : [workspace], "the path")}`,
  );
  if (writes) {
    flags.push(
      `--allow-write=${flagList([workspace, tempParent], "the path")}`,
    );
  }
  const programs = options.runCommands ??
    (wanted.has("run") ? ["bash", "bwrap"] : []);
  if (programs.length > 0) {
    flags.push(
      `--allow-run=${flagList(programs, "the command")}`,
    );
  }
  if (wanted.has("net")) {
    flags.push(
      options.netHosts?.length ? `--allow-net=${flagList(options.netHosts, "the host")}` : "--allow-net",
    );
  }
  const env = new Set<string>();
  let anyEnv = false;
  if (wanted.has("env")) {
    if (options.envVariables?.length) {
      options.envVariables.forEach((v) => env.add(v));
    } else anyEnv = true;
  }
  if (writes && options.tempParent === undefined) {
    ["TMPDIR", "TMP", "TEMP"].forEach((v) => env.add(v));
  }
  if (anyEnv) flags.push("--allow-env");
  else if (env.size > 0) {
    flags.push(`--allow-env=${flagList([...env], "the variable")}`);
  }
  return flags;
}
