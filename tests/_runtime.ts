// Which runtime runs the suite, and what follows from it. The same files run under Deno, on the sources, and under
// Node, on the npm build, whose tree mirrors the sources next to the built files (scripts/build_npm.ts).
import process from "node:process";

/** Whether the suite runs under Deno; under Node it tests the npm build. */
export const IS_DENO: boolean = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";

/** The deno executable: this process under Deno, `deno` on the PATH under Node. */
export const DENO: string = IS_DENO ? process.execPath : "deno";

/**
 * The `skip` of a test whose subject is a Deno process started on the sources (`deno run main.ts`, a probe script
 * under chosen flags). Under Node it would start the same process on the same sources and repeat the Deno suite's
 * run exactly, testing nothing of the npm build, so it runs under Deno only.
 */
export const DENO_PROCESS_ONLY: false | string = IS_DENO
  ? false
  : "its subject is a deno process on the sources, which the Deno suite runs";

/**
 * The `skip` of a differential test (the command analysis judged against real bash, sed, find, gawk or the oracle's
 * sandbox, on generated lines) under Node. Its subject is whether the analysis agrees with those programs, and neither
 * differs under Node: bash is the same program, and the analysis the same code, with nothing of its own per runtime
 * (`check_command_test.ts` holds `policy/shell/` to that). The Deno suite runs every case; under Node, the unit tests
 * of `tests/policy/shell/` show that the build runs the analysis.
 */
export const DIFFERENTIAL_DENO_ONLY: false | string = IS_DENO
  ? false
  : "a differential test of the command analysis, which has no runtime-specific code: the Deno suite runs it";

/**
 * The `skip` of a generated test whose subject is the command analysis alone (lines made by fast-check, judged by
 * `checkCommand` and compared with what the analysis should say): like a differential test, it repeats under Node
 * the very code the Deno suite ran on every case. Under Node, the analysis's fixed cases (`check_command_test.ts`,
 * `everyday_test.ts`, `command_paths_test.ts`, which reads the file system) show that the build runs it.
 */
export const GENERATED_ANALYSIS_DENO_ONLY: false | string = IS_DENO
  ? false
  : "a generated test of the command analysis, which has no runtime-specific code: the Deno suite runs it";
