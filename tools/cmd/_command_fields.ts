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
