/**
 * Flag rules for the commands that read by default but can write files or run
 * other programs with some options: sed, awk, sort, uniq, tee, tar, find,
 * ripgrep, tree, file, date, printf and test.
 *
 * Option matching is deliberately loose: a long option matches when it is any
 * prefix of a dangerous one (GNU getopt accepts `sort --out=f`), and a short
 * option matches when its letter appears anywhere in a cluster (`sort -uo f`).
 * Loose matching only ever asks more often.
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import { hiddenOptionReason, shown } from "./_options.ts";
import type { Rule } from "./_flag_rules_runners.ts";
import { sedScriptEffect } from "./_sed_script.ts";

/** The first argument that could expand into an option nobody can see yet. */
function hiddenOption(args: readonly BashWord[], name: string): string | undefined {
  const word = args.find((arg) => arg.value === undefined && arg.mayBeOption);
  return word === undefined ? undefined : hiddenOptionReason(word, name);
}

interface OptionSpec {
  /** Single-letter options, e.g. `o` for `-o`. */
  short?: string;
  /** Long option names without dashes. */
  long?: readonly string[];
  /** Exact words (find's primaries, which have a single dash). */
  exact?: readonly string[];
  /** What the options do, for the reason. */
  effect: string;
}

function matchesOption(value: string, spec: OptionSpec): boolean {
  if (spec.exact?.includes(value)) return true;
  if (value.startsWith("--") && value.length > 2) {
    const given = value.slice(2).split("=", 1)[0];
    return given !== "" && (spec.long ?? []).some((long) => long.startsWith(given));
  }
  if (value.startsWith("-") && !value.startsWith("--") && spec.short) {
    return [...value.slice(1)].some((letter) => spec.short!.includes(letter));
  }
  return false;
}

function optionRule(spec: OptionSpec): Rule {
  return (args, name) => {
    const word = args.find((arg) => arg.value !== undefined && matchesOption(arg.value, spec));
    return word === undefined ? hiddenOption(args, name) : `${shown(word)} ${spec.effect}`;
  };
}

/** Non-option words, skipping the values of the listed short options. */
function operands(args: readonly BashWord[], optionsWithValue: string): BashWord[] {
  const result: BashWord[] = [];
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === "--") return [...result, ...args.slice(i + 1)];
    if (value !== undefined && value.startsWith("-") && value !== "-") {
      if (value.length === 2 && optionsWithValue.includes(value[1])) i++;
      continue;
    }
    result.push(args[i]);
  }
  return result;
}

const uniqRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const files = operands(args, "fsw");
  if (files.some((file) => file.value === undefined)) {
    return `${
      shown(files.find((file) => file.value === undefined)!)
    } may expand to several files, and uniq writes to its second file`;
  }
  return files.length > 1 ? `${shown(files[1])} is uniq's output file, which it writes` : undefined;
};

const teeRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const file = operands(args, "").find((arg) => arg.value !== "/dev/null");
  return file === undefined ? undefined : `${shown(file)} is a file tee writes`;
};

const sedRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const scripts: BashWord[] = [];
  const operandWords: BashWord[] = [];
  let explicitScript = false;
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === undefined || !value.startsWith("-") || value === "-") {
      operandWords.push(args[i]);
      continue;
    }
    if (value === "--") {
      operandWords.push(...args.slice(i + 1));
      break;
    }
    if (value.startsWith("--")) {
      const [option, inline] = value.slice(2).split(/=(.*)/s, 2);
      if (option === "" || "in-place".startsWith(option)) {
        return `${shown(args[i])} makes sed edit files in place`;
      }
      if ("file".startsWith(option)) {
        return `${shown(args[i])} reads a sed script from a file, which cannot be checked`;
      }
      if ("expression".startsWith(option)) {
        explicitScript = true;
        const script = inline !== undefined ? { ...args[i], value: inline } : args[++i];
        if (script !== undefined) scripts.push(script);
      } else if ("line-length".startsWith(option) && inline === undefined) {
        i++;
      }
      continue;
    }
    for (let letter = 1; letter < value.length; letter++) {
      const option = value[letter];
      if (option === "i") return `${shown(args[i])} makes sed edit files in place`;
      if (option === "f") {
        return `${shown(args[i])} reads a sed script from a file, which cannot be checked`;
      }
      if (option === "e" || option === "l") {
        const inline = value.slice(letter + 1);
        const argument = inline !== "" ? { ...args[i], value: inline } : args[++i];
        if (option === "e" && argument !== undefined) {
          explicitScript = true;
          scripts.push(argument);
        }
        break;
      }
    }
  }
  if (!explicitScript && operandWords.length > 0) scripts.push(operandWords[0]);
  for (const script of scripts) {
    if (script.value === undefined) {
      return `the sed script ${shown(script)} is only known when the command runs`;
    }
    const effect = sedScriptEffect(script.value);
    if (effect !== undefined) return `the sed script ${shown(script)} ${effect}`;
  }
  return undefined;
};

const awkRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const fileOption = args.find((arg) =>
    arg.value !== undefined && matchesOption(arg.value, {
      // -W: gawk's and mawk's `-W include=f`, `-W exec f`.
      short: "fiElW",
      long: ["file", "include", "exec", "load"],
      effect: "",
    })
  );
  if (fileOption !== undefined) {
    return `${shown(fileOption)} loads awk code from a file, which cannot be checked`;
  }
  // Which word is the program depends on options with values; every word is
  // checked instead, so that none is missed.
  for (const arg of args) {
    if (arg.value === undefined && !arg.mayBeOption) {
      return `the awk argument ${shown(arg)} is only known when the command runs`;
    }
    // `@`: gawk's @include and @load, and indirect calls (`@f()` calls any
    // function by name, system included).
    if (arg.value !== undefined && /system|[|>@]|getline/.test(arg.value)) {
      return `the awk program ${shown(arg)} can run commands or write files (system, |, >, getline, @)`;
    }
  }
  return undefined;
};

const tarRule: Rule = (args, name, context) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const first = args[0]?.value ?? "";
  // `tar xf a.tar`: the first word is a cluster of options without a dash.
  if (first !== "" && !first.startsWith("-") && /[cxruA]/.test(first)) {
    return `${shown(args[0])} makes tar write files`;
  }
  return optionRule({
    short: "cxruAIF",
    long: [
      "create",
      "extract",
      "get",
      "append",
      "update",
      "catenate",
      "concatenate",
      "delete",
      "to-command",
      "use-compress-program",
      "checkpoint-action",
      "info-script",
      "new-volume-script",
      "rsh-command",
    ],
    effect: "makes tar write files or run a program",
  })(args, name, context);
};

const testOperators = optionRule({
  exact: ["-v", "-R"],
  effect: "tests a variable by name, which evaluates array subscripts that can run commands",
});

const BINARY_TEST_OPERATORS = new Set([
  "=",
  "==",
  "!=",
  "<",
  ">",
  "-eq",
  "-ne",
  "-lt",
  "-le",
  "-gt",
  "-ge",
  "-nt",
  "-ot",
  "-ef",
  "-a",
  "-o",
]);

/** A word known only at run time that stays one word (fully double-quoted). */
function quotedDynamic(word: BashWord): boolean {
  return word.value === undefined && /^"(?:[^"\\]|\\.)*"$/s.test(word.text);
}

/**
 * `test` and `[`: `-v` and `-R` ask. A word known only at run time could
 * become `-v` before another argument, so it asks unless bash's rules by
 * argument count make it an operand whatever it holds: fully double-quoted
 * (one word), and last, or around a static binary operator in the
 * three-argument form (`[ "$(uname)" = Linux ]`, also after `!`).
 */
const testRule: Rule = (args, name, context) => {
  const operands = name === "[" && args.at(-1)?.value === "]" ? args.slice(0, -1) : args;
  const safe = new Set<BashWord>();
  const last = operands.at(-1);
  if (last !== undefined && quotedDynamic(last)) safe.add(last);
  const binary = (at: number) => BINARY_TEST_OPERATORS.has(operands[at]?.value ?? "");
  const unsplit = operands.every((word) => word.value !== undefined || quotedDynamic(word));
  if (unsplit && operands.length === 3 && binary(1)) safe.add(operands[0]);
  if (unsplit && operands.length === 4 && operands[0].value === "!" && binary(2)) safe.add(operands[1]);
  return testOperators(args.filter((arg) => !safe.has(arg)), name, context);
};

/** The rules for text and file tools, by program name. */
export const TEXT_RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  [
    "find",
    optionRule({
      exact: ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"],
      effect: "makes find run commands, delete or write files",
    }),
  ],
  [
    "sort",
    optionRule({
      short: "o",
      long: ["output", "compress-program"],
      effect: "makes sort write a file or run a program",
    }),
  ],
  [
    "rg",
    optionRule({
      // -z runs gzip, xz, bzip2 and friends on compressed files (found by the oracle).
      short: "z",
      long: ["pre", "hostname-bin", "search-zip"],
      effect: "makes ripgrep run a program",
    }),
  ],
  ["uniq", uniqRule],
  ["tee", teeRule],
  ["tree", optionRule({ short: "oR", long: ["output"], effect: "makes tree write files" })],
  [
    "file",
    optionRule({
      short: "Cp",
      long: ["compile", "preserve-date"],
      effect: "makes file write a compiled magic file or reset file times",
    }),
  ],
  ["date", optionRule({ short: "s", long: ["set"], effect: "sets the system clock" })],
  ["printf", optionRule({ short: "v", effect: "assigns a shell variable" })],
  ["test", testRule],
  ["[", testRule],
  ["sed", sedRule],
  ["awk", awkRule],
  ["gawk", awkRule],
  ["mawk", awkRule],
  ["nawk", awkRule],
  ["tar", tarRule],
]);
