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
import { ToolError, UsageError } from "../core/errors.ts";
import type { ToolNeeds } from "../core/tool.ts";
import {
  queryRuntimePermission,
  runtimeFenceKind,
  runtimePermissionClosedEntirely,
  systemTempFolder,
} from "./_runtime_permissions.ts";

/** What a tool may touch: files to read or write, programs to run, the network, the environment, system facts. */
export type FencePermission = "read" | "write" | "run" | "net" | "env" | "sys";

/** The fence's answer for one permission and target. */
export interface FenceAnswer {
  /** Whether the operation may go ahead. */
  allowed: boolean;
  /** When closed: the flag that would open it, e.g. `--allow-write=/abs/path` (Deno) or `--allow-fs-write=/abs/path` (Node). */
  flag?: string;
}

/** The outer fence around every tool. */
export interface Fence {
  /** Whether `permission` is open for `target` (a real path, a command name, a host, a variable); all targets when omitted. */
  query(permission: FencePermission, target?: string): FenceAnswer;
  /**
   * Whether `permission` is closed for every target, so that tools which need it
   * can be hidden. With `probes`, closed means closed for each of them.
   */
  closedEntirely(
    permission: FencePermission,
    probes?: readonly string[],
  ): boolean;
}

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
 * import { runtimeFence } from "./fence.ts";
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
 * import { openFence } from "./fence.ts";
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
    sys: "access to system information",
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
 * import { requireFence, runtimeFence } from "./fence.ts";
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
      // The same shape as a refusal of a tool's needs: the flag, then all of them.
      details: {
        permission,
        target,
        flag: answer.flag,
        missing: [{ permission, target, flag: answer.flag }],
        flags: answer.flag ? [answer.flag] : [],
        runtime: runtimeFenceKind(),
      },
    },
  );
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

/** Where the symbolic places of {@linkcode ToolNeeds} are for one session. */
export interface FencePlaces {
  /** The workspace folder (a real path). */
  workdir: string;
  /** The folder the session temp dir is made in. */
  tempParent: string;
}

/** One grant that a tool needs and the runtime does not give. */
export interface MissingGrant {
  /** The permission. */
  permission: FencePermission;
  /** What it is needed for: a path, a program, a variable, a system fact, a host; none for every target. */
  target?: string;
  /** The flag that grants it, when the runtime has one. */
  flag?: string;
  /** Set when the grant is needed to stop the processes the tool starts ({@linkcode ToolNeeds.signal}). */
  signal?: true;
}

// The order in which missing grants are named: the program a tool starts
// first (without it the tool is nothing), then the places, then the rest.
const NEED_ORDER = ["run", "read", "write", "sys", "env", "net"] as const;

interface DenoExecPath {
  execPath?(): string;
}

/**
 * The target the runtime is asked about for one entry of a tool's needs:
 * `workspace` and `temp` become the session's folders (and a relative path one
 * inside the workspace), the program `deno` the
 * running Deno (which `--allow-run=deno` does not cover when it is a link).
 * Without `places`, the symbolic places stay unresolved (undefined).
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { resolveNeedTarget } from "./fence.ts";
 * console.log(resolveNeedTarget("write", "temp", { workdir: "/w", tempParent: "/tmp" })); // "/tmp"
 * ```
 */
export function resolveNeedTarget(
  permission: FencePermission,
  target: string,
  places?: FencePlaces,
): string | undefined {
  if (permission === "read" || permission === "write") {
    if (target === "workspace") return places?.workdir;
    if (target === "temp") return places?.tempParent;
    // A relative place lies in the workspace.
    if (!path.isAbsolute(target)) return places && path.resolve(places.workdir, target);
    return target;
  }
  if (permission === "run" && target === "deno") {
    const deno = (globalThis as { Deno?: DenoExecPath }).Deno;
    if (typeof deno?.execPath === "function") return deno.execPath();
  }
  return target;
}

/**
 * Every grant in `needs` that `fence` does not give, in the order they are
 * named (programs, reads, writes, system facts, variables, hosts). Without
 * `places` (a tool list made with no session), the workspace and temp folder
 * count as missing only when the fence closes reads or writes entirely.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { missingGrants, runtimeFence } from "./fence.ts";
 * const missing = missingGrants(runtimeFence, { run: ["bash"], write: ["temp"] }, {
 *   workdir: Deno.cwd(),
 *   tempParent: "/tmp",
 * });
 * console.log(missing.map((m) => m.flag));
 * ```
 */
export function missingGrants(fence: Fence, needs: ToolNeeds, places?: FencePlaces): MissingGrant[] {
  const missing: MissingGrant[] = [];
  const push = (grant: MissingGrant) => {
    if (!missing.some((m) => m.permission === grant.permission && m.target === grant.target)) missing.push(grant);
  };
  for (const permission of NEED_ORDER) {
    const wanted = needs[permission] ?? [];
    for (let i = 0; i < wanted.length; i++) {
      const target = resolveNeedTarget(permission, wanted[i], places);
      if (target === undefined) {
        if (fence.closedEntirely(permission)) push({ permission, target: wanted[i] });
        continue;
      }
      const answer = fence.query(permission, target);
      if (!answer.allowed) push({ permission, target, flag: answer.flag });
    }
    if (permission === "run" && needs.signal) {
      const answer = fence.query("run");
      if (!answer.allowed) missing.push({ permission, flag: answer.flag, signal: true });
    }
  }
  return missing;
}

/**
 * The flags that grant every one of `missing`, one per flag name with the
 * targets joined by commas (`--allow-write=/w,/tmp`), in the order first named.
 *
 * @example
 * ```ts
 * import { grantFlags } from "./fence.ts";
 * console.log(grantFlags([
 *   { permission: "run", target: "bash", flag: "--allow-run=bash" },
 *   { permission: "write", target: "/w", flag: "--allow-write=/w" },
 *   { permission: "write", target: "/tmp", flag: "--allow-write=/tmp" },
 * ])); // ["--allow-run=bash", "--allow-write=/w,/tmp"]
 * ```
 */
export function grantFlags(missing: readonly MissingGrant[]): string[] {
  const byName = new Map<string, string[] | undefined>();
  for (const { flag } of missing) {
    if (flag === undefined) continue;
    const at = flag.indexOf("=");
    const name = at < 0 ? flag : flag.slice(0, at);
    const values = byName.get(name);
    if (at < 0) byName.set(name, undefined);
    else if (!byName.has(name)) byName.set(name, [flag.slice(at + 1)]);
    else if (values && !values.includes(flag.slice(at + 1))) values.push(flag.slice(at + 1));
  }
  return [...byName].map(([name, values]) => values ? `${name}=${values.join(",")}` : name);
}

/**
 * Throws `fence_denied` (kind `policy`) when `fence` does not give all of
 * `needs`: the message names the first missing flag and the restart line that
 * grants them all; `details.missing` lists every missing grant and
 * `details.flags` the flags. Nothing has been done when it throws, so a call
 * refused here has no side effect.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { openFence, requireGrants } from "./fence.ts";
 * requireGrants(openFence(), "bash", { run: ["bash"] }, { workdir: "/w", tempParent: "/tmp" });
 * ```
 */
export function requireGrants(fence: Fence, subject: string, needs: ToolNeeds, places?: FencePlaces): void {
  const missing = missingGrants(fence, needs, places);
  if (missing.length > 0) throw fenceDeniedError(subject, missing);
}

/**
 * The `fence_denied` error for `subject` lacking the grants `missing` (at
 * least one): see {@linkcode requireGrants}.
 *
 * @example
 * ```ts
 * import { fenceDeniedError } from "./fence.ts";
 * const error = fenceDeniedError("bash", [{ permission: "run", target: "bash", flag: "--allow-run=bash" }]);
 * console.log(error.message);
 * ```
 */
export function fenceDeniedError(subject: string, missing: readonly MissingGrant[]): ToolError {
  const [first] = missing;
  const flags = grantFlags(missing);
  const all = flags.length > 1 || (flags.length === 1 && flags[0] !== first.flag)
    ? ` (all it lacks: ${flags.join(" ")})`
    : "";
  const fix = first.flag ? `it needs ${first.flag}${all}` : "the runtime's permission settings forbid it";
  const what = first.signal ? "permission to stop the processes it starts" : describe(first.permission, first.target);
  return new ToolError(
    `${subject} cannot run: the runtime does not grant ${what}; ${fix}`,
    {
      code: "fence_denied",
      kind: "policy",
      recoverable: false,
      recoveryHint: flags.length
        ? `Do not call ${subject} again; work with the other tools, or ask the user to restart with ${flags.join(" ")}.`
        : `Do not call ${subject} again; work with the other tools.`,
      details: {
        permission: first.permission,
        target: first.target,
        flag: first.flag,
        missing,
        flags,
        runtime: runtimeFenceKind(),
      },
    },
  );
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
 * import { denoFlagsForNeeds } from "./fence.ts";
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
  for (const need of needs) {
    for (const permission of NEED_ORDER) {
      for (const wanted of need[permission] ?? []) {
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
  if (signals) targets.set("run", []);
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
 * import { SPAWN_ENV } from "./fence.ts";
 * const needs = { run: ["rg"], env: SPAWN_ENV };
 * console.log(needs.env); // ["NODE_V8_COVERAGE"]
 * ```
 */
export const SPAWN_ENV: readonly string[] = Object.freeze(["NODE_V8_COVERAGE"]);
