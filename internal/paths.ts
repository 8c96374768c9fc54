/**
 * Path helpers shared by the policy modules. Containment is always decided by
 * whole path components, never by string prefix, so `/w-secrets` is not inside
 * `/w`.
 *
 * @module
 */
import path from "node:path";

/** Whether absolute, normalised `child` is `parent` or lies beneath it. */
export function isWithin(child: string, parent: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith("/") ? parent : parent + "/";
  return child.startsWith(prefix);
}

/** Whether `p` is an absolute POSIX path without NUL bytes. */
export function isAbsoluteClean(p: string): boolean {
  return typeof p === "string" && path.posix.isAbsolute(p) && !p.includes("\0");
}
