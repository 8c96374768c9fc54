/**
 * The outer fence around every tool and what a tool needs of it: the core
 * consults a {@linkcode Fence} (the runtime's own permission flags, supplied by
 * `@toolfence/policy`) before a call, so that a closed door gives a clear
 * `fence_denied` result naming the flag instead of a runtime exception in the
 * middle of an operation. Tools declare exactly what they need (`ToolNeeds`):
 * {@linkcode missingGrants} says what the fence does not give, in the order it
 * is named, and {@linkcode requireGrants} refuses with the first missing flag
 * and all of them in `details`.
 *
 * @module
 */
import path from "node:path";
import { ToolError } from "./errors.ts";
import type { ToolNeeds } from "./tool.ts";

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
  /** Which runtime's flags this fence reads (`deno`, `node`), for error details; absent for others. */
  readonly runtime?: string;
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

/** A fence that allows everything: what the core assumes when nobody passes one. */
export const OPEN_FENCE: Fence = Object.freeze({
  query: (): FenceAnswer => ({ allowed: true }),
  closedEntirely: (): boolean => false,
});

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
 * import { OPEN_FENCE, requireFence } from "@toolfence/core";
 * requireFence(OPEN_FENCE, "read", "/etc/hostname");
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
        runtime: fence.runtime,
      },
    },
  );
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
/**
 * The entry of a tool's needs that stands for every target of its kind: a tool
 * whose `net` is `["*"]` needs the whole `--allow-net`, e.g. a browser whose
 * destinations are chosen at run time.
 */
export const ANY_TARGET = "*";

/** The order in which missing grants are named (and flags printed). */
export const NEED_ORDER = ["run", "read", "write", "sys", "env", "net"] as const;

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
 * import { resolveNeedTarget } from "@toolfence/core";
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
 * import { type Fence, missingGrants } from "@toolfence/core";
 * const noPrograms: Fence = {
 *   query: (permission) => ({ allowed: permission !== "run", flag: "--allow-run" }),
 *   closedEntirely: (permission) => permission === "run",
 * };
 * const missing = missingGrants(noPrograms, { run: ["bash"], write: ["temp"] }, {
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
      if (wanted[i] === ANY_TARGET) {
        const answer = fence.query(permission);
        if (!answer.allowed) push({ permission, target: ANY_TARGET, flag: answer.flag });
        continue;
      }
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
 * import { grantFlags } from "@toolfence/core";
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
 * import { OPEN_FENCE, requireGrants } from "@toolfence/core";
 * requireGrants(OPEN_FENCE, "bash", { run: ["bash"] }, { workdir: "/w", tempParent: "/tmp" });
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
 * import { fenceDeniedError } from "@toolfence/core";
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
      },
    },
  );
}
