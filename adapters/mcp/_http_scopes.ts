// What a token may use, by scope: `tools:read` the tools that only read,
// `tools:write` those that change files, `tools:commands` those that run
// programs. A tool's scope follows from the permissions it declares, so a new
// tool falls under the right scope without a list to keep. `console` is the
// web console's (a person answering questions): never given by default, and
// the console refuses a token that also holds a tool scope, so an agent's
// credentials cannot answer the questions meant for a person.

import type { AnyTool } from "@toolfence/core";

/** The scopes a token can hold. */
export const SCOPES = ["tools:read", "tools:write", "tools:commands", "console"] as const;
/** A scope. */
export type Scope = typeof SCOPES[number];
/** The scopes of the tools: what a token file entry without `scopes` holds. */
export const ALL_SCOPES: readonly Scope[] = ["tools:read", "tools:write", "tools:commands"];
/** The web console's scope. */
export const CONSOLE_SCOPE: Scope = "console";

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
