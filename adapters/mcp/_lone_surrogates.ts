// JSON may carry a lone surrogate ("\ud800"), which no file name or UTF-8 file
// can hold: written out it would silently become U+FFFD while the call
// reported success. Arguments are checked before any tool runs, keys and
// values at every depth, without recursion (the value may be deeply nested).

import { ToolError } from "@toolfence/core";
import type { BeforeCallHook } from "@toolfence/core";

// A high surrogate not followed by a low one, or a low one not preceded by a
// high one (what String.prototype.isWellFormed finds; ES2024, beyond the
// npm build's ES2023 library).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function wellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** The JSON path of the first string (or key) holding a lone surrogate, or undefined. */
export function loneSurrogateAt(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, ""]];
  while (stack.length > 0) {
    const [item, where] = stack.pop()!;
    if (typeof item === "string") {
      if (!wellFormed(item)) return where || "(the value)";
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${where}[${i}]`]);
    } else if (item !== null && typeof item === "object") {
      for (const [key, inner] of Object.entries(item)) {
        const at = where ? `${where}.${key}` : key;
        if (!wellFormed(key)) return JSON.stringify(at);
        stack.push([inner, at]);
      }
    }
  }
  return undefined;
}

/**
 * A hook that refuses a call whose arguments hold a lone surrogate, with the
 * code `invalid_text`, before the tool runs.
 */
export const refuseLoneSurrogates: BeforeCallHook = ({ toolName, args }) => {
  const at = loneSurrogateAt(args);
  if (at === undefined) return;
  throw new ToolError(
    `Invalid arguments for ${toolName}: ${at} holds a lone UTF-16 surrogate, which no file or name can store`,
    {
      code: "invalid_text",
      kind: "semantic",
      recoveryHint: "Send well-formed Unicode text (escape each character as a whole \\uD83D\\uDE00 pair).",
      details: { path: at },
    },
  );
};
