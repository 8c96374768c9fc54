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
 * Tools declare exactly what they need (`ToolNeeds` in core/tool.ts):
 * {@linkcode missingGrants} says what the fence does not give, in the order it
 * is named, {@linkcode requireGrants} refuses before a call with the first
 * missing flag and all of them in `details`, and {@linkcode denoFlagsForNeeds}
 * prints the flags that give them (`toolfence flags`).
 *
 * @module
 */
import fs from "node:fs";
import path from "node:path";
import { UsageError } from "@toolfence/core";
import type { ToolNeeds } from "@toolfence/core";
import {
  ANY_TARGET,
  type Fence,
  type FenceAnswer,
  type FencePermission,
  type FencePlaces,
  NEED_ORDER,
  OPEN_FENCE,
  resolveNeedTarget,
} from "@toolfence/core";
import {
  queryRuntimePermission,
  runtimeFenceKind,
  runtimePermissionClosedEntirely,
  systemTempFolder,
} from "@toolfence/internal";

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
  runtime: runtimeFenceKind(),
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
  return OPEN_FENCE;
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

/** Options of {@linkcode denoFlagsForNeeds}. */
export interface NeedsFlagsOptions {
  /** The workspace folder (absolute, or relative to the current directory). */
  workspace: string;
  /**
   * Where the session temp dir is made. When omitted, the system temp folder,
   * and the variables Node's `os.tmpdir()` consults are allowed, since the
   * program must find the same folder.
   */
  tempParent?: string;
}

/**
 * The `deno run` flags that grant exactly the union of `needs` on a workspace:
 * `--allow-read`, `--allow-write`, `--allow-run`, `--allow-sys`, `--allow-env`
 * and `--allow-net`, each with its list of targets and only when needed. The
 * workspace is always readable (it is resolved at start). Never a bare flag.
 *
 * Requires `--allow-read` for the workspace (to resolve it), and
 * `--allow-env=TMPDIR,TMP,TEMP` when `tempParent` is omitted (else `/tmp`).
 *
 * @example
 * ```ts
 * import { denoFlagsForNeeds } from "@toolfence/policy";
 * const flags = denoFlagsForNeeds([{ read: ["workspace"], run: ["bash"] }], { workspace: ".", tempParent: "/tmp" });
 * console.log(flags.join(" ")); // --allow-read=/abs/workspace --allow-run=bash
 * ```
 */
export function denoFlagsForNeeds(needs: readonly ToolNeeds[], options: NeedsFlagsOptions): string[] {
  const places: FencePlaces = {
    workdir: realOrResolved(options.workspace),
    tempParent: realOrResolved(options.tempParent ?? systemTempFolder()),
  };
  const targets = new Map<FencePermission, string[]>([["read", [places.workdir]]]);
  const whole = new Set<FencePermission>();
  for (const need of needs) {
    for (const permission of NEED_ORDER) {
      for (const wanted of need[permission] ?? []) {
        if (wanted === ANY_TARGET) {
          whole.add(permission);
          continue;
        }
        let target = resolveNeedTarget(permission, wanted, places)!;
        if (permission === "read" || permission === "write") target = realOrResolved(target);
        const list = targets.get(permission) ?? [];
        if (!list.includes(target)) list.push(target);
        targets.set(permission, list);
      }
    }
  }
  // The workspace first, then the temp folder, then any other place, whichever tool named them first.
  const rank = (p: string) => p === places.workdir ? 0 : p === places.tempParent ? 1 : 2;
  for (const p of ["read", "write"] as const) targets.get(p)?.sort((a, b) => rank(a) - rank(b));
  const signals = needs.some((need) => need.signal);
  if (options.tempParent === undefined && targets.has("write")) {
    const env = targets.get("env") ?? [];
    for (const v of ["TMPDIR", "TMP", "TEMP"]) if (!env.includes(v)) env.push(v);
    targets.set("env", env);
  }
  const what: Record<FencePermission, string> = {
    read: "the path",
    write: "the path",
    run: "the command",
    sys: "the system fact",
    env: "the variable",
    net: "the host",
  };
  // Deno lets a program signal processes only under --allow-run for every program.
  if (signals) whole.add("run");
  for (const permission of whole) targets.set(permission, []);
  return (["read", "write", "run", "sys", "env", "net"] as const)
    .filter((p) => targets.has(p))
    .map((p) => targets.get(p)!.length ? `--allow-${p}=${flagList(targets.get(p)!, what[p])}` : `--allow-${p}`);
}

/**
 * The variables Deno's `node:child_process` reads on every spawn, so every
 * tool that starts a program needs them (Node does not fence variables).
 *
 * @example
 * ```ts
 * import { SPAWN_ENV } from "@toolfence/policy";
 * const needs = { run: ["rg"], env: SPAWN_ENV };
 * console.log(needs.env); // ["NODE_V8_COVERAGE"]
 * ```
 */
export const SPAWN_ENV: readonly string[] = Object.freeze(["NODE_V8_COVERAGE"]);
