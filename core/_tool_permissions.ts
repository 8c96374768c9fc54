// A tool's coarse `permissions` list is checked when the tool is made and when
// it is registered: a misspelled entry ("wirte") would otherwise pass silently,
// and whatever reads the list (scopes, read-only tiers) would not see it.

import type { ToolPermission } from "./tool.ts";

const TOOL_PERMISSIONS: readonly ToolPermission[] = ["read", "write", "run", "net", "env", "sys"];

/** Throws a TypeError naming the tool, each entry that is not a permission, and the valid ones. */
export function assertPermissions(
  name: string,
  permissions: unknown,
): asserts permissions is readonly ToolPermission[] {
  const valid = TOOL_PERMISSIONS.map((p) => `"${p}"`).join(", ");
  if (!Array.isArray(permissions)) {
    throw new TypeError(`Tool ${name}: permissions must be an array of ${valid}`);
  }
  const wrong = permissions.filter((p) => !TOOL_PERMISSIONS.includes(p));
  if (wrong.length > 0) {
    throw new TypeError(
      `Tool ${name}: permissions has ${wrong.map((p) => JSON.stringify(p)).join(", ")}, not one of ${valid}`,
    );
  }
}
