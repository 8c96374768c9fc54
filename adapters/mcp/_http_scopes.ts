// What a token may use, by scope: `tools:read` the tools that only read,
// `tools:write` those that change files, `tools:commands` those that run
// programs. A tool's scope follows from the permissions it declares, so a new
// tool falls under the right scope without a list to keep.

import type { AnyTool } from "@toolfence/core";

/** The scopes a token can hold. */
export const SCOPES = ["tools:read", "tools:write", "tools:commands"] as const;
/** A scope. */
export type Scope = typeof SCOPES[number];
/** Every scope. */
export const ALL_SCOPES: readonly Scope[] = SCOPES;

/** The scope a tool needs. */
export function scopeOf(tool: AnyTool): Scope {
  const permissions = tool.permissions ?? [];
  if (permissions.includes("run")) return "tools:commands";
  if (permissions.includes("write") || permissions.includes("net") || !tool.readOnly) return "tools:write";
  return "tools:read";
}

/** The scopes among `granted` that toolfence knows, from a space-separated OAuth `scope` claim or a list. */
export function knownScopes(granted: unknown): Scope[] {
  const list = typeof granted === "string" ? granted.split(/\s+/) : Array.isArray(granted) ? granted : [];
  return SCOPES.filter((scope) => list.includes(scope));
}
