/**
 * Reads a bash command line into the simple commands it would run and the
 * constructs around them that need a person's approval: the analysis API
 * ({@linkcode analyzeBash}) the command check is built on.
 *
 * The walk accepts only the node types listed in `_node_types.ts`, each with
 * the bash semantics it implements; anything else, any syntax error, and any
 * text of the source that no understood node accounts for (`_coverage.ts`)
 * makes the result "not understood", so that the caller asks instead of
 * allowing. Where tree-sitter-bash reads the line differently from bash, the
 * line is read again as bash reads it (the single-bracket test, below) or
 * asks.
 *
 * @module
 */
import type { Tree } from "web-tree-sitter";
import { MAX_TREE_DEPTH, parseBash } from "./parser.ts";

/** Why a line the parser gave up on asks. */
const TOO_COMPLEX = `parsing the command took too long, or it nests too deeply (more than ${MAX_TREE_DEPTH} levels)`;
import { joinContinuations, type JoinedLine } from "./_continuations.ts";
import { Walker } from "./_walker.ts";

export { quoteSource } from "./_literals.ts";

/** One word of a simple command. */
export interface BashWord {
  /** The word as written. */
  text: string;
  /** The word after quote removal, when it is known before the command runs. */
  value?: string;
  /** Why the value is not known before the command runs. */
  dynamic?: string;
  /**
   * Whether the word, once expanded, could be or produce a word that starts
   * with `-` (and so be read as an option by the command).
   */
  mayBeOption: boolean;
  /**
   * For an unquoted word whose only expansions are globs, braces or a tilde
   * (`src/*.ts`, `{a,b}.md`, `~/x`): its text after quote removal, the
   * pattern bash expands, for the path rules to judge where it may reach.
   */
  pattern?: string;
  /**
   * For a word that holds a glob bash matches against file names, reading
   * folders to do so (`/srv/*`, `"my dir"/*.ts`, `${x:-/srv/*}`): the static
   * text before the glob, absent when an expansion comes first. The values of
   * expansions are not read as patterns (`echo $(ls)`); the sandbox's read
   * view bounds what they reach.
   */
  glob?: { prefix?: string };
}

/** A redirection of a file: the operator and the word it names. */
export interface BashRedirect {
  /** The redirection as written (`2> log`). */
  text: string;
  /** The operator: `<`, `>`, `>>`, `>|`, `&>`, `&>>`, `>&`, `<&`. */
  operator: string;
  /** The file it names, when there is one. */
  target?: BashWord;
}

/** A simple command, an assignment or a declaration found in the tree. */
export interface BashSimpleCommand {
  /** The command as written, with its redirections. */
  text: string;
  /** What kind of statement it is. */
  kind: "command" | "assignment" | "declaration";
  /** Command name first, then the arguments; redirections excluded. */
  words: BashWord[];
  /** Why this command must ask, found while reading it (redirections, assignments). */
  problems: string[];
  /** Its file redirections, for the path rules. */
  redirects: BashRedirect[];
  /** Whether it sits in a loop, so that it may run any number of times (a `cd` there leads anywhere below). */
  repeated?: boolean;
  /**
   * The variables it sets: for the command it prefixes (`GIT_CONFIG_GLOBAL=F git ...`), for the shell (an
   * assignment), or declared (`export X=1`), by name.
   */
  sets?: string[];
}

/** Everything the walk found in one command line. */
export interface BashAnalysis {
  /** Every simple command, in source order of discovery (outer before inner). */
  commands: BashSimpleCommand[];
  /** Reasons to ask that are not tied to a single simple command. */
  problems: string[];
  /** False when the parser's tree does not fully account for the source. */
  understood: boolean;
  /** Whether the source holds no statement at all (only blanks and comments). */
  empty: boolean;
  /**
   * File redirections that belong to no simple command (`done < f`,
   * `$(< f)`, `{ ...; } > out`), for the path rules.
   */
  redirects: BashRedirect[];
  /**
   * The files the `[[ ]]` tests look at (`[[ -e f ]]`, `[[ a -nt b ]]`),
   * each as its operator and operand, for the path rules.
   */
  fileTests?: BashRedirect[];
  /**
   * The text bash evaluates as code when the line runs (`$((x))`, `${a[i]}`,
   * `${!x}`, `${x@P}`, `[[ -v x ]]`, `[[ x -eq y ]]`), as written: what a
   * command substitution hidden in a value there runs is known to nobody.
   */
  evaluated?: string[];
}

/** Longer command lines are not parsed at all. */
export const MAX_COMMAND_LENGTH = 100_000;

// tree-sitter-bash reads `[ ... ]` as a test expression, while bash runs `[`
// as an ordinary command: `[ a || rm x ]` is two commands for bash, and
// `[ a > f ]` truncates f. Each such `[` is replaced by an ordinary word
// character and the line parsed again, so that the tree shows what bash
// runs; the walk then reads the word from the original text, as `[`.
const BRACKET_PLACEHOLDER = "X";
// A `[` can hide another inside its "expression" (`[ a || [ b ] ]`), which
// the next parse then shows; each round replaces at least one.
const MAX_BRACKET_ROUNDS = 8;

/**
 * Offsets of every `[` that the tree reads as the start of a test expression,
 * or that starts a syntax error (`[ a && b ]` is one for tree-sitter).
 */
function singleBracketTests(tree: Tree): number[] {
  const offsets: number[] = [];
  for (const test of tree.rootNode.descendantsOfType("test_command")) {
    const open = test?.child(0);
    if (open?.type === "[") offsets.push(open.startIndex);
  }
  if (tree.rootNode.hasError) {
    for (const error of tree.rootNode.descendantsOfType("ERROR")) {
      for (const child of error?.children ?? []) {
        if (child?.type === "[" && !child.isNamed) offsets.push(child.startIndex);
      }
    }
  }
  return offsets;
}

function notUnderstood(reason: string): BashAnalysis {
  return { commands: [], problems: [reason], understood: false, empty: false, redirects: [] };
}

/**
 * Parses a command line and reads every simple command in it; fails closed
 * (`understood: false` with a reason) on anything it does not fully account
 * for.
 *
 * Needs no permissions: the parser's WebAssembly is embedded.
 *
 * @param source The command line, as bash would receive it with `bash -c`.
 * @returns Every simple command, the reasons to ask, and whether the line was understood.
 *
 * @example
 * ```ts
 * import { analyzeBash } from "./_tree.ts";
 * const analysis = await analyzeBash("[ -f x ] && ls");
 * console.log(analysis.commands.map((c) => c.words.map((w) => w.value)));
 * // [["[", "-f", "x", "]"], ["ls"]]
 * ```
 */
export async function analyzeBash(source: string): Promise<BashAnalysis> {
  if (source.length > MAX_COMMAND_LENGTH) {
    return notUnderstood(
      `the command is ${source.length} characters long; commands over ${MAX_COMMAND_LENGTH} are not analysed`,
    );
  }
  // bash and tree-sitter disagree on NUL and carriage returns (a word
  // character for bash, whitespace for the parser).
  // deno-lint-ignore no-control-regex
  const control = /[\0-\x08\x0b-\x1f\x7f]/.exec(source);
  if (control !== null) {
    return notUnderstood(
      `the command contains the control character U+${
        control[0].charCodeAt(0).toString(16).padStart(4, "0")
      } at offset ${control.index}`,
    );
  }
  const joined = await asBashReadsIt(source);
  if ("notUnderstood" in joined) return notUnderstood(joined.notUnderstood);
  const line = joined.source;
  let parsed = line;
  const brackets = new Set<number>();
  for (let round = 0;; round++) {
    const tree = await parseBash(parsed);
    if (tree === undefined) return notUnderstood(TOO_COMPLEX);
    try {
      const tests = singleBracketTests(tree);
      if (tests.length === 0) return walk(line, tree, brackets);
      if (round === MAX_BRACKET_ROUNDS) {
        return notUnderstood(`the command nests \`[\` more than ${MAX_BRACKET_ROUNDS} deep`);
      }
      for (const offset of tests) {
        brackets.add(offset);
        parsed = parsed.slice(0, offset) + BRACKET_PLACEHOLDER + parsed.slice(offset + 1);
      }
    } finally {
      tree.delete();
    }
  }
}

/** The line with the continuations bash removes removed (`_continuations.ts`). */
async function asBashReadsIt(source: string): Promise<JoinedLine> {
  if (!source.includes("\\\n")) return { source };
  const tree = await parseBash(source);
  if (tree === undefined) return { notUnderstood: TOO_COMPLEX };
  try {
    return await joinContinuations(source, tree, parseBash);
  } finally {
    tree.delete();
  }
}

function walk(source: string, tree: Tree, brackets: ReadonlySet<number>): BashAnalysis {
  const walker = new Walker(source, brackets);
  const root = tree.rootNode;
  if (root.hasError) walker.findSyntaxErrors(root);
  walker.checkModelled(root);
  if (root.type === "program") walker.statements(root, 0);
  else walker.statement(root, 0);
  walker.checkBrackets();
  walker.checkSubstitutions(root);
  walker.checkCoverage();
  return {
    commands: walker.commands,
    problems: walker.problems,
    understood: walker.understood,
    empty: walker.statementCount === 0,
    redirects: walker.redirects,
    fileTests: walker.fileTests,
    evaluated: walker.evaluated,
  };
}
