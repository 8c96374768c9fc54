/**
 * jq command lines (jq 1.6 and 1.7): the options as jq's own loop reads them
 * (short options clustered, long options exact, `--arg NAME VALUE` and its
 * kin taking two words), the filter, and the input files. The files
 * `--rawfile NAME FILE` and `--slurpfile NAME FILE` read are recorded, as are
 * the input files. What reaches past the JSON it is given asks: the
 * environment (`env`, `$ENV`, also as `$ ENV` or `$#c⏎ENV`, which jq 1.6
 * reads alike; it may hold secrets), modules (`import`,
 * `include`, `modulemeta`, `-L DIR`), a filter from a file (`-f`, whose
 * content is not seen), `--args`/`--jsonargs` (the operands stop being files)
 * and `--run-tests`; so do `input_filename`, `get_search_list` and
 * `$__prog_args`, which put file names into the output (harmless names of
 * files already given, but asked for like the other file-naming builtins).
 * `$__loc__`, `input` and `inputs` only see the inputs already named.
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import type { PathOperand } from "./_path_operands.ts";
import { hiddenOptionReason, shown } from "./_options.ts";

/**
 * What may stand between `$` and a variable's name: jq 1.6 reads `$ ENV` and
 * `$#c⏎ENV` as `$ENV` (`'$' IDENT` in its grammar). A comment ends at the end
 * of its line, or, from jq 1.7.1 on, past a newline after an odd number of
 * backslashes; each reading gets its own pattern.
 */
const VARIABLE_GAPS = [/\$(?:\s|#[^\n]*)+/g, /\$(?:\s|#(?:[^\n\\]|\\[^])*)+/g];

/** Why a jq filter must ask, or `undefined` when it only transforms its input. */
export function jqFilterProblem(filter: string): string | undefined {
  // Read from the raw text, strings and comments included: a word inside a
  // string only ever asks more often, and `\(...)` puts code inside strings.
  // Then from the text with every gap after a `$` closed, once per reading of
  // comments, so that `$ ENV` is `$ENV`; the raw text keeps what a gap hid.
  const text = [filter, ...VARIABLE_GAPS.map((gap) => filter.replace(gap, "$"))].join("\n");
  if (/\$ENV\b|(?<![.\w$])env\b/.test(text)) {
    return "reads the environment (`env`, `$ENV`), which may hold secrets";
  }
  const module = /(?<![.\w$])(import|include|modulemeta)\b/.exec(text);
  if (module !== null) return `loads modules from jq's search path (\`${module[1]}\`)`;
  const names = /(?<![.\w$])(input_filename|get_search_list)\b|\$__prog_args\b/.exec(text);
  if (names !== null) return `names its input files or search paths (\`${names[0]}\`)`;
  return undefined;
}

const FLAGS = new Set("s r j a c C M S e n R h V".split(" "));
const LONG_FLAGS = new Set(
  (
    "slurp raw-output join-output ascii-output compact-output color-output monochrome-output sort-keys tab " +
    "exit-status null-input raw-input unbuffered seq stream stream-errors help version raw-output0"
  ).split(" "),
);
/** Long options and how many words after them are theirs. */
const LONG_WITH_VALUES: Readonly<Record<string, number>> = {
  indent: 1,
  arg: 2,
  argjson: 2,
  slurpfile: 2,
  rawfile: 2,
};
const ASKING = new Set(["args", "jsonargs", "run-tests", "from-file", "debug-dump-disasm", "debug-trace"]);

/** The jq command line; records the files it reads on `pathOperands`. */
export function jqCommandProblem(args: readonly BashWord[], pathOperands?: PathOperand[]): string | undefined {
  const operands: BashWord[] = [];
  let problem: string | undefined;
  let fromFile = false;
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    if (value === undefined) {
      if (word.mayBeOption) return hiddenOptionReason(word, "jq");
      operands.push(word);
      continue;
    }
    if (value === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (!value.startsWith("-") || value === "-") {
      operands.push(word);
      continue;
    }
    if (value.startsWith("--")) {
      const name = value.slice(2);
      if (LONG_FLAGS.has(name)) continue;
      if (ASKING.has(name)) {
        if (name === "from-file") fromFile = true;
        problem ??= `${shown(word)} makes jq read its filter or arguments from elsewhere, which cannot be checked`;
        continue;
      }
      const count = Object.hasOwn(LONG_WITH_VALUES, name) ? LONG_WITH_VALUES[name] : undefined;
      if (count === undefined) return `${shown(word)} is not an option of jq known to be harmless`;
      if (i + count >= args.length) return `${shown(word)} needs ${count} arguments`;
      if (name === "slurpfile" || name === "rawfile") {
        pathOperands?.push({ value: args[i + 2].value, access: "read", origin: `jq --${name}` });
      }
      i += count;
      continue;
    }
    for (const letter of value.slice(1)) {
      if (FLAGS.has(letter)) continue;
      if (letter === "f") {
        fromFile = true;
        problem ??= `${shown(word)} makes jq read its filter from a file, which cannot be checked`;
        continue;
      }
      if (letter === "L") return `${shown(word)} adds a folder to jq's module search path`;
      return `\`-${letter}\` in ${shown(word)} is not an option of jq known to be harmless`;
    }
  }
  const filter = operands.shift();
  if (filter === undefined) return problem;
  if (fromFile) pathOperands?.push({ value: filter.value, access: "read", origin: "jq -f" });
  else if (filter.value === undefined) return `the jq filter ${shown(filter)} is only known when the command runs`;
  else {
    const found = jqFilterProblem(filter.value);
    if (found !== undefined) problem ??= `the jq filter ${shown(filter)} ${found}`;
  }
  for (const operand of operands) pathOperands?.push({ value: operand.value, access: "read", origin: "jq input file" });
  return problem;
}
