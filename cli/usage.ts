/**
 * Bad usage of a command of the command line: main.ts prints the message and exits 2.
 *
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

/**
 * Bad usage: the message says what was wrong; the exit code is 2.
 *
 * @example
 * ```ts
 * import { CliUsageError } from "./usage.ts";
 * throw new CliUsageError("policy needs a subcommand", "policy");
 * ```
 */
export class CliUsageError extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
    this.name = "CliUsageError";
  }
}

/** The options table of a command. */
export type CommandOptions = NonNullable<ParseArgsConfig["options"]>;

/** What {@linkcode parseCommand} returns for an options table. */
export type ParsedCommand<O extends CommandOptions> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

/**
 * `parseArgs`, strict, with its errors as usage errors of `command`.
 *
 * @example
 * ```ts
 * import { parseCommand } from "./usage.ts";
 * const { values } = parseCommand("audit", ["--follow"], { follow: { type: "boolean" } });
 * console.log(values.follow); // true
 * ```
 */
export function parseCommand<O extends CommandOptions>(
  command: string,
  args: string[],
  options: O,
): ParsedCommand<O> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CliUsageError((error as Error).message, command);
  }
}
