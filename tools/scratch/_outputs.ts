// The output schema of `publish`: exactly what it returns on success, checked
// on the way out and advertised as MCP's outputSchema.

import * as v from "valibot";
import { COUNT, RELATIVE_PATH, SHA256_HEX } from "../_shared/output_fields.ts";

/** A `FileState` of core/effects.ts. */
const FILE_STATE = v.strictObject({
  type: v.picklist(["file", "symlink", "directory"]),
  size: COUNT,
  sha256: v.nullable(SHA256_HEX),
  mode: COUNT,
});

/** A `FileChange` of core/effects.ts. */
const FILE_CHANGE = v.strictObject({
  path: RELATIVE_PATH,
  change: v.picklist(["created", "modified", "deleted", "moved"]),
  from: v.optional(RELATIVE_PATH),
  before: v.nullable(FILE_STATE),
  after: v.nullable(FILE_STATE),
});

/** `publish`. */
export const PUBLISH_OUTPUT = v.strictObject({
  published: v.boolean(),
  digest: SHA256_HEX,
  filesystemChanges: v.array(FILE_CHANGE),
  diff: v.string(),
  notPublished: v.array(RELATIVE_PATH),
  unpublishable: v.array(RELATIVE_PATH),
});
