/**
 * The flag rule for xxd, which reads its arguments its own way (vim's xxd):
 * options until the first word that is none, then the input file and the
 * output file. It asks when xxd would write (an output file, or `-r`, which
 * turns a dump back into bytes). jq's and awk's readers live with the text
 * tools (`_flag_rules_text.ts`).
 *
 * @module
 */
import { hiddenOptionReason, mayBeSeveralWords, recordPaths, shown } from "./_options.ts";
import type { PathOperand } from "./_path_operands.ts";
import type { Rule } from "./_flag_rules_runners.ts";

/**
 * xxd's options that take a value, by letter: attached (`-c8`) or the next
 * word whatever it looks like (`-c 8`, `-cols 8`, `-l -r`: `-r` is then the
 * length). A letter followed by one of its long spellings takes the next
 * word too; xxd matches only their start (`-colsX 8`). `-R` (colours, in
 * newer versions) has none.
 */
const XXD_VALUES: Readonly<Record<string, readonly string[]>> = {
  c: ["ols"],
  g: ["roupsize"],
  l: ["en"],
  n: ["ame"],
  o: ["ffset"],
  s: ["kip", "eek"],
  R: [],
};

/** xxd's flags, for reading a word as a getopt cluster (other xxd builds, busybox's and toybox's, take `-pr`). */
const XXD_FLAGS = "abCdEehipuv";

/** Whether an option word of xxd turns a dump back into bytes: `-r…` for vim's xxd, an `r` in a cluster for getopt's. */
function reverts(option: string): boolean {
  if (option.startsWith("-r")) return true;
  for (const letter of option.slice(1)) {
    if (letter === "r") return true;
    if (!XXD_FLAGS.includes(letter)) return false;
  }
  return false;
}

/**
 * Reads xxd's arguments as vim's xxd does: a word that starts with `--` and
 * has more is read without its first dash (`--revert` is `-revert`, which
 * is `-r`), `--` (or `---`) ends the options, and so does the first word that
 * is no option (`-` is standard input). The words after are the input and the
 * output file, whatever they look like: `xxd a.txt -x` writes `./-x`.
 */
const xxdRule: Rule = (args, name, context) => {
  let i = 0;
  for (; i < args.length; i++) {
    const word = args[i];
    if (word.value === undefined) {
      if (word.mayBeOption) return hiddenOptionReason(word, name);
      break;
    }
    const option = word.value.startsWith("--") && word.value.length > 2 ? word.value.slice(1) : word.value;
    if (option === "--") {
      i++;
      break;
    }
    if (!option.startsWith("-") || option === "-") break;
    if (reverts(option)) return `${shown(word)} turns a dump back into bytes, which xxd writes`;
    // An option xxd does not know makes it print its usage; read as a flag, it takes no word from the files.
    const longSpellings = Object.hasOwn(XXD_VALUES, option[1]) ? XXD_VALUES[option[1]] : undefined;
    const rest = option.slice(2);
    if (longSpellings !== undefined && (rest === "" || longSpellings.some((long) => rest.startsWith(long)))) i++;
  }
  const [input, output, ...extra] = args.slice(i);
  if (input === undefined) return undefined;
  if (mayBeSeveralWords(input)) return `${shown(input)} may expand to several files, and xxd writes to its second file`;
  // Recorded as xxd reads them: the generic reading misses an input after `---`, and takes the output for a read.
  const files: PathOperand[] = [];
  if (input.value !== "-") files.push({ value: input.value, access: "read", origin: "xxd input file" });
  if (output !== undefined && output.value !== "-") {
    files.push({ value: output.value, access: "write", origin: "xxd output file" });
  }
  const outside = recordPaths(files, context);
  // `-` is standard output; a third file makes xxd print its usage, but asking costs nothing.
  if (output === undefined || (output.value === "-" && extra.length === 0)) return outside;
  return `${shown(output)} is xxd's output file, which it writes`;
};

/** The data tools' rules, by program name. */
export const DATA_RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ["xxd", xxdRule],
]);
