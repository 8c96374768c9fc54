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
