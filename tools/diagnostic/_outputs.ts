// The output schemas of the diagnostic tools: exactly what each returns on
// success, checked on the way out and advertised as MCP's outputSchema.

import * as v from "valibot";
import { ABSOLUTE_PATH, COUNT, POSITION } from "../_shared/output_fields.ts";

/** `check_syntax`: whether the file parses, each error, and what judged it. */
export const CHECK_SYNTAX_OUTPUT = v.strictObject({
  path: ABSOLUTE_PATH,
  language: v.picklist(["json", "typescript", "tsx", "javascript", "jsx", "bash"]), // SYNTAX_LANGUAGES
  valid: v.boolean(),
  errors: v.array(v.strictObject({ line: POSITION, column: POSITION, message: v.string() })),
  checker: v.picklist(["JSON.parse", "typescript", "bash -n", "tree-sitter-bash"]),
});

/** `check_types`: whether Deno's type check passed, its diagnostics, and its raw output when none parsed. */
export const CHECK_TYPES_OUTPUT = v.strictObject({
  path: ABSOLUTE_PATH,
  ok: v.boolean(),
  diagnostics: v.array(v.strictObject({
    code: v.string(),
    message: v.string(),
    file: v.string(),
    line: POSITION,
    column: POSITION,
  })),
  output: v.optional(v.string()),
});

/** `diff_files`: the unified diff from a to b and the lines added and removed. */
export const DIFF_FILES_OUTPUT = v.strictObject({
  diff: v.string(),
  identical: v.boolean(),
  added: COUNT,
  removed: COUNT,
});
