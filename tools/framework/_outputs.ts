// The output schemas of the framework tools: exactly what each returns on
// success, checked on the way out and advertised as MCP's outputSchema.

import * as v from "valibot";
import { COUNT } from "../_shared/output_fields.ts";

/** `read_artifact`: a window of an artifact's text and where the next one starts. */
export const READ_ARTIFACT_OUTPUT = v.strictObject({
  // The id as it was asked for: `sha256:<hex>`, or the MCP resource URI `artifact://sha256/<hex>`.
  id: v.pipe(v.string(), v.regex(/^(?:sha256:|artifact:\/\/sha256\/)[0-9a-f]{64}$/)),
  content: v.string(),
  offset: COUNT,
  totalChars: COUNT,
  nextOffset: v.optional(COUNT),
});

/** `ask_preference`: the person's answer, or the MCP client's for its user (never an automatic one). */
export const ASK_PREFERENCE_OUTPUT = v.strictObject({
  choice: v.string(),
  extra: v.boolean(),
  source: v.picklist(["user", "client"]),
});
