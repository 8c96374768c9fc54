/**
 * Reading a command's options the way getopt, clap, parse-options and Go's
 * flag package do, against a table of options known to be harmless: a word
 * the table does not name exactly asks, with the word named. Abbreviations of
 * long options are never resolved here: a program may resolve `--out` to
 * `--output`, so an abbreviation is an unknown option and asks.
 *
 * @module
 */
import path from "node:path";
import type { BashWord } from "./_tree.ts";
import type { PathOperand } from "./_path_operands.ts";

/** What a flag rule knows about where the command runs. */
export interface FlagContext {
  /** The workspace root (absolute), when the caller knows it. */
  workspaceRoot?: string;
  /**
   * Where a rule records the files its program will open (script file
   * commands, option values that name files), for the path rules to judge.
   */
  pathOperands?: PathOperand[];
  /**
   * The policy's network lists, set only where commands run sandboxed behind
   * the egress proxy (`sandbox.network: "proxy"`): the network readers judge
   * their URLs by it (see `_flag_rules_net.ts`).
   */
  network?: { allow: readonly string[]; deny: readonly string[] };
}

/** Judges a value or an operand; returns why it must ask. */
export type ValueCheck = (word: BashWord, value: string, context: FlagContext) => string | undefined;

/** One known option. */
export interface OptionDef {
  /** `required`: `--x v`, `--x=v`, `-xv`; `optional`: only attached (`--x=v`, `-xv`); absent: a plain flag. */
  value?: "required" | "optional";
  /** Judges the value; without it any value is harmless. */
  check?: ValueCheck;
  /** The value an optional one has when none is given, judged as given (`deno test --coverage`: `coverage`). */
  absent?: string;
}

/** The options a command accepts without asking. */
export interface OptionGrammar {
  /** How the command is named in reasons, e.g. `deno test`. */
  program: string;
  /** Single-letter options (clusters like `-qA` are read letter by letter). */
  short?: Readonly<Record<string, OptionDef>>;
  /** Long options without their dashes. */
  long?: Readonly<Record<string, OptionDef>>;
  /** Families of long options by prefix, e.g. `allow-` for `--allow-read`. */
  longPrefixes?: Readonly<Record<string, OptionDef>>;
  /** Go's flag package: `-name` and `--name` alike, no clusters. */
  singleDashLong?: boolean;
  /** Judges each operand; without it every operand is harmless. */
  operand?: ValueCheck;
  /** Judges the words after `--` (or another boundary); without it they are operands. */
  afterBoundary?: (words: readonly BashWord[], context: FlagContext) => string | undefined;
  /** Words that end the options like `--` does (Go's `-args`). */
  boundaries?: readonly string[];
  /**
   * How a short option's optional value is written: `attached` (getopt, git:
   * `-n5`); by default both `-Rx` readings are judged, as a value and as
   * further letters (clap needs `-R=x`).
   */
  optionalShortValue?: "attached";
}

/** What a grammar read: the problem, if any, and the operands before any boundary. */
export interface OptionReading {
  problem?: string;
  operands: BashWord[];
  /** Every option name seen, with dashes (`--list`, `-l`). */
  seen: Set<string>;
}

/** Shows a word in a reason. */
export function shown(word: BashWord): string {
  return `\`${word.text}\``;
}

/**
 * Whether a word may become several words, or none, when the command runs: a
 * word not known before it runs (`{a,b}.txt`, `*.md`) counts as any number of
 * operands, so a rule that reads meaning into the second operand (an output
 * file, a value to set) cannot count it as one.
 */
export function mayBeSeveralWords(word: BashWord): boolean {
  return word.value === undefined;
}

/** The reason for a word that may expand into an option. */
export function hiddenOptionReason(word: BashWord, program: string): string {
  return `${shown(word)} could expand into an option of ${program}, which has options that write files or run programs`;
}

function unknown(word: BashWord, option: string, program: string): string {
  const named = option === word.value ? shown(word) : `\`${option}\` in ${shown(word)}`;
  return `${named} is not an option of ${program} known to be harmless (unknown and abbreviated options ask)`;
}

/**
 * Reads `args` against `grammar`. Options may come before, between and after
 * operands; `--` (and the grammar's boundaries) end them.
 */
export function readOptions(
  args: readonly BashWord[],
  grammar: OptionGrammar,
  context: FlagContext,
): OptionReading {
  const operands: BashWord[] = [];
  const seen = new Set<string>();
  const fail = (problem: string): OptionReading => ({ problem, operands, seen });
  const checkValue = (def: OptionDef, option: string, word: BashWord, given: string | undefined) => {
    const value = given ?? def.absent;
    if (value === undefined || def.check === undefined) return undefined;
    const problem = def.check(word, value, context);
    if (problem === undefined) return undefined;
    const within = word.value === value ? "" : ` (in ${shown(word)})`;
    return `the value \`${value}\` of \`${option}\`${within} ${problem}`;
  };
  let i = 0;
  /** The next word as the value of `option`, when the program would read it so; or why it must ask. */
  const takeNext = (def: OptionDef, option: string): { word?: BashWord; problem?: string } => {
    if (def.value !== "required" || !takesNext(args[i])) return {};
    const word = args[i++];
    return word.value === undefined && def.check !== undefined
      ? { problem: `the value of \`${option}\`, ${shown(word)}, is only known when the command runs` }
      : { word };
  };
  while (i < args.length) {
    const word = args[i++];
    const value = word.value;
    if (value === undefined) {
      if (word.mayBeOption) return fail(hiddenOptionReason(word, grammar.program));
      // `x$P` may become `x/../../elsewhere`: a judged operand must be known.
      if (grammar.operand !== undefined) {
        return fail(`${shown(word)} is only known when the command runs, so where it points cannot be judged`);
      }
      operands.push(word);
      continue;
    }
    if (value === "--" || grammar.boundaries?.includes(value)) {
      const rest = args.slice(i);
      const problem = grammar.afterBoundary
        ? grammar.afterBoundary(rest, context)
        : operandsProblem(rest, grammar, context, operands);
      return problem === undefined ? { operands, seen } : fail(problem);
    }
    if (!value.startsWith("-") || value === "-") {
      const problem = grammar.operand?.(word, value, context);
      if (problem !== undefined) return fail(`${shown(word)} ${problem}`);
      operands.push(word);
      continue;
    }
    if (value.startsWith("--") || grammar.singleDashLong) {
      const body = value.slice(value.startsWith("--") ? 2 : 1);
      const equals = body.indexOf("=");
      const name = equals === -1 ? body : body.slice(0, equals);
      const inline = equals === -1 ? undefined : body.slice(equals + 1);
      const def = own(grammar.long, name) ??
        Object.entries(grammar.longPrefixes ?? {}).find(([prefix]) => name.startsWith(prefix))?.[1];
      const option = `${value.startsWith("--") ? "--" : "-"}${name}`;
      if (def === undefined || name === "") return fail(unknown(word, option, grammar.program));
      if (def.value === undefined && inline !== undefined) {
        return fail(`${shown(word)} gives a value to \`${option}\`, which takes none`);
      }
      seen.add(option);
      const next = inline === undefined ? takeNext(def, option) : {};
      if (next.problem !== undefined) return fail(next.problem);
      const given = inline ?? (next.word && (next.word.value ?? next.word.text));
      const problem = checkValue(def, option, next.word ?? word, given);
      if (problem !== undefined) return fail(problem);
      continue;
    }
    for (let letter = 1; letter < value.length; letter++) {
      const option = `-${value[letter]}`;
      const def = own(grammar.short, value[letter]);
      if (def === undefined) return fail(unknown(word, option, grammar.program));
      seen.add(option);
      if (def.value === undefined) continue;
      const rest = value.slice(letter + 1);
      const next = rest === "" ? takeNext(def, option) : {};
      if (next.problem !== undefined) return fail(next.problem);
      const given = rest !== "" ? rest : next.word && (next.word.value ?? next.word.text);
      // clap reads `-c=x` as the value `x`, getopt as `=x`: both readings are checked.
      const problem = checkValue(def, option, next.word ?? word, given) ??
        (given?.startsWith("=") ? checkValue(def, option, next.word ?? word, given.slice(1)) : undefined);
      if (problem !== undefined) return fail(problem);
      // clap's optional values need `=` (`-R=x`), so `-Rc` is `-R -c`: judge
      // the rest as letters too, unless the grammar says values attach.
      if (
        def.value === "optional" && rest !== "" && !rest.startsWith("=") && grammar.optionalShortValue !== "attached"
      ) {
        continue;
      }
      break;
    }
  }
  return { operands, seen };
}

/** An own entry of a table: `--constructor` is no option. */
function own(table: Readonly<Record<string, OptionDef>> | undefined, key: string): OptionDef | undefined {
  return table !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

/**
 * Whether the next word is read as an option's value. A word that is or may
 * become an option is not: programs differ (clap and optional values leave it
 * an option, getopt takes it), and judging it as an option is the stricter
 * reading.
 */
function takesNext(word: BashWord | undefined): word is BashWord {
  if (word === undefined) return false;
  if (word.value === undefined) return !word.mayBeOption;
  return !word.value.startsWith("-") || word.value === "-";
}

/** Judges words after `--` as operands, collecting them. */
function operandsProblem(
  words: readonly BashWord[],
  grammar: OptionGrammar,
  context: FlagContext,
  operands: BashWord[],
): string | undefined {
  for (const word of words) {
    const problem = word.value === undefined
      ? (word.mayBeOption
        ? hiddenOptionReason(word, grammar.program)
        : grammar.operand && "is only known when the command runs, so where it points cannot be judged")
      : grammar.operand?.(word, word.value, context);
    if (problem !== undefined) return `${shown(word)} ${problem}`;
    operands.push(word);
  }
  return undefined;
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:(?!:)/;

/**
 * Why `value`, used as a path, may lie outside the workspace: a URL or other
 * scheme, the home folder, a `..` step, or an absolute path (inside the
 * workspace root only when the context names one). The reason is a predicate
 * ("is ..."), for the caller to put after the value. `undefined` when it names
 * a place inside the folder the command runs in.
 */
export function outsidePathProblem(value: string, context: FlagContext): string | undefined {
  if (SCHEME.test(value)) return "is a URL or another scheme, not a path inside the workspace";
  if (value.startsWith("~")) return "is in the home folder, outside the workspace";
  if (value.split(/[/\\]/).includes("..")) return "steps out of the folder with `..`";
  if (value.startsWith("/")) {
    if (value === "/dev/null") return undefined;
    const root = context.workspaceRoot;
    if (root !== undefined && path.isAbsolute(root)) {
      const relative = path.relative(path.normalize(root), path.normalize(value));
      if (!relative.startsWith("..") && !path.isAbsolute(relative)) return undefined;
      return "lies outside the workspace";
    }
    return "is an absolute path, which may lie outside the workspace";
  }
  return undefined;
}

/** A {@linkcode ValueCheck} for values that are paths inside the workspace. */
export const insideWorkspace: ValueCheck = (_word, value, context) => outsidePathProblem(value, context);

/**
 * Words passed on to a program nobody can read the options of (a test script,
 * a test binary's own flags): each asks when any part of it, split at `=`,
 * `,` or `:`, names a place outside the workspace, and when it may expand
 * into anything.
 */
export function passedOnProblem(words: readonly BashWord[], program: string, context: FlagContext): string | undefined {
  for (const word of words) {
    if (word.value === undefined) {
      if (word.mayBeOption) return hiddenOptionReason(word, program);
      return `${shown(word)}, passed on to ${program}, is only known when the command runs`;
    }
    const value = word.value;
    // `--log=/x`, `-o/x`, `a,/x`, `k:/x`, `@/x`: any piece may be a path.
    const pieces = value.split(/[=,:@]/);
    const parts = [value, ...pieces, ...pieces.map((piece) => piece.replace(/^-+[A-Za-z0-9_.]*/, ""))];
    for (const part of parts) {
      const problem = part === "" ? undefined : outsidePathProblem(part, context);
      if (problem === undefined) continue;
      const named = part === value ? "" : ` names \`${part}\`, which`;
      return `${shown(word)}, passed on to ${program},${named} ${problem}`;
    }
  }
  return undefined;
}

/** Flags (`{a: {}, b: {}}`) from a space-separated list of names. */
export function flags(names: string): Record<string, OptionDef> {
  return Object.fromEntries(names.split(/\s+/).filter((name) => name !== "").map((name) => [name, {}]));
}

/** Options that take a value, any value harmless, from a space-separated list. */
export function valued(names: string, check?: ValueCheck): Record<string, OptionDef> {
  return Object.fromEntries(
    names.split(/\s+/).filter((name) => name !== "").map((name) => [name, { value: "required", check }]),
  );
}

/** How a GNU `getopt_long` option takes its value. */
export type GetoptArgument = "none" | "required" | "optional";

/** A program's options as it hands them to `getopt_long`. */
export interface GetoptSpec {
  /** How the program is named in reasons. */
  program: string;
  /** Single-letter options and how each takes a value. */
  short: Readonly<Record<string, GetoptArgument>>;
  /** Long options (without dashes) and how each takes a value. */
  long: Readonly<Record<string, GetoptArgument>>;
  /** `+` in the optstring (or POSIXLY_CORRECT): the first operand ends the options. */
  stopAtOperand?: boolean;
}

/**
 * One option or operand as getopt hands it to the program. An attached value
 * (`-ex`, `--expression=x`) comes as a copy of its word whose value is the
 * value alone.
 */
export type GetoptItem =
  | { kind: "option"; name: string; word: BashWord; value?: string; valueWord?: BashWord; unknownValue?: boolean }
  | { kind: "operand"; word: BashWord };

/**
 * Reads `args` as glibc's `getopt_long` does: options and operands permuted
 * (unless `stopAtOperand`), `--` ends the options, a required value is the
 * rest of the cluster or the next word whatever it looks like, an optional
 * value only attached. getopt also takes any unique prefix of a long
 * option; here, as in {@linkcode readOptions}, an abbreviation is an unknown
 * option (another version of the program may resolve it elsewhere). A word
 * known only at run time that may become an option, an unknown option, or a
 * value given to a flag is a problem.
 */
export function readGetopt(
  args: readonly BashWord[],
  spec: GetoptSpec,
): { items: GetoptItem[]; problem?: string } {
  const items: GetoptItem[] = [];
  const fail = (problem: string) => ({ items, problem });
  let i = 0;
  const nextValue = (option: string): { value?: string; valueWord?: BashWord; unknownValue?: boolean } | string => {
    const word = args[i++];
    if (word === undefined) return `\`${option}\` needs a value`;
    return word.value === undefined ? { valueWord: word, unknownValue: true } : { value: word.value, valueWord: word };
  };
  while (i < args.length) {
    const word = args[i++];
    const value = word.value;
    if (value === undefined) {
      if (word.mayBeOption) return fail(hiddenOptionReason(word, spec.program));
      items.push({ kind: "operand", word });
      if (spec.stopAtOperand) break;
      continue;
    }
    if (value === "--") break;
    if (!value.startsWith("-") || value === "-") {
      items.push({ kind: "operand", word });
      if (spec.stopAtOperand) break;
      continue;
    }
    if (value.startsWith("--")) {
      const body = value.slice(2);
      const equals = body.indexOf("=");
      const given = equals === -1 ? body : body.slice(0, equals);
      // getopt would resolve a unique prefix, and another version of the program may resolve it elsewhere.
      if (!Object.hasOwn(spec.long, given)) return fail(unknown(word, `--${given}`, spec.program));
      const name = given;
      const argument = spec.long[name];
      if (equals !== -1) {
        if (argument === "none") return fail(`${shown(word)} gives a value to \`--${name}\`, which takes none`);
        const inline = body.slice(equals + 1);
        items.push({ kind: "option", name, word, value: inline, valueWord: { ...word, value: inline } });
      } else if (argument === "required") {
        const next = nextValue(`--${name}`);
        if (typeof next === "string") return fail(next);
        items.push({ kind: "option", name, word, ...next });
      } else items.push({ kind: "option", name, word });
      continue;
    }
    for (let letter = 1; letter < value.length; letter++) {
      const name = value[letter];
      if (!Object.hasOwn(spec.short, name)) return fail(unknown(word, `-${name}`, spec.program));
      const argument = spec.short[name];
      const rest = value.slice(letter + 1);
      if (argument === "none") {
        items.push({ kind: "option", name, word });
        continue;
      }
      if (rest !== "") items.push({ kind: "option", name, word, value: rest, valueWord: { ...word, value: rest } });
      else if (argument === "required") {
        const next = nextValue(`-${name}`);
        if (typeof next === "string") return fail(next);
        items.push({ kind: "option", name, word, ...next });
      } else items.push({ kind: "option", name, word });
      break;
    }
  }
  for (; i < args.length; i++) {
    const word = args[i];
    items.push({ kind: "operand", word });
  }
  return { items };
}

/**
 * Hands the files a reader found to the path rules: onto
 * `context.pathOperands` when the caller collects them (the path rules then
 * judge each, as the file tools would). A caller that collects none gets the
 * reader's own judgement instead, so that no file goes unjudged: why the
 * first file may lie outside the workspace ({@linkcode outsidePathProblem};
 * a file only known at run time asks), or `undefined`.
 */
export function recordPaths(files: readonly PathOperand[], context: FlagContext): string | undefined {
  if (context.pathOperands !== undefined) {
    context.pathOperands.push(...files);
    return undefined;
  }
  for (const file of files) {
    // `~/x`, `$HOME/../x`: only the run time knows where it points.
    if (file.value === undefined) return `a file of ${file.origin} is only known when the command runs`;
    const problem = outsidePathProblem(file.value, context);
    if (problem !== undefined) return `\`${file.value}\` (${file.origin}) ${problem}`;
  }
  return undefined;
}
