/**
 * The flag rule for xxd: it asks when xxd would write (its second operand, or
 * `-r`, which turns a dump back into bytes). jq's and awk's readers live with
 * the text tools (`_flag_rules_text.ts`).
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import { hiddenOptionReason, mayBeSeveralWords, shown } from "./_options.ts";
import type { Rule } from "./_flag_rules_runners.ts";

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
  const several = operands.find(mayBeSeveralWords);
  if (several !== undefined) return `${shown(several)} may expand to several files, and xxd writes to its second file`;
  return operands.length > 1 ? `${shown(operands[1])} is xxd's output file, which it writes` : undefined;
};

/** The data tools' rules, by program name. */
export const DATA_RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ["xxd", xxdRule],
]);
