// The output schemas of the sub-agent tools: exactly what each returns on
// success, checked on the way out and advertised as MCP's outputSchema.

import * as v from "valibot";
import { JSON_VALUE } from "../_shared/output_fields.ts";

/** `agent_run`: the sub-agent's answer (any JSON; null when it gave none), under its label. */
export const AGENT_RUN_OUTPUT = v.strictObject({
  name: v.optional(v.string()),
  output: JSON_VALUE,
});

/** `agent_run_parallel`: one outcome per task, in the order of the tasks; a failure in its place. */
export const AGENT_RUN_PARALLEL_OUTPUT = v.strictObject({
  results: v.array(v.variant("status", [
    v.strictObject({
      task: v.string(),
      name: v.optional(v.string()),
      status: v.literal("success"),
      output: JSON_VALUE,
    }),
    v.strictObject({ task: v.string(), name: v.optional(v.string()), status: v.literal("error"), error: v.string() }),
  ])),
});
