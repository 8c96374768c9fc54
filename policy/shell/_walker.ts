/**
 * The walk over bash's tree: one class, {@linkcode Walker}, that finds the
 * simple commands of a line and every reason to ask, and accounts for each
 * byte of the source. Its methods fall in sections, in this order: the shared
 * state, expansions, words, redirections, conditionals and arithmetic
 * commands, and statements. `analyzeBash` in `_tree.ts` runs it.
 *
 * @module
 */
import type { Node } from "web-tree-sitter";
import { checkCoverage } from "./_coverage.ts";
import {
  ansiCStringEnd,
  decodeAnsiC,
  expandBraces,
  heredocDelimiter,
  heredocDelimiterQuoted,
  joinParts,
  quoteSource,
  readLiteral,
  STATIC_EMPTY,
  type WordParts,
} from "./_literals.ts";
import { describeNode, firstUnmodelledNode } from "./_node_types.ts";
import type { BashRedirect, BashSimpleCommand, BashWord } from "./_tree.ts";

/** How deeply nodes may nest before the walk gives up (and the line asks). */
const MAX_DEPTH = 200;

/** Tokens that join or open statements, which the walk accounts for as it meets them. */
const STATEMENT_TOKENS: ReadonlySet<string> = new Set(
  "; && || | |& ( ) { } ! if then elif else fi for select in do done while until case esac function".split(
    " ",
  ),
);

/** The node types of a redirection. */
const REDIRECT_TYPES: ReadonlySet<string> = new Set([
  "file_redirect",
  "heredoc_redirect",
  "herestring_redirect",
]);

/**
 * Whether a word of globs and braces may expand into one that starts with
 * `-`: an alternative of its braces that does, or one that starts with a glob
 * (a file named `-rf` matches `*`).
 */
function patternMayBeOption(pattern: string): boolean {
  const expansions = expandBraces(pattern);
  return expansions === undefined || expansions.some((word) => /^[-*?[]/.test(word));
}

/** The children of a node with the field each sits in. */
function children(node: Node): { child: Node; field: string | null }[] {
  const result = [];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child !== null) {
      result.push({ child, field: node.fieldNameForChild(i) });
    }
  }
  return result;
}

/**
 * Whether a `number` node is a literal. The parser reads `36#$(cmd)` as one
 * number holding a command substitution (bash substitutes the digits first,
 * running the command), and `16#${x}` as one holding an expansion.
 */
function literalNumber(node: Node): boolean {
  return node.type === "number" && node.namedChildCount === 0;
}

const ARITHMETIC_ASSIGNMENTS = new Set(
  "= += -= *= /= %= **= <<= >>= &= ^= |= ++ --".split(" "),
);

// Parameter-expansion operators that only read the variable. Left out on
// purpose: `=`/`:=` (assign), `!` (indirect, evaluates array subscripts) and
// the `@` transformations other than these (`@P` runs command substitutions).
const READING_EXPANSION_OPERATORS = new Set(
  ":- - :? ? :+ + # ## % %% / // /# /% ^ ^^ , ,,".split(" "),
);
const SAFE_TRANSFORMATIONS = new Set(["Q", "E", "U", "u", "L", "a", "K", "k"]);

const QUOTE_TYPES = new Set(["raw_string", "ansi_c_string", "translated_string"]);

// The unary `[[ ]]` operators that look at a file (`-t` takes a descriptor).
const FILE_TEST_OPERATORS = new Set("-a -b -c -d -e -f -g -h -k -p -r -s -u -w -x -G -L -N -O -S".split(" "));

const ARITHMETIC_TEST_OPERATORS = new Set(
  "-eq -ne -lt -le -gt -ge".split(" "),
);

const CASE_TERMINATORS = new Set([";;", ";&", ";;&"]);

/** Walks a whole tree; the result is in `commands`, `problems` and `understood`. */
export class Walker {
  // The shared state and the helpers every part of the walk uses.
  readonly commands: BashSimpleCommand[] = [];
  readonly problems: string[] = [];
  /**
   * The text bash evaluates as code when the line runs, each as written: arithmetic on a value only the run knows, an
   * array subscript, an indirect expansion, `@P`, a `[[ ]]` test by name or arithmetic comparison. A command
   * substitution hidden in the value (`x='a[$(CMD)]'; echo $((x))`) runs there, as eval's would.
   */
  readonly evaluated: string[] = [];
  understood = true;
  /** Byte ranges of the source the walk has accounted for. */
  private readonly covered: [number, number][] = [];
  /** How many statements (not comments) the walk met. */
  statementCount = 0;
  /** Where the first statement starts. */
  firstStatement = Infinity;
  /** Where the last statement ends. */
  lastStatement = -1;
  /** Offsets of the command names the walk found. */
  private readonly commandNames = new Set<number>();
  /** How many loops the walk is inside: a command there may run more than once. */
  private loops = 0;

  /**
   * @param source The command line as bash reads it. The tree may come from
   * a copy with some bytes replaced (see `_tree.ts`), so the text of a node
   * is always read from here, never from the node.
   * @param brackets Offsets of the `[` the tree shows as another word character
   * (see `_tree.ts`); each must turn out to start a command name.
   */
  constructor(private readonly source: string, private readonly brackets: ReadonlySet<number> = new Set()) {}

  /** The text of a node as bash reads it. */
  private text(node: Node): string {
    return this.source.slice(node.startIndex, node.endIndex);
  }

  private notUnderstood(reason: string): void {
    this.understood = false;
    if (!this.problems.includes(reason)) this.problems.push(reason);
  }

  private cover(node: Node): void {
    this.covered.push([node.startIndex, node.endIndex]);
  }

  /** Accounts for source text that belongs to a node but to none of its children. */
  private coverRange(start: number, end: number): void {
    this.covered.push([start, end]);
  }

  private unexpected(node: Node, where: string): void {
    if (node.type === "ERROR" || node.isMissing) {
      this.syntaxError(node);
      return;
    }
    const what = node.isNamed ? `${node.type} ${quoteSource(this.text(node))}` : `the token ${quoteSource(node.type)}`;
    this.notUnderstood(`the checker does not handle ${what} in ${where}`);
  }

  private syntaxError(node: Node): void {
    if (loneAssignmentWithRedirect(node)) {
      this.notUnderstood(
        "the checker's parser does not read one assignment with a redirection and no command " +
          "(`x=$(make) 2>/dev/null`), which bash does: put the redirection inside the $(...), or on a command of its own",
      );
      return;
    }
    const text = node.isMissing ? `a missing ${quoteSource(node.type)}` : quoteSource(this.text(node));
    this.notUnderstood(`bash would not parse this as written: syntax error at ${text}`);
  }

  private tooDeep(node: Node, depth: number): boolean {
    if (depth <= MAX_DEPTH) return false;
    this.notUnderstood(`the command nests too deeply at ${quoteSource(this.text(node))}`);
    return true;
  }

  /** Asks when the tree holds a node type that `_node_types.ts` does not list. */
  checkModelled(root: Node): void {
    const node = firstUnmodelledNode(root);
    if (node === undefined) return;
    const what = node.isNamed
      ? describeNode(node, quoteSource(this.text(node)))
      : `the token ${quoteSource(node.type)}`;
    this.notUnderstood(`the checker does not model ${what}, so it cannot tell what bash would run`);
  }

  /** Reports every syntax error the parser marked in the tree. */
  findSyntaxErrors(node: Node): void {
    if (node.type === "ERROR" || node.isMissing) {
      this.syntaxError(node);
      return;
    }
    if (!node.hasError) return;
    for (const { child } of children(node)) this.findSyntaxErrors(child);
  }

  // Expansions: `${...}` and its operators, array subscripts, arithmetic, and text bash reads as a pattern.

  /** Text bash treats as a pattern, which the tree leaves unparsed. */
  private pattern(node: Node): void {
    this.cover(node);
    const { unrecognized } = readLiteral(this.text(node), "pattern");
    if (unrecognized !== undefined) {
      this.notUnderstood(
        `the pattern ${
          quoteSource(this.text(node))
        } contains ${unrecognized}, which the parser did not read as an expansion`,
      );
    }
  }

  private arithmetic(node: Node, depth: number, whole: Node): void {
    if (this.tooDeep(node, depth)) return;
    switch (node.type) {
      case "number":
        if (literalNumber(node)) {
          this.cover(node);
          return;
        }
        this.runTimeArithmetic(node, depth, whole);
        return;
      case "binary_expression":
      case "unary_expression":
      case "parenthesized_expression":
      case "ternary_expression":
      case "postfix_expression":
        for (const { child } of children(node)) {
          if (child.isNamed) {
            this.arithmetic(child, depth + 1, whole);
          } else {
            this.cover(child);
            if (ARITHMETIC_ASSIGNMENTS.has(child.type)) {
              this.problems.push(
                `${quoteSource(this.text(node))} in ${quoteSource(this.text(whole))} assigns a variable`,
              );
            }
          }
        }
        return;
      case "variable_assignment":
        this.cover(node.childForFieldName("name") ?? node);
        this.problems.push(
          `${quoteSource(this.text(node))} in ${quoteSource(this.text(whole))} assigns a variable`,
        );
        for (const { child, field } of children(node)) {
          if (field === "value") this.arithmetic(child, depth + 1, whole);
          else this.cover(child);
        }
        return;
      default:
        this.runTimeArithmetic(node, depth, whole);
    }
  }

  /**
   * Variables and substitutions inside arithmetic are evaluated as arithmetic
   * again, and bash runs command substitutions hidden in array subscripts of
   * that text.
   */
  private runTimeArithmetic(node: Node, depth: number, whole: Node): void {
    this.problems.push(
      `${quoteSource(this.text(whole))} does arithmetic on ${
        quoteSource(this.text(node))
      }, a value computed when the command runs`,
    );
    this.evaluated.push(this.text(whole));
    if (node.type === "word" || node.type === "variable_name") this.cover(node);
    else this.word(node, depth);
  }

  /** Walks `${...}`; whether a word in it (`${x:-/srv/*}`) holds a glob bash matches when the expansion is unquoted. */
  private expansion(node: Node, depth: number, quoted: boolean): boolean {
    let globs = false;
    const tokens = children(node);
    for (let index = 0; index < tokens.length; index++) {
      const { child, field } = tokens[index];
      if (!child.isNamed) {
        this.cover(child);
        if (child.type === "${" || child.type === "}") continue;
        if (field !== "operator") {
          this.unexpected(child, quoteSource(this.text(node)));
          continue;
        }
        const op = child.type;
        if (op === "!" && index === 1) {
          this.problems.push(
            `${
              quoteSource(this.text(node))
            } is an indirect expansion, which evaluates array subscripts (and can run commands)`,
          );
          this.evaluated.push(this.text(node));
        } else if (op === "=" || op === ":=") {
          this.defaultAssignment(node, tokens.map(({ child }) => child));
        } else if (op === "@") {
          const transformation = tokens[index + 1]?.child.type ?? "";
          if (!SAFE_TRANSFORMATIONS.has(transformation)) {
            this.problems.push(
              `${quoteSource(this.text(node))} uses the @${transformation} transformation, which can expand commands`,
            );
            this.evaluated.push(this.text(node));
          }
          if (tokens[index + 1] !== undefined) this.cover(tokens[++index].child);
        } else if (op === ":") {
          // Substring offsets are arithmetic; only literal numbers are safe.
          const operand = tokens[index + 1]?.child;
          if (operand === undefined || !literalNumber(operand)) {
            this.problems.push(
              `${quoteSource(this.text(node))} computes a substring offset arithmetically from a run-time value`,
            );
            this.evaluated.push(this.text(node));
          }
        } else if (op === "#" && index === 1) {
          continue;
        } else if (!READING_EXPANSION_OPERATORS.has(op)) {
          this.unexpected(child, quoteSource(this.text(node)));
        }
        continue;
      }
      switch (child.type) {
        case "variable_name":
        case "special_variable_name":
          this.cover(child);
          break;
        case "subscript":
          this.subscript(child, depth, node);
          break;
        case "regex":
          this.pattern(child);
          break;
        default:
          globs = this.wordParts(child, depth + 1, quoted).globs === true || globs;
      }
    }
    return globs;
  }

  /**
   * `${NAME:=VALUE}` and `${NAME=VALUE}` assign NAME as a statement does, for every later command of the line: judged
   * as an assignment (`sets`), whose variable may move where later commands reach. Before, with the sandbox off and an
   * automatic answer, `: ${CDPATH:=/}; cd etc; cat passwd` read /etc/passwd: cd's folder was judged without CDPATH.
   */
  private defaultAssignment(node: Node, parts: readonly Node[]): void {
    const named = parts.find((part) => part.type === "variable_name" || part.type === "subscript");
    const variable = named?.type === "subscript" ? named.childForFieldName("name") ?? named : named;
    const name = variable === undefined ? "?" : this.text(variable);
    this.assignmentStatement(
      this.text(node),
      `${quoteSource(this.text(node))} assigns a default value to the variable ${name}`,
      name,
    );
  }

  /** An assignment the line makes outside an assignment statement, judged as one (`sets`). */
  private assignmentStatement(text: string, problem: string, name: string): void {
    this.commands.push({ text, kind: "assignment", words: [], problems: [problem], redirects: [], sets: [name] });
  }

  private subscript(node: Node, depth: number, whole: Node): void {
    for (const { child, field } of children(node)) {
      if (field === "index") {
        const literal = literalNumber(child) ||
          (child.type === "word" && (this.text(child) === "@" || this.text(child) === "*"));
        if (literal) {
          this.cover(child);
        } else {
          this.problems.push(
            `${quoteSource(this.text(whole))} evaluates the array subscript ${
              quoteSource(this.text(child))
            } when the command runs`,
          );
          this.evaluated.push(this.text(whole));
          this.wordParts(child, depth + 1, true);
        }
      } else if (field === "name" || child.type === "[" || child.type === "]") {
        this.cover(child);
      } else {
        this.unexpected(child, quoteSource(this.text(whole)));
      }
    }
  }

  // Words: quote removal, the parts of a word, and command and process substitutions (whose bodies are walked as
  // statements).
  /** A word part whose value is only known when the command runs, with why. */
  private decidedLater(node: Node, splits: boolean, why: string): WordParts {
    return { prefix: "", splits, dynamic: `${quoteSource(this.text(node))} ${why}` };
  }

  /** Reads one word and walks every substitution inside it. */
  word(node: Node, depth: number): BashWord {
    return this.joinedWord([node], depth);
  }

  /**
   * Reads nodes that touch, with no blank between them, as the one word bash
   * reads there: the parser sometimes gives `$'a'\{` or `"a"\<` as two
   * arguments.
   */
  private joinedWord(nodes: Node[], depth: number): BashWord {
    const parts = joinParts(nodes.map((node) => this.wordParts(node, depth, false)));
    const text = this.source.slice(nodes[0].startIndex, nodes[nodes.length - 1].endIndex);
    // Unquoted text with no expansion but globs, braces and tildes: the pattern bash expands.
    const literal = parts.value === undefined && !/['"$`\\]/.test(text) ? readLiteral(text, "unquoted") : undefined;
    const pattern = literal?.glob !== undefined && literal.unrecognized === undefined ? literal.value : undefined;
    return {
      text,
      value: parts.value,
      dynamic: parts.value === undefined
        ? (parts.dynamic ?? `${quoteSource(text)} is expanded when the command runs`)
        : undefined,
      mayBeOption: parts.value !== undefined
        ? parts.value.startsWith("-")
        : pattern !== undefined
        ? patternMayBeOption(pattern)
        : parts.splits || parts.prefix === "" || parts.prefix.startsWith("-"),
      ...(pattern !== undefined ? { pattern } : {}),
      // The static text before the first glob, unless an expansion comes before it (`"$d"/*`, `${x:-/srv/*}`).
      ...(parts.globs ? { glob: /[$`]/.test(text) ? {} : { prefix: parts.prefix } } : {}),
    };
  }

  // Text the parser left as a literal although it holds shell syntax: a misparse, so ask.
  private literalNotRead(what: "word" | "string", node: Node, unrecognized: string, splits: boolean): WordParts {
    this.notUnderstood(
      `the ${what} ${
        quoteSource(this.text(node))
      } contains ${unrecognized}, which the parser did not read as shell syntax`,
    );
    return { prefix: "", splits, dynamic: "not understood" };
  }

  private wordParts(node: Node, depth: number, quoted: boolean): WordParts {
    if (this.tooDeep(node, depth)) return { prefix: "", splits: true };
    if (quoted && QUOTE_TYPES.has(node.type)) {
      // Inside double quotes (or a here-document) bash does not read
      // `'...'` in `${x:-'...'}` as quotes: `"${x:-'$(id)'}"` runs id.
      this.notUnderstood(
        `${
          quoteSource(this.text(node))
        } sits in \`\${...}\` inside double quotes, where bash does not read it as a quoted string`,
      );
      return { prefix: "", splits: false, dynamic: "not understood" };
    }
    switch (node.type) {
      case "word": {
        this.cover(node);
        const literal = readLiteral(this.text(node), "unquoted");
        if (literal.unrecognized !== undefined) {
          return this.literalNotRead("word", node, literal.unrecognized, true);
        }
        if (literal.glob !== undefined) {
          const prefix = literal.value.match(/^[^*?[{}~]*/)?.[0] ?? "";
          return {
            // A leading `~` expands to a path or stays `~`, never an option.
            prefix: literal.value.startsWith("~") ? "~" : prefix,
            splits: literal.glob === "brace expansion",
            globs: literal.globs,
            dynamic: `${quoteSource(this.text(node))} uses ${literal.glob}`,
            brackets: literal.brackets,
          };
        }
        return { value: literal.value, prefix: literal.value, splits: false, brackets: literal.brackets };
      }
      case "number":
        this.cover(node);
        if (!literalNumber(node)) {
          for (const child of node.namedChildren) if (child !== null) this.wordParts(child, depth + 1, true);
          return this.decidedLater(node, !quoted, "substitutes into its digits when the command runs");
        }
        return /^[-+]?[0-9A-Za-z#_]*$/.test(this.text(node))
          ? { value: this.text(node), prefix: this.text(node), splits: false }
          : this.misread(node);
      case "raw_string":
        this.cover(node);
        if (this.text(node).slice(1, -1).includes("'")) {
          this.notUnderstood(`bash ends the string ${quoteSource(this.text(node))} at its second quote`);
          return { prefix: "", splits: false, dynamic: "not understood" };
        }
        return {
          value: this.text(node).slice(1, -1),
          prefix: this.text(node).slice(1, -1),
          splits: false,
        };
      case "ansi_c_string": {
        this.cover(node);
        // The parser reads `\\'` in `$'a\\' ...'` as an escaped quote and
        // runs on to a later quote, where bash ends the string.
        const end = ansiCStringEnd(this.text(node));
        if (end !== this.text(node).length) {
          this.notUnderstood(
            `bash ends the string ${quoteSource(this.text(node))} at offset ${
              node.startIndex + end
            }, earlier than the parser`,
          );
          return { prefix: "", splits: false, dynamic: "not understood" };
        }
        const value = decodeAnsiC(this.text(node).slice(2, -1));
        if (value === undefined) {
          this.notUnderstood(
            `${quoteSource(this.text(node))} holds an escape above ASCII, whose bytes depend on the locale`,
          );
          return { prefix: "", splits: false, dynamic: "not understood" };
        }
        return { value, prefix: value, splits: false };
      }
      case "string":
        return this.doubleQuoted(node, depth);
      case "translated_string":
        for (const { child } of children(node)) {
          if (child.type === "$") this.cover(child);
          else if (child.type === "string") this.doubleQuoted(child, depth + 1);
          else this.unexpected(child, quoteSource(this.text(node)));
        }
        return this.decidedLater(node, false, "is a locale-translated string");
      case "concatenation": {
        const parts: WordParts[] = [];
        for (const { child } of children(node)) {
          if (child.isNamed || this.literalDollar(child)) parts.push(this.wordParts(child, depth + 1, quoted));
          else parts.push(this.misread(child));
        }
        return joinParts(parts);
      }
      case "simple_expansion":
        this.cover(node);
        return this.decidedLater(node, !quoted, "is expanded when the command runs");
      case "expansion": {
        const globs = this.expansion(node, depth, quoted);
        return { ...this.decidedLater(node, !quoted, "is expanded when the command runs"), globs: globs && !quoted };
      }
      case "command_substitution":
        this.commandSubstitution(node, depth);
        return this.decidedLater(node, !quoted, "is replaced by its output when the command runs");
      case "process_substitution":
        this.processSubstitution(node, depth);
        return {
          prefix: "/dev/fd/",
          splits: false,
          dynamic: `${quoteSource(this.text(node))} is replaced by a file name when the command runs`,
        };
      case "arithmetic_expansion":
        for (const { child } of children(node)) {
          if (child.isNamed) this.arithmetic(child, depth + 1, node);
          else if (["$((", "))", "$[", "]"].includes(child.type)) this.cover(child);
          else this.unexpected(child, quoteSource(this.text(node)));
        }
        return this.decidedLater(node, !quoted, "is computed when the command runs");
      case "brace_expression":
        this.cover(node);
        return this.decidedLater(node, true, "uses brace expansion");
      case "extglob_pattern":
      case "regex":
        this.pattern(node);
        return this.decidedLater(node, false, "is a pattern");
      case "$":
        if (this.literalDollar(node)) {
          this.cover(node);
          return { value: "$", prefix: "$", splits: false };
        }
        return this.misread(node);
      default:
        return this.misread(node);
    }
  }

  /**
   * Whether an anonymous `$` token is a literal dollar for bash: `\$`, or
   * `$` with nothing after it that bash expands (`a$`, `$ b`). Followed by a
   * quote it starts `$"..."` or `$'...'`.
   */
  private literalDollar(node: Node): boolean {
    if (node.isNamed || node.type !== "$") return false;
    const text = this.text(node);
    if (text === "\\$") return true;
    return text === "$" && !/^[A-Za-z0-9_{(\[@*#?$!\-'"]/.test(this.source.slice(node.endIndex, node.endIndex + 1));
  }

  private misread(node: Node): WordParts {
    this.unexpected(node, "a word");
    return { prefix: "", splits: true, dynamic: "not understood" };
  }

  private doubleQuoted(node: Node, depth: number): WordParts {
    const parts: WordParts[] = [];
    // Literal text is read in runs, since the parser leaves the newlines of a
    // string out of its nodes (`"a⏎b"` is one word for bash, holding a
    // newline) and a backslash before such a newline removes both.
    let run = "";
    let position = node.startIndex;
    const flush = (): boolean => {
      if (run === "") return true;
      const literal = readLiteral(run, "double");
      run = "";
      if (literal.unrecognized !== undefined) {
        this.literalNotRead("string", node, literal.unrecognized, false);
        return false;
      }
      parts.push({ value: literal.value, prefix: literal.value, splits: false });
      return true;
    };
    for (const { child } of children(node)) {
      const gap = this.source.slice(position, child.startIndex);
      position = child.endIndex;
      if (gap !== "") {
        if (!/^\n+$/.test(gap)) return this.misread(node);
        this.coverRange(child.startIndex - gap.length, child.startIndex);
        run += gap;
      }
      if (!child.isNamed && child.type === '"') {
        this.cover(child);
        // tree-sitter-bash folds blanks before the closing quote into its token (`" "` is one token after `"`):
        // they are part of the string's content.
        const token = this.text(child);
        if (token.length > 1 && token.endsWith('"')) run += token.slice(0, -1);
      } else if (child.type === "string_content") {
        this.cover(child);
        run += this.text(child);
      } else if (child.isNamed) {
        if (!flush()) return { prefix: "", splits: false, dynamic: "not understood" };
        parts.push(this.wordParts(child, depth + 1, true));
      } else {
        parts.push(this.misread(child));
      }
    }
    if (!flush()) return { prefix: "", splits: false, dynamic: "not understood" };
    return parts.length === 0 ? STATIC_EMPTY : joinParts(parts);
  }

  private commandSubstitution(node: Node, depth: number): void {
    if (this.text(node).startsWith("`")) {
      this.problems.push(
        `${quoteSource(this.text(node))} is a backquote substitution; use $(...) instead`,
      );
    }
    this.substitutionBody(node, depth, ["$(", ")", "`"]);
  }

  /** The starts of the substitutions whose commands were walked, for {@linkcode checkSubstitutions}. */
  private readonly walkedSubstitutions = new Set<number>();

  /**
   * Asks for every command or process substitution of the tree whose
   * commands the walk did not judge: one covered inside a node read as a
   * whole (the parser once hid `$(cmd)` in the number `36#$(cmd)`) would
   * otherwise run unseen.
   */
  checkSubstitutions(root: Node): void {
    for (const node of root.descendantsOfType(["command_substitution", "process_substitution"])) {
      if (node === null || this.walkedSubstitutions.has(node.startIndex)) continue;
      this.notUnderstood(
        `the checker did not read the commands of ${
          quoteSource(this.text(node))
        }, so it cannot tell what bash would run`,
      );
      return;
    }
  }

  /** The statements of `$(...)`, `<(...)` or `>(...)`, between the given delimiters. */
  private substitutionBody(node: Node, depth: number, delimiters: string[]): void {
    this.walkedSubstitutions.add(node.startIndex);
    for (const { child, field } of children(node)) {
      if (!child.isNamed && delimiters.includes(child.type)) {
        this.cover(child);
      } else if (field === "redirect" && REDIRECT_TYPES.has(child.type)) {
        // `$(< file)`: bash reads the file without running a command.
        this.redirect(child, undefined, depth);
      } else if (child.isNamed) {
        this.statement(child, depth + 1);
      } else if (child.type === "&" || child.type === ";") {
        this.statementsToken(child, node);
      } else {
        this.unexpected(child, quoteSource(this.text(node)));
      }
    }
  }

  private statementsToken(token: Node, parent: Node): void {
    this.cover(token);
    if (token.type === "&") {
      this.problems.push(
        `\`&\` in ${quoteSource(this.text(parent))} runs a command in the background`,
      );
    }
  }

  private processSubstitution(node: Node, depth: number): void {
    this.substitutionBody(node, depth, ["<(", ">(", ")"]);
  }

  // Redirections: which may run without asking (only /dev/null and descriptor copies), here-strings, and
  // here-documents, whose end line and body expansions are checked against what bash reads.
  /** The files `[[ ]]` tests look at, for the path rules. */
  readonly fileTests: BashRedirect[] = [];

  /**
   * Records a file a `[[ ]]` test looks at, when bash names it (a value, a
   * tilde or a glob); a value known only at run time is a string as often
   * as a path, as for `test`.
   */
  private fileTest(operator: string, word: BashWord | { text: string; value: string } | undefined): void {
    if (word === undefined || !("mayBeOption" in word)) return; // an operator read as an operand: no file
    if (word.value === undefined && word.pattern === undefined) return;
    this.fileTests.push({ text: `${operator} ${word.text}`, operator, target: word });
  }

  /** Where here-document bodies start, for the coverage check. */
  private readonly heredocBodyStarts = new Set<number>();
  /** File redirections that belong to no simple command (`done < f`, `$(< f)`). */
  readonly redirects: BashRedirect[] = [];

  private redirect(
    node: Node,
    finding: BashSimpleCommand | undefined,
    depth: number,
  ): void {
    const sink = finding?.problems ?? this.problems;
    switch (node.type) {
      case "file_redirect":
        this.fileRedirect(node, sink, finding?.redirects ?? this.redirects, depth);
        return;
      case "herestring_redirect":
        for (const { child } of children(node)) {
          if (child.type === "<<<" || child.type === "file_descriptor") this.cover(child);
          else if (child.isNamed) this.word(child, depth);
          else this.unexpected(child, quoteSource(this.text(node)));
        }
        return;
      case "heredoc_redirect":
        this.heredoc(node, finding, depth);
        return;
      default:
        this.unexpected(node, "a redirection");
    }
  }

  private fileRedirect(node: Node, sink: string[], files: BashRedirect[], depth: number): void {
    let operator = "";
    const destinations: Node[] = [];
    for (const { child, field } of children(node)) {
      if (field === "descriptor") this.cover(child);
      else if (field === "destination") destinations.push(child);
      else if (!child.isNamed) {
        this.cover(child);
        operator = child.type;
      } else this.unexpected(child, quoteSource(this.text(node)));
    }
    // A closing redirection (`3>&-`) takes no word, yet the parser reads the word after it as its destination:
    // bash passes that word to the command (`cat 3>&- /srv/secret` reads the file).
    const closes = operator === ">&-" || operator === "<&-";
    const passedOn = closes ? destinations : destinations.slice(1);
    if (passedOn.length > 0) {
      const rest = passedOn.map((d) => this.text(d)).join(" ");
      this.notUnderstood(
        `the parser read ${quoteSource(rest)} as part of the redirection ${
          quoteSource(this.text(node))
        }; bash passes it to the command as arguments`,
      );
    }
    const destination = destinations[0];
    const target = destination === undefined ? undefined : this.word(destination, depth);
    const described = quoteSource(this.text(node));
    files.push({ text: this.text(node), operator, ...(target === undefined ? {} : { target }) });
    switch (operator) {
      case ">&-":
      case "<&-":
        return;
      case ">&":
      case "<&":
        if (target?.value !== undefined && /^[0-9]+-?$|^-$/.test(target.value)) return;
        if (target?.value === "/dev/null") return;
        sink.push(
          `${described} redirects to a file; only /dev/null and descriptor copies like 2>&1 are allowed`,
        );
        return;
      case ">":
      case ">>":
      case ">|":
      case "&>":
      case "&>>":
        if (target?.value === "/dev/null") return;
        sink.push(
          `${described} writes to a file; only /dev/null and descriptor copies like 2>&1 are allowed`,
        );
        return;
      case "<":
        // The file it reads is judged by the path rules, like every other path of the line.
        return;
      default:
        this.notUnderstood(`the checker does not handle the redirection ${described}`);
    }
  }

  private heredoc(
    node: Node,
    finding: BashSimpleCommand | undefined,
    depth: number,
  ): void {
    const start = node.children.find((child) => child?.type === "heredoc_start") ?? undefined;
    const quotedDelimiter = start !== undefined && heredocDelimiterQuoted(this.text(start));
    const delimiter = start === undefined ? "" : heredocDelimiter(this.text(start));
    const stripTabs = node.child(0)?.type === "<<-";
    const asBashReadsIt = (line: string) => stripTabs ? line.replace(/^\t+/, "") : line;
    if (!node.children.some((child) => child?.type === "heredoc_end")) {
      this.notUnderstood(`the here-document ${quoteSource(this.text(node))} has no end line`);
    }
    for (const { child, field } of children(node)) {
      switch (child.type) {
        case "<<":
        case "<<-":
        case "heredoc_start":
        case "file_descriptor":
          this.cover(child);
          break;
        case "heredoc_end": {
          this.cover(child);
          this.heredocBodyStarts.add(child.startIndex);
          // The parser sometimes ends a here-document at a line bash does not
          // accept as its end; bash then reads on, expanding what follows.
          const lineStart = this.source.lastIndexOf("\n", child.startIndex - 1) + 1;
          const lineEnd = this.source.indexOf("\n", lineStart);
          const line = this.source.slice(lineStart, lineEnd === -1 ? undefined : lineEnd);
          if (asBashReadsIt(line) !== delimiter) {
            this.notUnderstood(
              `the parser ends a here-document at ${quoteSource(line)}, but bash ends it only at ${
                quoteSource(delimiter)
              }`,
            );
          }
          break;
        }
        case "heredoc_body": {
          this.heredocBodyStarts.add(child.startIndex);
          // Continuations are already joined where bash joins them
          // (`EO\⏎F` ends `<<EOF`), so the lines are compared as they are.
          const lines = this.text(child).split("\n");
          if (lines.some((line) => asBashReadsIt(line) === delimiter)) {
            this.notUnderstood(
              `bash ends the here-document ${quoteSource(this.text(child))} earlier than the parser, at ${
                quoteSource(delimiter)
              }`,
            );
          }
          this.heredocBody(child, quotedDelimiter, depth);
          break;
        }
        default:
          if (field === "redirect" && REDIRECT_TYPES.has(child.type)) {
            this.redirect(child, finding, depth);
          } else if (child.isNamed) {
            // What follows the delimiter on its line (`| head`, `&& ls`)
            // belongs to the enclosing list or pipeline.
            this.statement(child, depth + 1);
          } else if (child.type === "&") {
            this.statementsToken(child, node);
          } else if (STATEMENT_TOKENS.has(child.type)) {
            this.cover(child);
          } else {
            this.unexpected(child, quoteSource(this.text(node)));
          }
      }
    }
  }

  private heredocBody(node: Node, quotedDelimiter: boolean, depth: number): void {
    this.cover(node);
    if (quotedDelimiter) {
      if (node.namedChildCount > 0) {
        this.notUnderstood(
          `the parser found expansions in the quoted here-document ${quoteSource(this.text(node))}`,
        );
      }
      return;
    }
    // The parser leaves backquotes (and whatever it does not recognise) inside
    // plain text, so every stretch of text between expansions is read again.
    let literalStart = node.startIndex;
    const checkLiteral = (end: number) => {
      const text = this.source.slice(literalStart, end);
      const literal = readLiteral(text, "heredoc");
      if (literal.unrecognized !== undefined) {
        this.problems.push(
          `the here-document ${
            quoteSource(this.text(node))
          } contains ${literal.unrecognized}, which bash expands; quote the delimiter (<<'EOF') to keep it literal`,
        );
      }
    };
    for (const { child } of children(node)) {
      if (child.type === "heredoc_content") continue;
      checkLiteral(child.startIndex);
      literalStart = child.endIndex;
      if (child.isNamed) this.wordParts(child, depth + 1, true);
      else this.unexpected(child, "a here-document");
    }
    checkLiteral(node.endIndex);
  }

  /** Walks a loop's statements, whose commands may run more than once (`while cd a; do :; done`). */
  private repeated(walk: () => void): void {
    this.loops++;
    try {
      walk();
    } finally {
      this.loops--;
    }
  }

  // Conditionals and arithmetic commands: `[[ ... ]]`, `(( ... ))` and C-style `for` loops.
  private cStyleFor(node: Node, depth: number): void {
    this.problems.push(
      `the loop ${quoteSource(this.text(node))} evaluates arithmetic and assigns variables`,
    );
    for (const { child, field } of children(node)) {
      if (field === "body") this.repeated(() => this.statement(child, depth + 1));
      else if (child.isNamed) this.arithmetic(child, depth, node);
      else if (["for", "((", "))", ";"].includes(child.type)) this.cover(child);
      else this.unexpected(child, quoteSource(this.text(node)));
    }
  }

  private arithmeticCommand(node: Node, depth: number): void {
    for (const { child } of children(node)) {
      if (child.isNamed) this.arithmetic(child, depth, node);
      else if (child.type === "((" || child.type === "))") this.cover(child);
      else this.unexpected(child, quoteSource(this.text(node)));
    }
  }

  /**
   * `[[ ... ]]`, read with bash's own conditional grammar over the tokens of
   * the tree. tree-sitter's expression grammar differs from bash's (it reads
   * `-eq -eq x` as two unary tests, where bash compares the word `-eq` with
   * x arithmetically), so only the tokens are taken from the tree: which
   * words are operators, and what each operand is, is decided as bash does.
   */
  private testCommand(node: Node, depth: number): void {
    const tokens: ConditionalToken[] = [];
    let open: Node | undefined;
    let close: Node | undefined;
    for (const { child } of children(node)) {
      if (!child.isNamed && child.type === "[[" && open === undefined) open = child;
      else if (!child.isNamed && child.type === "]]") close = child;
      else if (!this.conditionalTokens(child, tokens, depth + 1)) return this.notBashConditional(node, child);
    }
    if (open === undefined || close === undefined) return this.notBashConditional(node, node);
    this.cover(open);
    this.cover(close);
    // Words the parser split where bash reads one word (`!a`, `a==b`).
    const bounds = [open, ...tokens.map((token) => token.node), close];
    for (let i = 1; i < bounds.length; i++) {
      const [left, right] = [bounds[i - 1], bounds[i]];
      if (
        left.endIndex === right.startIndex && !CONDITIONAL_METACHARACTERS.has(left.type) &&
        !CONDITIONAL_METACHARACTERS.has(right.type)
      ) {
        return this.notBashConditional(node, right);
      }
    }
    const reader = new ConditionalReader(tokens);
    const terms = reader.read();
    if (terms === undefined) return this.notBashConditional(node, reader.failedAt() ?? close);
    for (const token of tokens) if (!token.node.isNamed) this.cover(token.node);
    for (const term of terms) this.conditionalTerm(term, node, depth);
  }

  private notBashConditional(test: Node, at: Node): void {
    this.notUnderstood(
      `bash reads the conditional ${quoteSource(this.text(test))} differently from the parser (at ${
        quoteSource(this.text(at))
      })`,
    );
  }

  /** Flattens the parser's expression into tokens; false for a node that is neither. */
  private conditionalTokens(node: Node, tokens: ConditionalToken[], depth: number): boolean {
    if (this.tooDeep(node, depth)) return false;
    if (EXPRESSION_TYPES.has(node.type)) {
      for (const { child } of children(node)) {
        if (!this.conditionalTokens(child, tokens, depth + 1)) return false;
      }
      return true;
    }
    if (!node.isNamed) {
      if (!CONDITIONAL_OPERATORS.has(node.type)) return false;
      tokens.push({ node, text: node.type, operator: CONDITIONAL_METACHARACTERS.has(node.type) });
      return true;
    }
    if (node.type === "ERROR" || node.isMissing) return false;
    tokens.push({ node, text: this.text(node), operator: false });
    return true;
  }

  private conditionalTerm(term: ConditionalTerm, test: Node, depth: number): void {
    const operand = (token: ConditionalToken | undefined, asPattern: boolean) => {
      if (token === undefined) return undefined;
      if (token.node.type === "test_operator") {
        this.cover(token.node);
        return { text: token.text, value: token.text };
      }
      if (asPattern && (token.node.type === "regex" || token.node.type === "extglob_pattern")) {
        this.pattern(token.node);
        return undefined;
      }
      return this.word(token.node, depth + 1);
    };
    const shown = quoteSource(term.tokens.map((token) => token.text).join(" "));
    if (term.operator !== undefined) this.cover(term.operator.node);
    const op = term.operator?.text;
    if (term.left === undefined) {
      if (op !== undefined && FILE_TEST_OPERATORS.has(op)) this.fileTest(op, operand(term.right, false));
      if (op === "-v" || op === "-R") {
        this.problems.push(
          `${shown} in ${
            quoteSource(this.text(test))
          } tests a variable by name, and bash evaluates array subscripts (which can run commands) in it`,
        );
        this.evaluated.push(this.text(test));
      }
      operand(term.right, false);
      return;
    }
    const left = operand(term.left, false);
    const regex = op === "=~";
    if (regex && term.right !== undefined && term.right.node.type === "regex") {
      // bash reads blanks into a regular expression only inside parentheses.
      if (blankOutsideParentheses(term.right.text)) this.notBashConditional(test, term.right.node);
    }
    const right = operand(term.right, op !== undefined && PATTERN_OPERATORS.has(op));
    if (op === "-nt" || op === "-ot" || op === "-ef") {
      this.fileTest(op, left);
      this.fileTest(op, right);
    }
    if (op !== undefined && ARITHMETIC_TEST_OPERATORS.has(op)) {
      const literal = [left, right].every((side) => side?.value !== undefined && /^[+-]?[0-9]+$/.test(side.value));
      if (!literal) {
        this.problems.push(
          `${shown} compares arithmetically, and bash evaluates array subscripts (which can run commands) in the operands`,
        );
        this.evaluated.push(this.text(test));
      }
    }
  }

  // Statements: lists, pipelines, compound commands, simple commands with their assignments and redirections,
  // declarations, loops, `case` and function definitions.
  /** Asks unless every replaced `[` is where bash reads it: at the start of a command name. */
  checkBrackets(): void {
    for (const offset of this.brackets) {
      if (!this.commandNames.has(offset)) {
        this.notUnderstood(
          `the checker could not read \`[\` at offset ${offset} as the command bash runs there`,
        );
      }
    }
  }

  /** Checks that every byte of the source belongs to a node the walk understood. */
  checkCoverage(): void {
    const result = checkCoverage({
      source: this.source,
      covered: this.covered,
      firstStatement: this.firstStatement,
      lastStatement: this.lastStatement,
      heredocBodyStarts: this.heredocBodyStarts,
    });
    if (result.notUnderstood !== undefined) this.notUnderstood(result.notUnderstood);
    this.problems.push(...result.problems);
  }

  /** A node that holds statements separated by operators and keywords. */
  statements(node: Node, depth: number): void {
    if (this.tooDeep(node, depth)) return;
    let previous: Node | undefined;
    for (const { child } of children(node)) {
      if (child.isMissing || child.type === "ERROR") {
        this.syntaxError(child);
      } else if (child.isNamed) {
        this.statement(child, depth + 1);
        previous = child;
      } else if (child.type === "&") {
        this.cover(child);
        this.problems.push(
          `\`&\` runs ${
            quoteSource(previous === undefined ? "" : this.text(previous))
          } in the background; only ; && || | ( ) may join commands`,
        );
      } else if (STATEMENT_TOKENS.has(child.type)) {
        this.cover(child);
      } else {
        this.unexpected(child, quoteSource(this.text(node)));
      }
    }
  }

  statement(node: Node, depth: number): void {
    if (this.tooDeep(node, depth)) return;
    if (node.type !== "comment") {
      this.statementCount++;
      this.firstStatement = Math.min(this.firstStatement, node.startIndex);
      this.lastStatement = Math.max(this.lastStatement, node.endIndex);
    }
    switch (node.type) {
      case "command":
        this.command(node, [], node, depth);
        return;
      case "redirected_statement":
        this.redirectedStatement(node, depth);
        return;
      case "pipeline":
        // bash accepts `!` only at the start of a pipeline.
        for (const negated of node.namedChildren.slice(1)) {
          if (negated?.type === "negated_command") {
            this.notUnderstood(`bash rejects ${quoteSource(this.text(negated))} inside a pipeline`);
          }
        }
        this.statements(node, depth);
        return;
      case "list":
      case "subshell":
      case "negated_command":
      case "do_group":
      case "if_statement":
      case "elif_clause":
      case "else_clause":
        this.statements(node, depth);
        return;
      case "while_statement":
        this.repeated(() => this.statements(node, depth));
        return;
      case "compound_statement":
        if (node.child(0)?.type === "((") this.arithmeticCommand(node, depth);
        else this.statements(node, depth);
        return;
      case "for_statement":
        this.forStatement(node, depth);
        return;
      case "c_style_for_statement":
        this.cStyleFor(node, depth);
        return;
      case "case_statement":
        this.caseStatement(node, depth);
        return;
      case "function_definition":
        this.functionDefinition(node, depth);
        return;
      case "variable_assignment":
      case "variable_assignments":
        this.assignment(node, depth);
        return;
      case "declaration_command":
      case "unset_command":
        this.declaration(node, depth);
        return;
      case "test_command":
        this.testCommand(node, depth);
        return;
      case "comment":
        this.cover(node);
        return;
      default:
        this.unexpected(node, "a list of commands");
    }
  }

  private redirectedStatement(node: Node, depth: number): void {
    const body = node.childForFieldName("body");
    const redirects: Node[] = [];
    for (const { child } of children(node)) {
      if (body !== null && child.equals(body)) continue;
      if (REDIRECT_TYPES.has(child.type)) redirects.push(child);
      else this.unexpected(child, quoteSource(this.text(node)));
    }
    if (body === null) {
      for (const redirect of redirects) this.redirect(redirect, undefined, depth);
      return;
    }
    if (body.type === "command") {
      this.command(body, redirects, node, depth);
      return;
    }
    this.statement(body, depth + 1);
    for (const redirect of redirects) this.redirect(redirect, undefined, depth);
  }

  private command(
    node: Node,
    outerRedirects: Node[],
    whole: Node,
    depth: number,
  ): void {
    // Said first and alone: the assignment's "sets x for the command it prefixes" would mislead here.
    const broken = node.children.find((child) =>
      child?.type === "ERROR" || (child?.type === "command_name" && child.firstChild?.isMissing)
    );
    const gap = broken?.type === "command_name" ? broken.firstChild : broken;
    if (gap && loneAssignmentWithRedirect(gap)) {
      this.syntaxError(gap);
      return;
    }
    const finding: BashSimpleCommand = {
      text: this.text(whole),
      kind: "command",
      words: [],
      problems: [],
      redirects: [],
      ...(this.loops > 0 ? { repeated: true } : {}),
    };
    this.commands.push(finding);
    const redirects = [...outerRedirects];
    const words: Node[] = [];
    for (const { child, field } of children(node)) {
      if (child.type === "variable_assignment") {
        const name = this.text(child.childForFieldName("name") ?? child);
        finding.problems.push(
          `${quoteSource(this.text(child))} sets ${name} for the command it prefixes`,
        );
        (finding.sets ??= []).push(name);
        this.assignmentValue(child, depth);
      } else if (REDIRECT_TYPES.has(child.type)) {
        redirects.push(child);
      } else if (field === "name" && child.type === "command_name") {
        const inner = child.namedChildren.filter((n) => n !== null);
        if (inner.length !== 1 || child.childCount !== 1) {
          this.unexpected(child, quoteSource(this.text(node)));
          continue;
        }
        words.push(inner[0]);
        this.commandNames.add(inner[0].startIndex);
      } else if (field === "argument" && child.isNamed) {
        words.push(child);
      } else if (this.literalDollar(child)) {
        words.push(child);
      } else if (child.type === "$") {
        this.cover(child);
        finding.problems.push(
          `${quoteSource(this.text(node))} uses a \`$"..."\` locale-translated string`,
        );
      } else {
        this.unexpected(child, quoteSource(this.text(node)));
      }
    }
    const joined: Node[][] = [];
    for (const word of words) {
      const last = joined.at(-1);
      if (last !== undefined && last[last.length - 1].endIndex === word.startIndex) last.push(word);
      else joined.push([word]);
    }
    finding.words = joined.map((nodes) => this.joinedWord(nodes, depth));
    for (const redirect of redirects) {
      this.redirect(redirect, finding, depth);
      const before = words.find((word) => word.endIndex === redirect.startIndex);
      if (before !== undefined && /^\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(this.text(before))) {
        finding.problems.push(
          `${quoteSource(this.text(before) + this.text(redirect))} stores a file descriptor in a variable`,
        );
      }
    }
  }

  private assignment(node: Node, depth: number): void {
    const finding: BashSimpleCommand = {
      text: this.text(node),
      kind: "assignment",
      words: [],
      problems: [],
      redirects: [],
    };
    this.commands.push(finding);
    const assignments = node.type === "variable_assignments" ? node.namedChildren.filter((n) => n !== null) : [node];
    for (const assignment of assignments) {
      if (assignment.type !== "variable_assignment") {
        this.unexpected(assignment, quoteSource(this.text(node)));
        continue;
      }
      const name = this.text(assignment.childForFieldName("name") ?? assignment);
      finding.problems.push(
        `${quoteSource(this.text(assignment))} assigns the shell variable ${name}`,
      );
      (finding.sets ??= []).push(name);
      this.assignmentValue(assignment, depth);
    }
  }

  private assignmentValue(node: Node, depth: number): void {
    for (const { child, field } of children(node)) {
      if (field === "name" && child.type === "subscript") this.subscript(child, depth, node);
      else if (field === "name") this.cover(child);
      else if (!child.isNamed && (child.type === "=" || child.type === "+=")) {
        this.cover(child);
      } else if (field === "value" && child.type === "array") {
        for (const { child: element } of children(child)) {
          if (element.isNamed) this.word(element, depth);
          else if (element.type === "(" || element.type === ")") this.cover(element);
          else this.unexpected(element, quoteSource(this.text(node)));
        }
      } else if (field === "value" && child.isNamed) {
        this.word(child, depth);
      } else {
        this.unexpected(child, quoteSource(this.text(node)));
      }
    }
  }

  private declaration(node: Node, depth: number): void {
    const finding: BashSimpleCommand = {
      text: this.text(node),
      kind: "declaration",
      words: [],
      problems: [],
      redirects: [],
    };
    this.commands.push(finding);
    for (const { child } of children(node)) {
      if (!child.isNamed) {
        this.cover(child);
        finding.words.push({ text: child.type, value: child.type, mayBeOption: false });
      } else if (child.type === "variable_assignment") {
        this.cover(child.childForFieldName("name") ?? child);
        this.assignmentValue(child, depth);
        finding.words.push({ text: this.text(child), mayBeOption: false });
        (finding.sets ??= []).push(this.text(child.childForFieldName("name") ?? child));
      } else if (child.type === "variable_name") {
        this.cover(child);
        (finding.sets ??= []).push(this.text(child));
        finding.words.push({ text: this.text(child), value: this.text(child), mayBeOption: false });
      } else {
        finding.words.push(this.word(child, depth));
      }
    }
    finding.problems.push(
      `${quoteSource(this.text(node))} changes the shell's variables`,
    );
  }

  private forStatement(node: Node, depth: number): void {
    const keyword = node.child(0)?.type ?? "for";
    for (const { child, field } of children(node)) {
      if (field === "variable") {
        this.cover(child);
        // Judged as the assignment it is: `for PATH in .; do ls; done` ran the workspace's ./ls on an automatic answer.
        this.assignmentStatement(
          this.text(node),
          `the ${keyword} loop in ${quoteSource(this.text(node))} assigns the shell variable ${this.text(child)}`,
          this.text(child),
        );
      } else if (field === "value") {
        this.word(child, depth);
      } else if (field === "body") {
        this.repeated(() => this.statement(child, depth + 1));
      } else if (!child.isNamed && STATEMENT_TOKENS.has(child.type)) {
        this.cover(child);
      } else {
        this.unexpected(child, quoteSource(this.text(node)));
      }
    }
  }

  private caseStatement(node: Node, depth: number): void {
    for (const { child, field } of children(node)) {
      if (field === "value") this.word(child, depth);
      else if (child.type === "case_item") this.caseItem(child, depth);
      else if (!child.isNamed && STATEMENT_TOKENS.has(child.type)) this.cover(child);
      else if (child.type === "comment") this.cover(child);
      else this.unexpected(child, quoteSource(this.text(node)));
    }
  }

  private caseItem(node: Node, depth: number): void {
    for (const { child, field } of children(node)) {
      if (field === "value") this.word(child, depth);
      else if (child.isNamed) this.statement(child, depth + 1);
      else if (STATEMENT_TOKENS.has(child.type) || CASE_TERMINATORS.has(child.type)) this.cover(child);
      else this.unexpected(child, quoteSource(this.text(node)));
    }
  }

  private functionDefinition(node: Node, depth: number): void {
    const name = node.childForFieldName("name");
    this.problems.push(
      `${quoteSource(this.text(node))} defines the function ${name === null ? "?" : this.text(name)}`,
    );
    for (const { child, field } of children(node)) {
      if (field === "name") this.cover(child);
      else if (field === "body") this.statement(child, depth + 1);
      else if (["function", "(", ")"].includes(child.type)) this.cover(child);
      else this.unexpected(child, quoteSource(this.text(node)));
    }
  }
}

/** Whether a regular expression holds a blank outside parentheses (quoted or not: either asks). */
function blankOutsideParentheses(regex: string): boolean {
  let depth = 0;
  for (let i = 0; i < regex.length; i++) {
    const char = regex[i];
    if (char === "\\") i++;
    else if (char === "(") depth++;
    else if (char === ")") depth = Math.max(0, depth - 1);
    else if (depth === 0 && /\s/.test(char)) return true;
  }
  return false;
}

/** One token of a `[[ ... ]]` conditional: an operator or a word. */
interface ConditionalToken {
  node: Node;
  /** The token as written; bash compares it with its operators as written (`'-f'` is no operator). */
  text: string;
  /** Whether bash's lexer makes it an operator token (`&&`, `||`, `(`, `)`, `<`, `>`). */
  operator: boolean;
}

/** A primary of the conditional: `word`, `-op word` or `word op word`. */
interface ConditionalTerm {
  tokens: ConditionalToken[];
  left?: ConditionalToken;
  operator?: ConditionalToken;
  right?: ConditionalToken;
}

const EXPRESSION_TYPES = new Set(["binary_expression", "unary_expression", "parenthesized_expression"]);
const CONDITIONAL_METACHARACTERS = new Set(["&&", "||", "(", ")", "<", ">"]);
const CONDITIONAL_OPERATORS = new Set([...CONDITIONAL_METACHARACTERS, "!", "==", "!=", "=", "=~", "-a", "-o"]);
// bash's test_unop: a `-` and one of these letters, as one word.
const UNARY_LETTERS = "abcdefghknoprstuvwxzGLNOSR";
const BINARY_OPERATORS = new Set(
  "= == != < > =~ -nt -ot -ef -eq -ne -lt -le -gt -ge".split(" "),
);
const PATTERN_OPERATORS = new Set(["=", "==", "!=", "=~"]);

/** bash's `cond_expr` grammar (parse.y) over the tokens; the terms found, or undefined for a syntax error. */
class ConditionalReader {
  private position = 0;
  private readonly terms: ConditionalTerm[] = [];

  constructor(private readonly tokens: ConditionalToken[]) {}

  read(): ConditionalTerm[] | undefined {
    if (!this.expression(0) || this.position !== this.tokens.length) return undefined;
    return this.terms;
  }

  failedAt(): Node | undefined {
    return this.tokens[Math.min(this.position, this.tokens.length - 1)]?.node;
  }

  private peek(): ConditionalToken | undefined {
    return this.tokens[this.position];
  }

  private isWord(token: ConditionalToken | undefined): token is ConditionalToken {
    return token !== undefined && !token.operator;
  }

  private expression(depth: number): boolean {
    if (depth > 100 || !this.term(depth)) return false;
    for (;;) {
      const next = this.peek();
      if (next === undefined || !next.operator || (next.text !== "&&" && next.text !== "||")) return true;
      this.position++;
      if (!this.term(depth)) return false;
    }
  }

  private term(depth: number): boolean {
    const token = this.peek();
    if (token === undefined) return false;
    this.position++;
    if (token.operator && token.text === "(") {
      if (!this.expression(depth + 1)) return false;
      const close = this.peek();
      if (close === undefined || !close.operator || close.text !== ")") return false;
      this.position++;
      return true;
    }
    if (token.operator) return false;
    if (token.text === "!") return this.term(depth + 1);
    if (token.text.length === 2 && token.text[0] === "-" && UNARY_LETTERS.includes(token.text[1])) {
      const operand = this.peek();
      if (!this.isWord(operand)) return false;
      this.position++;
      this.terms.push({ tokens: [token, operand], operator: token, right: operand });
      return true;
    }
    const next = this.peek();
    if (next !== undefined && BINARY_OPERATORS.has(next.text) && (next.operator || !["<", ">"].includes(next.text))) {
      this.position++;
      const right = this.peek();
      if (!this.isWord(right)) return false;
      this.position++;
      this.terms.push({ tokens: [token, next, right], left: token, operator: next, right });
      return true;
    }
    this.terms.push({ tokens: [token], left: token });
    return true;
  }
}

// tree-sitter-bash reads `x=1 2>/dev/null` (and `>f x=1`) as a command whose name is missing, and with more
// after it (`x=1 >f; echo`) as an error inside that command: a gap of the grammar, not of the line.
function loneAssignmentWithRedirect(node: Node): boolean {
  const command = node.parent?.type === "command_name" ? node.parent.parent : node.parent;
  if (command?.type !== "command") return false;
  const before = command.namedChildren.filter((child) => child !== null && child.startIndex < node.startIndex);
  return before.some((child) => child!.type === "variable_assignment") &&
    before.some((child) => child!.type.endsWith("_redirect")) &&
    before.every((child) => child!.type === "variable_assignment" || child!.type.endsWith("_redirect"));
}
