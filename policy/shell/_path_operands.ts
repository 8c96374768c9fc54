/**
 * The files a command line names for a program to open: the meeting point of
 * the argument-language readers (which know that `sed 'r FILE'`, `jq
 * --rawfile NAME FILE` or `find -newer FILE` open FILE) and the path rules
 * (which judge every such file as the file tools would: inside the workspace
 * or the temp dir, not denied or hidden, not read-only for writes).
 *
 * @module
 */

/** How a program uses a file it names. */
export type PathAccess = "read" | "write" | "run";

/** One file a program of the line will open, as the line spells it. */
export interface PathOperand {
  /**
   * The path as the program receives it (after bash's quote removal), or
   * `undefined` when only the run time knows it (a variable, a glob that may
   * reach outside): such an operand asks.
   */
  value: string | undefined;
  /** What the program does with it. */
  access: PathAccess;
  /** Where it came from, for the reason a person reads: `sed script 'r'`, `--files0-from`, `<`. */
  origin: string;
  /**
   * Whether it is a folder the program creates files in whose names only the run knows (`cargo test
   * --target-dir D`, `deno test --coverage=D`): what may lie below it is judged as written too.
   */
  below?: boolean;
}
