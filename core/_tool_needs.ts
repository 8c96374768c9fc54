/**
 * A tool's runtime needs against a session's fence: what is missing, checked
 * before a call and when tools are listed.
 *
 * @module
 */

import type { AnyTool, ToolNeeds } from "./tool.ts";
import type { SessionBase as Session } from "./session.ts";
import type { ToolError } from "./errors.ts";
import {
  type Fence,
  fenceDeniedError,
  type FencePlaces,
  type MissingGrant,
  missingGrants,
  NEED_ORDER,
} from "./fence.ts";

/** The session's workspace folder and temp folder, where `workspace` and `temp` needs point. */
export function fencePlacesOf(session: Session): FencePlaces {
  return { workdir: session.workspace.workdir, tempParent: session.workspace.tempParent };
}

// A tool that declares only coarse permissions needs the workspace for read and
// write; for the others only a fence closed to every target is known to stop it.
function coarseNeeds(tool: AnyTool): ToolNeeds {
  const permissions = tool.permissions ?? [];
  return {
    read: permissions.includes("read") ? ["workspace"] : [],
    write: permissions.includes("write") ? ["workspace"] : [],
  };
}

function coarseClosed(tool: AnyTool, fence: Fence): MissingGrant[] {
  if (tool.needs) return [];
  return (tool.permissions ?? []).filter((p) => p !== "read" && p !== "write" && fence.closedEntirely(p))
    .map((permission) => ({ permission, flag: fence.query(permission).flag }));
}

// A tool that declares no need (most pure tools): no fence can refuse it, so nothing is asked.
function needsNothing(tool: AnyTool): boolean {
  const { needs } = tool;
  if (needs === undefined) return (tool.permissions ?? []).length === 0;
  if (needs.signal) return false;
  for (const permission of NEED_ORDER) if ((needs[permission]?.length ?? 0) > 0) return false;
  return true;
}

/**
 * Everything `tool` needs that `fence` does not grant, first missing first.
 * Without `places` the workspace and temp folder are judged only by whether
 * the fence closes them entirely.
 */
export function missingToolGrants(tool: AnyTool, fence: Fence, places?: FencePlaces): MissingGrant[] {
  const missing = missingGrants(fence, tool.needs ?? coarseNeeds(tool), places);
  const closed = coarseClosed(tool, fence);
  if (closed.length === 0) return missing;
  // In the order the fence names grants: programs first.
  const rank = (m: MissingGrant) => NEED_ORDER.indexOf(m.permission);
  return [...missing, ...closed].sort((a, b) => rank(a) - rank(b));
}

/**
 * The `fence_denied` error for a call of `tool` in `session` when the fence
 * does not grant all it needs, naming the first missing flag; undefined when
 * it may run. Asked before anything of the call happens.
 */
export function toolFenceRefusal(tool: AnyTool, session: Session): ToolError | undefined {
  if (needsNothing(tool)) return undefined;
  const missing = missingToolGrants(tool, session.policy.fence, fencePlacesOf(session));
  return missing.length > 0 ? fenceDeniedError(tool.name, missing) : undefined;
}
