// One declaration of what a tool touches: its `needs`. The coarse
// `permissions`, the `effects` and the `readOnly` flag follow from it; a tool
// may still state them (xun, qitos and Flux tools do), and a stated field is
// checked against `needs` rather than trusted beside it.

import { type Effect, EFFECTS } from "./effects.ts";
import { NEED_ORDER } from "./fence.ts";
import type { ToolMetadata, ToolNeeds, ToolPermission } from "./tool.ts";

const PERMISSIONS: readonly ToolPermission[] = NEED_ORDER;

// The effect each kind of grant allows; `reads` needs no grant (a tool may
// read what the session holds: artifacts, its own state, the clock).
const EFFECT_OF: Record<ToolPermission, Effect> = {
  run: "runs_processes",
  read: "reads",
  write: "writes_files",
  sys: "reads",
  env: "reads",
  net: "network",
};

/** The permissions `needs` asks for, in the order the fence names them (stopping processes is `run`). */
export function permissionsOf(needs: ToolNeeds): ToolPermission[] {
  return PERMISSIONS.filter((p) => (needs[p]?.length ?? 0) > 0 || (p === "run" && needs.signal === true));
}

/** The effects the grants of `needs` allow, in the order of {@linkcode EFFECTS}. */
export function effectsOf(needs: ToolNeeds): Effect[] {
  const allowed = new Set(permissionsOf(needs).map((p) => EFFECT_OF[p]));
  return EFFECTS.filter((e) => allowed.has(e));
}

/** What a tool declares of itself, after the check: the fields to keep on the tool. */
export interface ToolDeclaration {
  permissions?: readonly ToolPermission[];
  effects?: readonly Effect[];
  readOnly?: boolean;
}

/**
 * Checks what a tool says it touches and derives what it leaves out. With
 * `needs`, the permissions are those of `needs`; the effects and `readOnly`
 * are derived unless stated, and a stated one may say less than `needs`
 * allows (a tool that follows a job others start only reads) but never more.
 * Without `needs`, the stated fields are only checked for known names.
 * Throws a `TypeError` naming the field, the contradiction and the fix.
 */
export function toolDeclaration(name: string, metadata: ToolMetadata<never>): ToolDeclaration {
  const { needs, permissions, effects, readOnly } = metadata;
  if (permissions !== undefined) assertPermissions(name, permissions);
  if (effects !== undefined) assertEffectNames(name, effects);
  if (needs === undefined) return pick({ permissions, effects, readOnly });
  const granted = permissionsOf(needs);
  const beyond = (permissions ?? []).filter((p) => !granted.includes(p));
  if (beyond.length > 0) {
    throw new TypeError(
      `Tool ${name}: permissions ${list(beyond)} contradict its needs, which grant ${list(granted) || "nothing"}; ` +
        `add the targets to needs (e.g. needs.${beyond[0]}), or drop permissions: they follow from needs`,
    );
  }
  const allowed = effectsOf(needs);
  // A program it starts may do anything a program can.
  const unfounded = granted.includes("run") ? [] : (effects ?? []).filter((e) => e !== "reads" && !allowed.includes(e));
  if (unfounded.length > 0) {
    throw new TypeError(
      `Tool ${name}: effects ${list(unfounded)} contradict its needs, which allow ${list(allowed) || "none"}; ` +
        `add the grant to needs or drop the effect`,
    );
  }
  const effective = effects ?? allowed;
  const changes = effective.filter((e) => e === "writes_files" || e === "network");
  if (readOnly === true && changes.length > 0) {
    throw new TypeError(
      `Tool ${name}: readOnly contradicts its effects ${list(changes)}; ` +
        `drop readOnly (it follows from needs) or state the narrower effects the tool has`,
    );
  }
  return { permissions: granted, effects: effective, readOnly: readOnly ?? effective.every((e) => e === "reads") };
}

function assertPermissions(name: string, permissions: unknown): void {
  if (!Array.isArray(permissions)) {
    throw new TypeError(
      `Tool ${name}: permissions must be an array of ${list(PERMISSIONS)}, not ${JSON.stringify(permissions)}`,
    );
  }
  const unknown = permissions.filter((p) => !PERMISSIONS.includes(p));
  if (unknown.length > 0) {
    throw new TypeError(
      `Tool ${name}: unknown permission ${
        unknown.map((p) => JSON.stringify(p)).join(", ")
      }; permissions is an array of ${list(PERMISSIONS)}`,
    );
  }
}

/** Throws a `TypeError` unless `effects` is an array of known effects (the body of `assertEffects`). */
export function assertEffectNames(name: string, effects: unknown): void {
  if (!Array.isArray(effects) || effects.some((e) => !EFFECTS.includes(e))) {
    throw new TypeError(`Tool ${name}: effects must be an array of ${list(EFFECTS)}`);
  }
}

function list(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(", ");
}

// Leaves out what was not stated, so an undeclared field stays undeclared.
function pick(declaration: ToolDeclaration): ToolDeclaration {
  return Object.fromEntries(Object.entries(declaration).filter(([, value]) => value !== undefined));
}
