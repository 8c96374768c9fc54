// The output schemas of the command tools: exactly what each returns on
// success, checked on the way out and advertised as MCP's outputSchema.

import * as v from "valibot";
import { ABSOLUTE_PATH, COUNT, PROTECTED_PATHS_MOVED, TIMESTAMP } from "../_shared/output_fields.ts";

const EXIT_CODE = v.nullable(v.pipe(v.number(), v.integer()));
const SIGNAL = v.optional(v.pipe(v.string(), v.regex(/^SIG[A-Z0-9]+$/)));
const JOB_ID = v.string();
const JOB_STATUS = v.picklist(["running", "exited", "killed"]);
const RESOURCE_LIMIT = v.optional(
  v.strictObject({ limit: v.string(), value: v.string(), evidence: v.optional(v.string()) }),
);

/** `bash`: the exit code (or signal), stdout and stderr (cut to their head and tail), and how it ran. */
export const BASH_OUTPUT = v.strictObject({
  exit_code: EXIT_CODE,
  signal: SIGNAL,
  timed_out: v.optional(v.literal(true)),
  truncated: v.optional(v.literal(true)),
  stop_reason: v.optional(v.picklist(["output_limit", "timeout"])),
  output_limit_bytes: v.optional(COUNT),
  resource_limit: RESOURCE_LIMIT,
  stdout: v.string(),
  stderr: v.string(),
  duration_ms: COUNT,
  sandboxed: v.boolean(),
  sandbox_reason: v.optional(v.string()),
  protected_paths_moved: PROTECTED_PATHS_MOVED,
  network_refused: v.optional(v.array(v.string())),
});

/** `bash_background`: the job started. */
export const BASH_BACKGROUND_OUTPUT = v.strictObject({
  id: JOB_ID,
  status: v.literal("running"),
  sandboxed: v.boolean(),
  sandbox_reason: v.optional(v.string()),
  stdout_path: ABSOLUTE_PATH,
  stderr_path: ABSOLUTE_PATH,
});

const JOB_REPORT = {
  id: JOB_ID,
  status: JOB_STATUS,
  exit_code: EXIT_CODE,
  signal: SIGNAL,
  stopped: v.optional(v.literal(true)),
  truncated: v.optional(v.literal(true)),
  stop_reason: v.optional(v.literal("output_limit")),
  output_limit_bytes: v.optional(COUNT),
  resource_limit: RESOURCE_LIMIT,
  protected_paths_moved: PROTECTED_PATHS_MOVED,
  stdout: v.string(),
  stderr: v.string(),
  stdout_path: ABSOLUTE_PATH,
  stderr_path: ABSOLUTE_PATH,
  // Wall-clock milliseconds (Date.now), which a clock set back can make negative.
  duration_ms: v.pipe(v.number(), v.integer()),
};

/** `bash_read` and `bash_stop`: a job's status and its output so far (head and tail when long). */
export const JOB_REPORT_OUTPUT = v.strictObject(JOB_REPORT);

/** `bash_wait`: the job's report, and whether the wait ended by its timeout. */
export const BASH_WAIT_OUTPUT = v.strictObject({ ...JOB_REPORT, timed_out: v.boolean() });

/** `bash_list`: every job of the session. */
export const BASH_LIST_OUTPUT = v.strictObject({
  jobs: v.array(v.strictObject({
    id: JOB_ID,
    command: v.string(),
    status: JOB_STATUS,
    exit_code: EXIT_CODE,
    started_at: TIMESTAMP,
  })),
});
