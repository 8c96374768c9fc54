// The arguments `bash` and `bash_background` share.

import * as v from "valibot";

export const COMMAND_FIELDS = {
  command: v.pipe(
    v.string(),
    v.minLength(1),
    v.maxLength(100_000),
    v.description("The command line, run with bash -c (or /bin/sh when bash is missing)."),
  ),
  cwd: v.optional(
    v.pipe(v.string(), v.description("Folder to run in, relative to the workspace. Default: the workspace folder.")),
  ),
  env: v.optional(
    v.pipe(
      v.record(v.string(), v.string()),
      v.description(
        'Extra environment variables, e.g. {"CI": "1"}. Variables that change which programs or libraries load (PATH, HOME, LD_*, GIT_*, NODE_OPTIONS, ...) are refused.',
      ),
    ),
  ),
};

/** The `max_output_chars` argument; `whatIsKept` says what happens to the part that is cut. */
export function maxOutputCharsField(whatIsKept: string) {
  return v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(500),
      v.maxValue(100_000),
      v.description(
        `Most characters of stdout, and of stderr, to return; longer output keeps its head and tail${whatIsKept}. Default 16000.`,
      ),
    ),
    16_000,
  );
}

/** The `max_output_bytes` argument: where a command is stopped for printing too much. */
export const MAX_OUTPUT_BYTES_FIELD = v.optional(
  v.pipe(
    v.number(),
    v.integer(),
    v.minValue(1024),
    v.maxValue(1024 * 1024 * 1024),
    v.description(
      "Most bytes of stdout and stderr together to keep; past it the command is stopped and the result " +
        "says truncated. Default 64 MiB (67108864); the session may allow less.",
    ),
  ),
);
