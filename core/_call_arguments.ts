/**
 * Step 1 and 2 of a call: finding the tool, and turning the raw arguments (an
 * object or its JSON text) into validated arguments.
 *
 * @module
 */

import { ToolError } from "./errors.ts";
import type { AnyTool } from "./tool.ts";
import {
  formatIssues,
  validateWithJsonSchema,
  validateWithStandardSchema,
  type ValidationOutcome,
} from "./validation.ts";
import { closestNames } from "./_closest.ts";
import { isWellFormed } from "./_text_prefix.ts";

/** The refusal for a name no enabled tool has, with the closest names as suggestions. */
export function unknownToolError(name: string, enabledNames: readonly string[]): ToolError {
  const suggestions = closestNames(name, [...enabledNames]);
  return new ToolError(
    `Unknown tool "${name}"${
      suggestions.length ? `; did you mean ${suggestions.map((s) => `"${s}"`).join(", ")}?` : ""
    }`,
    { code: "unknown_tool", recoveryHint: "Call one of the tools you were given.", details: { suggestions } },
  );
}

/** Arguments as an object: nothing and blank text are `{}`; text must be one JSON object. */
export function parseArguments(toolName: string, raw: unknown): Record<string, unknown> | ToolError {
  let value = raw;
  if (value === undefined || value === null) return {};
  if (typeof value === "string") {
    if (value.trim() === "") return {};
    try {
      value = JSON.parse(value);
    } catch (error) {
      return new ToolError(`Invalid arguments for ${toolName}: not valid JSON (${(error as Error).message})`, {
        code: "invalid_arguments",
        recoveryHint: "Send the arguments as one JSON object.",
      });
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return new ToolError(
      `Invalid arguments for ${toolName}: expected a JSON object, received ${
        Array.isArray(value) ? "an array" : typeof value
      }`,
      { code: "invalid_arguments", recoveryHint: "Send the arguments as one JSON object." },
    );
  }
  return value as Record<string, unknown>;
}

/**
 * Checks one object's or array's own keys and strings, adding the objects it holds to `pending` (made only when there
 * is one: most arguments are flat). False when a key or string is not well formed.
 */
function checkEntries(item: object, pending: object[] | undefined): object[] | undefined | false {
  if (Array.isArray(item)) {
    for (const inner of item) {
      if (typeof inner === "string") {
        if (!isWellFormed(inner)) return false;
      } else if (typeof inner === "object" && inner !== null) (pending ??= []).push(inner);
    }
    return pending;
  }
  for (const key in item) {
    if (!Object.hasOwn(item, key)) continue;
    if (!isWellFormed(key)) return false;
    const inner = (item as Record<string, unknown>)[key];
    if (typeof inner === "string") {
      if (!isWellFormed(inner)) return false;
    } else if (typeof inner === "object" && inner !== null) (pending ??= []).push(inner);
  }
  return pending;
}

/** Whether every string and key in the value is well formed: the check of every call, without building paths. */
function wellFormedThroughout(value: unknown): boolean {
  if (typeof value === "string") return isWellFormed(value);
  if (typeof value !== "object" || value === null) return true;
  let pending = checkEntries(value, undefined);
  while (pending) {
    const next = pending.pop();
    if (next === undefined) return true;
    pending = checkEntries(next, pending);
  }
  return pending !== false;
}

/**
 * The JSON path of the first string (or key) of the arguments holding a lone surrogate, or undefined. JSON may
 * carry one ("\ud800"), which no file name or UTF-8 file can hold: written out it would silently become U+FFFD
 * while the call reported success. Keys and values at every depth, without recursion (the value may be deeply
 * nested). The paths are built only once a lone surrogate is known to be there.
 */
export function loneSurrogateAt(value: unknown): string | undefined {
  if (wellFormedThroughout(value)) return undefined;
  const stack: [unknown, string][] = [[value, ""]];
  while (stack.length > 0) {
    const [item, where] = stack.pop()!;
    if (typeof item === "string") {
      if (!isWellFormed(item)) return where || "(the value)";
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${where}[${i}]`]);
    } else if (item !== null && typeof item === "object") {
      for (const [key, inner] of Object.entries(item)) {
        const at = where ? `${where}.${key}` : key;
        if (!isWellFormed(key)) return JSON.stringify(at);
        stack.push([inner, at]);
      }
    }
  }
  return undefined;
}

/** The refusal for arguments holding a lone surrogate (at every door: MCP, the framework and provider adapters). */
export function loneSurrogateError(toolName: string, args: Record<string, unknown>): ToolError | undefined {
  const at = loneSurrogateAt(args);
  if (at === undefined) return undefined;
  return new ToolError(
    `Invalid arguments for ${toolName}: ${at} holds a lone UTF-16 surrogate, which no file or name can store`,
    {
      code: "invalid_text",
      kind: "semantic",
      recoveryHint: "Send well-formed Unicode text (escape each character as a whole \\uD83D\\uDE00 pair).",
      details: { path: at },
    },
  );
}

/** Validates against the tool's schema (valibot, zod, ArkType), or its JSON Schema for tools defined without one. */
export function validate(tool: AnyTool, args: Record<string, unknown>): ValidationOutcome {
  return tool.input
    ? validateWithStandardSchema(tool.input, args, tool.inputSchema)
    : validateWithJsonSchema(tool.inputSchema, args);
}

/** The refusal for arguments that failed validation, naming each issue. */
export function validationError(tool: AnyTool, outcome: ValidationOutcome & { ok: false }): ToolError {
  return new ToolError(formatIssues(tool.name, outcome.issues), {
    code: outcome.code ?? "invalid_arguments",
    recoveryHint: outcome.code === "arguments_too_complex"
      ? "Send a less deeply nested value at the path named above."
      : "Fix the arguments named above and call again.",
    details: { issues: outcome.issues },
  });
}
