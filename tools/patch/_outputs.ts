// The output schemas of the patch tools: exactly what each returns on success,
// checked on the way out and advertised as MCP's outputSchema.

import * as v from "valibot";
import { ABSOLUTE_PATH, COUNT, SHA256_HEX } from "../_shared/output_fields.ts";

/** `edit_file`: how many places changed, the new hash, and a short diff. */
export const EDIT_FILE_OUTPUT = v.strictObject({
  path: ABSOLUTE_PATH,
  replacements: v.pipe(v.number(), v.integer(), v.minValue(1)),
  sha256: SHA256_HEX,
  diff: v.string(),
});

/** `apply_patch`: the patch's format and every file it touched, with its lines added and removed. */
export const APPLY_PATCH_OUTPUT = v.strictObject({
  directory: ABSOLUTE_PATH,
  format: v.picklist(["unified", "begin-patch"]),
  files: v.array(v.strictObject({
    path: ABSOLUTE_PATH,
    action: v.picklist(["added", "deleted", "moved", "updated"]),
    from: v.optional(ABSOLUTE_PATH),
    added: COUNT,
    removed: COUNT,
  })),
});
