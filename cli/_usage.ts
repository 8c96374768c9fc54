// Bad usage of a command of the command line: main.ts prints the message and exits 2.
import { parseArgs, type ParseArgsConfig } from "node:util";

/** Bad usage: the message says what was wrong; the exit code is 2. */
export class CliUsageError extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
    this.name = "CliUsageError";
  }
}

/** `parseArgs`, strict, with its errors as usage errors of `command`. */
export function parseCommand<O extends NonNullable<ParseArgsConfig["options"]>>(
  command: string,
  args: string[],
  options: O,
) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CliUsageError((error as Error).message, command);
  }
}
