// The output schemas of the search tools: exactly what each returns on
// success, checked on the way out and advertised as MCP's outputSchema.

import * as v from "valibot";
import { ABSOLUTE_PATH, POSITION, RELATIVE_PATH, SKIPPED_FIELDS } from "../_shared/output_fields.ts";

/** `glob`: matching paths relative to the root, whether the list was cut, and what was not searched. */
export const GLOB_OUTPUT = v.strictObject({
  root: ABSOLUTE_PATH,
  matches: v.array(RELATIVE_PATH),
  truncated: v.boolean(),
  ...SKIPPED_FIELDS,
  note: v.optional(v.string()),
});

/** `grep`: matching lines (with context when asked), the engine that searched, and what was not searched. */
export const GREP_OUTPUT = v.strictObject({
  root: ABSOLUTE_PATH,
  engine: v.picklist(["ripgrep", "builtin"]),
  matches: v.array(v.strictObject({
    path: RELATIVE_PATH,
    line: POSITION,
    content: v.optional(v.string()),
    before: v.optional(v.array(v.string())),
    after: v.optional(v.array(v.string())),
  })),
  truncated: v.boolean(),
  ...SKIPPED_FIELDS,
  note: v.optional(v.string()),
});
