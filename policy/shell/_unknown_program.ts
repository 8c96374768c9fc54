/**
 * The program of a command line whose effects the analysis does not know: without the OS sandbox, such a program may
 * write outside the workspace, read the host or run what it is given, so an automatic answer must not let it run.
 *
 * @module
 */
import { knownProgram } from "./_command_paths.ts";
import { COMMAND_RUNNERS, RUNS_GIVEN_COMMAND } from "./_flag_rules.ts";
import { listedName } from "./_program_family.ts";

/** Words after a runner's name that are its options, numbers or durations, or assignments, not the program it runs. */
const RUNNER_WORD = /^(|-.*|[0-9][0-9.]*[A-Za-z]*|[A-Za-z_][A-Za-z0-9_]*=.*)$/;

/**
 * The program of a simple command whose effects the analysis does not know, if it runs one: itself, or behind a
 * runner that runs the command it is given (`timeout 5 capsh -- x.sh`), the first word after the runner's options,
 * numbers and assignments (an option's value taken for the program makes the line ask a person, never run). The
 * shell's declarations, pagers, editors and clients are judged as they are.
 */
export function unknownProgram(words: readonly string[]): string | undefined {
  const [name] = words;
  if (name === undefined) return undefined;
  const runner = listedName(name, (listed) => COMMAND_RUNNERS.has(listed));
  if (runner !== undefined) {
    if (COMMAND_RUNNERS.get(runner) !== RUNS_GIVEN_COMMAND) return undefined;
    // `trap HANDLER SIGNAL...` runs the handler, a command line; `trap '' TERM`, `trap - TERM`, `trap -p` none.
    if (runner === "trap") {
      const handler = words[1]?.trim() ?? "";
      return handler === "" || handler.startsWith("-") ? undefined : unknownProgram(handler.split(/\s+/));
    }
    const at = words.findIndex((word, index) => index > 0 && !RUNNER_WORD.test(word));
    return at < 0 ? undefined : unknownProgram(words.slice(at));
  }
  return knownProgram(words) ? undefined : name;
}
