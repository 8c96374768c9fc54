/**
 * Placeholder flag rules for jq and xxd, until the exact readers of their
 * languages land (`_jq_filter.ts`): jq asks for anything but a simple filter
 * over the files given, xxd asks when it would write its second operand.
 * awk's rule lives with the text tools (`_flag_rules_text.ts`).
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import { hiddenOptionReason, shown } from "./_options.ts";
import type { Rule } from "./_flag_rules_runners.ts";

// Filters that read the environment, name their input files, or load code or data from files.
const JQ_EFFECTS = /\benv\b|\$ENV|input_filename|\$__prog_args|\bimport\b|\binclude\b|modulemeta|get_search_list/;
// Options that load a filter, data or modules from files.
const JQ_FILE_OPTIONS = /^--(from-file|rawfile|slurpfile|library-path)(=|$)/;

const jqRule: Rule = (args, name) => {
  for (const arg of args) {
    if (arg.value === undefined) {
      return arg.mayBeOption
        ? hiddenOptionReason(arg, name)
        : `the jq argument ${shown(arg)} is only known when the command runs`;
    }
    const value = arg.value;
    if (JQ_FILE_OPTIONS.test(value)) return `${shown(arg)} makes jq read a file the checker does not judge yet`;
    // jq reads clusters of single-letter options: `-rf FILE` is `-r -f FILE`.
    if (/^-[^-]/.test(value) && /[fL]/.test(value.slice(1))) {
      return `${shown(arg)} makes jq load its filter or modules from a file`;
    }
    if (JQ_EFFECTS.test(value)) {
      return `the jq filter ${
        shown(arg)
      } reads the environment, its file names or other files (env, $ENV, input_filename, import, include)`;
    }
  }
  return undefined;
};

// xxd's options that take a value in the next word.
const XXD_VALUES = new Set(["-c", "-g", "-l", "-s", "-o", "-n", "-cols", "-groupsize", "-len", "-seek", "-name"]);

const xxdRule: Rule = (args, name) => {
  const operands: BashWord[] = [];
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === undefined) {
      if (args[i].mayBeOption) return hiddenOptionReason(args[i], name);
      operands.push(args[i]);
    } else if (value.startsWith("-r")) {
      return `${shown(args[i])} turns a dump back into bytes, which xxd writes`;
    } else if (value.startsWith("-") && value !== "-") {
      if (XXD_VALUES.has(value)) i++;
    } else operands.push(args[i]);
  }
  return operands.length > 1 ? `${shown(operands[1])} is xxd's output file, which it writes` : undefined;
};

/** The placeholder rules, by program name. */
export const DATA_RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ["jq", jqRule],
  ["xxd", xxdRule],
]);
