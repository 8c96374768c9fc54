/**
 * Reads a bash command line into the simple commands it would run and the
 * constructs around them that need a person's approval.
 *
 * The walk knows every node type it accepts; anything else, any syntax error,
 * and any text of the source that no understood node accounts for makes the
 * result "not understood", so that the caller asks instead of allowing. That
 * last check is what catches tree-sitter-bash's known misparses, where words
 * end up in the wrong place or a newline silently joins two commands.
 *
 * @module
 */
import type { Node } from "web-tree-sitter";
import { parseBash } from "./_parser.ts";

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
}

/** Longer command lines are not parsed at all. */
export const MAX_COMMAND_LENGTH = 100_000;
const MAX_DEPTH = 200;
const QUOTE_LIMIT = 60;

/** Quotes a piece of source for a human-readable reason. */
export function quoteSource(text: string): string {
  const oneLine = text.replaceAll("\n", "\\n");
  const short = oneLine.length > QUOTE_LIMIT ? `${oneLine.slice(0, QUOTE_LIMIT - 1)}…` : oneLine;
  return `\`${short}\``;
}

const STATEMENT_TOKENS = new Set(
  "; && || | |& ( ) { } ! if then elif else fi for select in do done while until case esac function".split(
    " ",
  ),
);

const CASE_TERMINATORS = new Set([";;", ";&", ";;&"]);

const ARITHMETIC_ASSIGNMENTS = new Set(
  "= += -= *= /= %= **= <<= >>= &= ^= |= ++ --".split(" "),
);

const ARITHMETIC_TEST_OPERATORS = new Set(
  "-eq -ne -lt -le -gt -ge".split(" "),
);

// Parameter-expansion operators that only read the variable. Left out on
// purpose: `=`/`:=` (assign), `!` (indirect, evaluates array subscripts) and
// the `@` transformations other than these (`@P` runs command substitutions).
const READING_EXPANSION_OPERATORS = new Set(
  ":- - :? ? :+ + # ## % %% / // /# /% ^ ^^ , ,,".split(" "),
);
const SAFE_TRANSFORMATIONS = new Set(["Q", "E", "U", "u", "L", "a", "K", "k"]);

const REDIRECT_TYPES = new Set([
  "file_redirect",
  "heredoc_redirect",
  "herestring_redirect",
]);

interface WordParts {
  value?: string;
  /** Static text known at the start of the word, before any run-time part. */
  prefix: string;
  dynamic?: string;
  /** An unquoted expansion may split the word into several words. */
  splits: boolean;
}

const STATIC_EMPTY: WordParts = { value: "", prefix: "", splits: false };

/** A word part whose value is only known when the command runs, with why. */
function decidedLater(node: Node, splits: boolean, why: string): WordParts {
  return { prefix: "", splits, dynamic: `${quoteSource(node.text)} ${why}` };
}

function joinParts(parts: WordParts[]): WordParts {
  let value: string | undefined = "";
  let prefix = "";
  let prefixOpen = true;
  let dynamic: string | undefined;
  let splits = false;
  for (const part of parts) {
    if (prefixOpen) {
      prefix += part.value ?? part.prefix;
      if (part.value === undefined) prefixOpen = false;
    }
    if (part.value === undefined) {
      value = undefined;
      dynamic ??= part.dynamic;
    } else if (value !== undefined) {
      value += part.value;
    }
    splits ||= part.splits;
  }
  return { value, prefix, dynamic, splits };
}

const EXPANSION_START = /[A-Za-z0-9_({[@*#?$!\-'"]/;

/**
 * Reads unquoted or double-quoted literal text the way bash does; reports
 * expansion syntax the parser did not turn into nodes, since text it treats as
 * literal but bash expands is exactly where a command could hide.
 */
function readLiteral(
  text: string,
  mode: "unquoted" | "double" | "heredoc" | "pattern",
): { value: string; unrecognized?: string; glob?: string } {
  let value = "";
  let glob: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    const next = text[i + 1];
    if (char === "\\" && next !== undefined) {
      if (next === "\n") {
        i++;
        continue;
      }
      const escapable = mode === "unquoted" || mode === "pattern" ||
        "$`\\".includes(next) || (mode === "double" && next === '"');
      if (escapable) {
        value += next;
        i++;
        continue;
      }
      value += char;
      continue;
    }
    if (char === "`") return { value, unrecognized: "a backquote" };
    if (char === "$" && next !== undefined && EXPANSION_START.test(next)) {
      const quotedDollar = mode !== "unquoted" && (next === "'" || next === '"');
      if (!quotedDollar) return { value, unrecognized: `\`$${next}\`` };
    }
    if (mode === "unquoted") {
      if (char === "\n") return { value, unrecognized: "a newline" };
      if ("'\"<>|&;()".includes(char)) {
        return { value, unrecognized: `\`${char}\`` };
      }
      if ("*?[".includes(char)) glob ??= "a glob pattern";
      if ("{}".includes(char)) glob ??= "brace expansion";
      if (char === "~" && (i === 0 || "=:".includes(text[i - 1]))) {
        glob ??= "tilde expansion";
      }
    }
    value += char;
  }
  return { value, glob };
}

const ANSI_C_SIMPLE: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** Decodes the inside of `$'...'` as bash does; NUL ends the string. */
export function decodeAnsiC(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const char = body[i];
    if (char !== "\\" || i + 1 >= body.length) {
      out += char;
      continue;
    }
    const next = body[++i];
    if (next in ANSI_C_SIMPLE) {
      out += ANSI_C_SIMPLE[next];
      continue;
    }
    const numeric = (pattern: RegExp, radix: number, skip: number) => {
      const match = pattern.exec(body.slice(i + skip));
      if (match === null) return false;
      out += String.fromCodePoint(parseInt(match[0], radix));
      i += skip + match[0].length - 1;
      return true;
    };
    if (/[0-7]/.test(next) && numeric(/^[0-7]{1,3}/, 8, 0)) continue;
    if (next === "x" && numeric(/^[0-9a-fA-F]{1,2}/, 16, 1)) continue;
    if (next === "u" && numeric(/^[0-9a-fA-F]{1,4}/, 16, 1)) continue;
    if (next === "U" && numeric(/^[0-9a-fA-F]{1,8}/, 16, 1)) continue;
    if (next === "c" && i + 1 < body.length) {
      out += String.fromCharCode(body.charCodeAt(++i) & 0x1f);
      continue;
    }
    out += `\\${next}`;
  }
  const nul = out.indexOf("\0");
  return nul === -1 ? out : out.slice(0, nul);
}

/** The delimiter of a here-document as bash compares it: quotes removed. */
function heredocDelimiter(word: string): string {
  let out = "";
  for (let i = 0; i < word.length; i++) {
    const char = word[i];
    if (char === "'") {
      const end = word.indexOf("'", i + 1);
      out += word.slice(i + 1, end === -1 ? undefined : end);
      i = end === -1 ? word.length : end;
    } else if (char === '"') {
      let j = i + 1;
      for (; j < word.length && word[j] !== '"'; j++) {
        if (word[j] === "\\" && '"\\$`'.includes(word[j + 1] ?? "")) j++;
        out += word[j];
      }
      i = j;
    } else if (char === "\\" && i + 1 < word.length) {
      out += word[++i];
    } else {
      out += char;
    }
  }
  return out;
}

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

class Walker {
  readonly commands: BashSimpleCommand[] = [];
  readonly problems: string[] = [];
  understood = true;
  statementCount = 0;
  private firstStatement = Infinity;
  private lastStatement = -1;
  private readonly covered: [number, number][] = [];
  private readonly heredocBodyStarts = new Set<number>();

  constructor(private readonly source: string) {}

  private notUnderstood(reason: string): void {
    this.understood = false;
    if (!this.problems.includes(reason)) this.problems.push(reason);
  }

  private cover(node: Node): void {
    this.covered.push([node.startIndex, node.endIndex]);
  }

  private unexpected(node: Node, where: string): void {
    if (node.type === "ERROR" || node.isMissing) {
      this.syntaxError(node);
      return;
    }
    const what = node.isNamed ? `${node.type} ${quoteSource(node.text)}` : `the token ${quoteSource(node.type)}`;
    this.notUnderstood(`the checker does not handle ${what} in ${where}`);
  }

  private syntaxError(node: Node): void {
    const text = node.isMissing ? `a missing ${quoteSource(node.type)}` : quoteSource(node.text);
    this.notUnderstood(`bash would not parse this as written: syntax error at ${text}`);
  }

  private tooDeep(node: Node, depth: number): boolean {
    if (depth <= MAX_DEPTH) return false;
    this.notUnderstood(`the command nests too deeply at ${quoteSource(node.text)}`);
    return true;
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
          `\`&\` runs ${quoteSource(previous?.text ?? "")} in the background; only ; && || | ( ) may join commands`,
        );
      } else if (STATEMENT_TOKENS.has(child.type)) {
        this.cover(child);
      } else {
        this.unexpected(child, quoteSource(node.text));
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
            this.notUnderstood(`bash rejects ${quoteSource(negated.text)} inside a pipeline`);
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
      case "while_statement":
        this.statements(node, depth);
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
      else this.unexpected(child, quoteSource(node.text));
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
    const finding: BashSimpleCommand = {
      text: whole.text,
      kind: "command",
      words: [],
      problems: [],
    };
    this.commands.push(finding);
    const redirects = [...outerRedirects];
    const words: Node[] = [];
    for (const { child, field } of children(node)) {
      if (child.type === "variable_assignment") {
        const name = child.childForFieldName("name")?.text ?? child.text;
        finding.problems.push(
          `${quoteSource(child.text)} sets ${name} for the command it prefixes`,
        );
        this.assignmentValue(child, depth);
      } else if (REDIRECT_TYPES.has(child.type)) {
        redirects.push(child);
      } else if (field === "name" && child.type === "command_name") {
        const inner = child.namedChildren.filter((n) => n !== null);
        if (inner.length !== 1 || child.childCount !== 1) {
          this.unexpected(child, quoteSource(node.text));
          continue;
        }
        words.push(inner[0]);
      } else if (field === "argument" && child.isNamed) {
        words.push(child);
      } else if (child.type === "$") {
        this.cover(child);
        finding.problems.push(
          `${quoteSource(node.text)} uses a \`$"..."\` locale-translated string`,
        );
      } else {
        this.unexpected(child, quoteSource(node.text));
      }
    }
    finding.words = words.map((word) => this.word(word, depth));
    for (const redirect of redirects) {
      this.redirect(redirect, finding, depth);
      const before = words.find((word) => word.endIndex === redirect.startIndex);
      if (before !== undefined && /^\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(before.text)) {
        finding.problems.push(
          `${quoteSource(before.text + redirect.text)} stores a file descriptor in a variable`,
        );
      }
    }
  }

  private assignment(node: Node, depth: number): void {
    const finding: BashSimpleCommand = {
      text: node.text,
      kind: "assignment",
      words: [],
      problems: [],
    };
    this.commands.push(finding);
    const assignments = node.type === "variable_assignments" ? node.namedChildren.filter((n) => n !== null) : [node];
    for (const assignment of assignments) {
      if (assignment.type !== "variable_assignment") {
        this.unexpected(assignment, quoteSource(node.text));
        continue;
      }
      const name = assignment.childForFieldName("name")?.text ?? assignment.text;
      finding.problems.push(
        `${quoteSource(assignment.text)} assigns the shell variable ${name}`,
      );
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
          else this.unexpected(element, quoteSource(node.text));
        }
      } else if (field === "value" && child.isNamed) {
        this.word(child, depth);
      } else {
        this.unexpected(child, quoteSource(node.text));
      }
    }
  }

  private declaration(node: Node, depth: number): void {
    const finding: BashSimpleCommand = {
      text: node.text,
      kind: "declaration",
      words: [],
      problems: [],
    };
    this.commands.push(finding);
    for (const { child } of children(node)) {
      if (!child.isNamed) {
        this.cover(child);
        finding.words.push({ text: child.type, value: child.type, mayBeOption: false });
      } else if (child.type === "variable_assignment") {
        this.cover(child.childForFieldName("name") ?? child);
        this.assignmentValue(child, depth);
        finding.words.push({ text: child.text, mayBeOption: false });
      } else if (child.type === "variable_name") {
        this.cover(child);
        finding.words.push({ text: child.text, value: child.text, mayBeOption: false });
      } else {
        finding.words.push(this.word(child, depth));
      }
    }
    finding.problems.push(
      `${quoteSource(node.text)} changes the shell's variables`,
    );
  }

  private forStatement(node: Node, depth: number): void {
    const keyword = node.child(0)?.type ?? "for";
    for (const { child, field } of children(node)) {
      if (field === "variable") {
        this.cover(child);
        this.problems.push(
          `the ${keyword} loop in ${quoteSource(node.text)} assigns the shell variable ${child.text}`,
        );
      } else if (field === "value") {
        this.word(child, depth);
      } else if (field === "body") {
        this.statement(child, depth + 1);
      } else if (!child.isNamed && STATEMENT_TOKENS.has(child.type)) {
        this.cover(child);
      } else {
        this.unexpected(child, quoteSource(node.text));
      }
    }
  }

  private cStyleFor(node: Node, depth: number): void {
    this.problems.push(
      `the loop ${quoteSource(node.text)} evaluates arithmetic and assigns variables`,
    );
    for (const { child, field } of children(node)) {
      if (field === "body") this.statement(child, depth + 1);
      else if (child.isNamed) this.arithmetic(child, depth, node);
      else if (["for", "((", "))", ";"].includes(child.type)) this.cover(child);
      else this.unexpected(child, quoteSource(node.text));
    }
  }

  private arithmeticCommand(node: Node, depth: number): void {
    for (const { child } of children(node)) {
      if (child.isNamed) this.arithmetic(child, depth, node);
      else if (child.type === "((" || child.type === "))") this.cover(child);
      else this.unexpected(child, quoteSource(node.text));
    }
  }

  private caseStatement(node: Node, depth: number): void {
    for (const { child, field } of children(node)) {
      if (field === "value") this.word(child, depth);
      else if (child.type === "case_item") this.caseItem(child, depth);
      else if (!child.isNamed && STATEMENT_TOKENS.has(child.type)) this.cover(child);
      else if (child.type === "comment") this.cover(child);
      else this.unexpected(child, quoteSource(node.text));
    }
  }

  private caseItem(node: Node, depth: number): void {
    for (const { child, field } of children(node)) {
      if (field === "value") this.word(child, depth);
      else if (child.isNamed) this.statement(child, depth + 1);
      else if (STATEMENT_TOKENS.has(child.type) || CASE_TERMINATORS.has(child.type)) this.cover(child);
      else this.unexpected(child, quoteSource(node.text));
    }
  }

  private functionDefinition(node: Node, depth: number): void {
    const name = node.childForFieldName("name");
    this.problems.push(
      `${quoteSource(node.text)} defines the function ${name?.text ?? "?"}`,
    );
    for (const { child, field } of children(node)) {
      if (field === "name") this.cover(child);
      else if (field === "body") this.statement(child, depth + 1);
      else if (["function", "(", ")"].includes(child.type)) this.cover(child);
      else this.unexpected(child, quoteSource(node.text));
    }
  }

  private testCommand(node: Node, depth: number): void {
    for (const { child } of children(node)) {
      if (!child.isNamed && ["[[", "]]", "[", "]"].includes(child.type)) {
        this.cover(child);
      } else if (child.isNamed) {
        this.testExpression(child, depth + 1, node);
      } else {
        this.unexpected(child, quoteSource(node.text));
      }
    }
  }

  private testExpression(node: Node, depth: number, test: Node): void {
    if (this.tooDeep(node, depth)) return;
    switch (node.type) {
      case "binary_expression": {
        const operator = node.childForFieldName("operator");
        const operands = [
          node.childForFieldName("left"),
          node.childForFieldName("right"),
        ];
        if (operator !== null && ARITHMETIC_TEST_OPERATORS.has(operator.text)) {
          const literal = operands.every((operand) => operand !== null && /^[+-]?[0-9]+$/.test(operand.text));
          if (!literal) {
            this.problems.push(
              `${
                quoteSource(node.text)
              } compares arithmetically, and bash evaluates array subscripts (which can run commands) in the operands`,
            );
          }
        }
        for (const { child } of children(node)) {
          if (operator !== null && child.equals(operator)) this.cover(child);
          else if (child.type === "regex") this.pattern(child);
          else if (child.isNamed) this.testExpression(child, depth + 1, test);
          else this.unexpected(child, quoteSource(test.text));
        }
        return;
      }
      case "unary_expression": {
        const operator = node.child(0);
        if (operator !== null && (operator.text === "-v" || operator.text === "-R")) {
          this.problems.push(
            `${
              quoteSource(node.text)
            } tests a variable by name, and bash evaluates array subscripts (which can run commands) in it`,
          );
        }
        for (const { child } of children(node)) {
          if (operator !== null && child.equals(operator)) this.cover(child);
          else if (child.isNamed) this.testExpression(child, depth + 1, test);
          else this.unexpected(child, quoteSource(test.text));
        }
        return;
      }
      case "parenthesized_expression":
        for (const { child } of children(node)) {
          if (child.isNamed) this.testExpression(child, depth + 1, test);
          else if (child.type === "(" || child.type === ")") this.cover(child);
          else this.unexpected(child, quoteSource(test.text));
        }
        return;
      case "test_operator":
        this.cover(node);
        return;
      case "regex":
        this.pattern(node);
        return;
      default:
        this.word(node, depth);
    }
  }

  /** Text bash treats as a pattern, which the tree leaves unparsed. */
  private pattern(node: Node): void {
    this.cover(node);
    const { unrecognized } = readLiteral(node.text, "pattern");
    if (unrecognized !== undefined) {
      this.notUnderstood(
        `the pattern ${quoteSource(node.text)} contains ${unrecognized}, which the parser did not read as an expansion`,
      );
    }
  }

  private arithmetic(node: Node, depth: number, whole: Node): void {
    if (this.tooDeep(node, depth)) return;
    switch (node.type) {
      case "number":
        this.cover(node);
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
                `${quoteSource(node.text)} in ${quoteSource(whole.text)} assigns a variable`,
              );
            }
          }
        }
        return;
      case "variable_assignment":
        this.cover(node.childForFieldName("name") ?? node);
        this.problems.push(
          `${quoteSource(node.text)} in ${quoteSource(whole.text)} assigns a variable`,
        );
        for (const { child, field } of children(node)) {
          if (field === "value") this.arithmetic(child, depth + 1, whole);
          else this.cover(child);
        }
        return;
      default:
        // Variables and substitutions inside arithmetic are evaluated as
        // arithmetic again, and bash runs command substitutions hidden in
        // array subscripts of that text.
        this.problems.push(
          `${quoteSource(whole.text)} does arithmetic on ${
            quoteSource(node.text)
          }, a value computed when the command runs`,
        );
        if (node.type === "word" || node.type === "variable_name") this.cover(node);
        else this.word(node, depth);
    }
  }

  /** Reads one word and walks every substitution inside it. */
  word(node: Node, depth: number): BashWord {
    const parts = this.wordParts(node, depth, false);
    const mayBeOption = parts.value !== undefined
      ? parts.value.startsWith("-")
      : parts.splits || parts.prefix === "" || parts.prefix.startsWith("-");
    return {
      text: node.text,
      value: parts.value,
      dynamic: parts.value === undefined
        ? (parts.dynamic ?? `${quoteSource(node.text)} is expanded when the command runs`)
        : undefined,
      mayBeOption,
    };
  }

  // Text the parser left as a literal although it holds shell syntax: a misparse, so ask.
  private literalNotRead(what: "word" | "string", node: Node, unrecognized: string, splits: boolean): WordParts {
    this.notUnderstood(
      `the ${what} ${quoteSource(node.text)} contains ${unrecognized}, which the parser did not read as shell syntax`,
    );
    return { prefix: "", splits, dynamic: "not understood" };
  }

  private wordParts(node: Node, depth: number, quoted: boolean): WordParts {
    if (this.tooDeep(node, depth)) return { prefix: "", splits: true };
    switch (node.type) {
      case "word": {
        this.cover(node);
        const literal = readLiteral(node.text, "unquoted");
        if (literal.unrecognized !== undefined) {
          return this.literalNotRead("word", node, literal.unrecognized, true);
        }
        if (literal.glob !== undefined) {
          const prefix = literal.value.match(/^[^*?[{}~]*/)?.[0] ?? "";
          return {
            // A leading `~` expands to a path or stays `~`, never an option.
            prefix: literal.value.startsWith("~") ? "~" : prefix,
            splits: literal.glob === "brace expansion",
            dynamic: `${quoteSource(node.text)} uses ${literal.glob}`,
          };
        }
        return { value: literal.value, prefix: literal.value, splits: false };
      }
      case "number":
        this.cover(node);
        return /^[-+]?[0-9A-Za-z#_]*$/.test(node.text)
          ? { value: node.text, prefix: node.text, splits: false }
          : this.misread(node);
      case "raw_string":
        this.cover(node);
        return {
          value: node.text.slice(1, -1),
          prefix: node.text.slice(1, -1),
          splits: false,
        };
      case "ansi_c_string": {
        this.cover(node);
        const value = decodeAnsiC(node.text.slice(2, -1));
        return { value, prefix: value, splits: false };
      }
      case "string":
        return this.doubleQuoted(node, depth);
      case "translated_string":
        for (const { child } of children(node)) {
          if (child.type === "$") this.cover(child);
          else if (child.type === "string") this.doubleQuoted(child, depth + 1);
          else this.unexpected(child, quoteSource(node.text));
        }
        return decidedLater(node, false, "is a locale-translated string");
      case "concatenation": {
        const parts: WordParts[] = [];
        for (const { child } of children(node)) {
          if (child.isNamed) parts.push(this.wordParts(child, depth + 1, quoted));
          else parts.push(this.misread(child));
        }
        return joinParts(parts);
      }
      case "simple_expansion":
        this.cover(node);
        return decidedLater(node, !quoted, "is expanded when the command runs");
      case "expansion":
        this.expansion(node, depth);
        return decidedLater(node, !quoted, "is expanded when the command runs");
      case "command_substitution":
        this.commandSubstitution(node, depth);
        return decidedLater(node, !quoted, "is replaced by its output when the command runs");
      case "process_substitution":
        this.processSubstitution(node, depth);
        return {
          prefix: "/dev/fd/",
          splits: false,
          dynamic: `${quoteSource(node.text)} is replaced by a file name when the command runs`,
        };
      case "arithmetic_expansion":
        for (const { child } of children(node)) {
          if (child.isNamed) this.arithmetic(child, depth + 1, node);
          else if (["$((", "))", "$[", "]"].includes(child.type)) this.cover(child);
          else this.unexpected(child, quoteSource(node.text));
        }
        return decidedLater(node, !quoted, "is computed when the command runs");
      case "brace_expression":
        this.cover(node);
        return decidedLater(node, true, "uses brace expansion");
      case "extglob_pattern":
      case "regex":
        this.pattern(node);
        return decidedLater(node, false, "is a pattern");
      default:
        return this.misread(node);
    }
  }

  private misread(node: Node): WordParts {
    this.unexpected(node, "a word");
    return { prefix: "", splits: true, dynamic: "not understood" };
  }

  private doubleQuoted(node: Node, depth: number): WordParts {
    const parts: WordParts[] = [];
    for (const { child } of children(node)) {
      if (!child.isNamed && child.type === '"') {
        this.cover(child);
      } else if (child.type === "string_content") {
        this.cover(child);
        const literal = readLiteral(child.text, "double");
        if (literal.unrecognized !== undefined) {
          return this.literalNotRead("string", node, literal.unrecognized, false);
        }
        parts.push({ value: literal.value, prefix: literal.value, splits: false });
      } else if (child.isNamed) {
        parts.push(this.wordParts(child, depth + 1, true));
      } else {
        parts.push(this.misread(child));
      }
    }
    return parts.length === 0 ? STATIC_EMPTY : joinParts(parts);
  }

  private expansion(node: Node, depth: number): void {
    const tokens = children(node);
    for (let index = 0; index < tokens.length; index++) {
      const { child, field } = tokens[index];
      if (!child.isNamed) {
        this.cover(child);
        if (child.type === "${" || child.type === "}") continue;
        if (field !== "operator") {
          this.unexpected(child, quoteSource(node.text));
          continue;
        }
        const op = child.type;
        if (op === "!" && index === 1) {
          this.problems.push(
            `${
              quoteSource(node.text)
            } is an indirect expansion, which evaluates array subscripts (and can run commands)`,
          );
        } else if (op === "=" || op === ":=") {
          this.problems.push(`${quoteSource(node.text)} assigns a default value to the variable`);
        } else if (op === "@") {
          const transformation = tokens[index + 1]?.child.type ?? "";
          if (!SAFE_TRANSFORMATIONS.has(transformation)) {
            this.problems.push(
              `${quoteSource(node.text)} uses the @${transformation} transformation, which can expand commands`,
            );
          }
          if (tokens[index + 1] !== undefined) this.cover(tokens[++index].child);
        } else if (op === ":") {
          // Substring offsets are arithmetic; only literal numbers are safe.
          const operand = tokens[index + 1]?.child;
          if (operand?.type !== "number") {
            this.problems.push(
              `${quoteSource(node.text)} computes a substring offset arithmetically from a run-time value`,
            );
          }
        } else if (op === "#" && index === 1) {
          continue;
        } else if (!READING_EXPANSION_OPERATORS.has(op)) {
          this.unexpected(child, quoteSource(node.text));
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
          this.wordParts(child, depth + 1, true);
      }
    }
  }

  private subscript(node: Node, depth: number, whole: Node): void {
    for (const { child, field } of children(node)) {
      if (field === "index") {
        const literal = child.type === "number" ||
          (child.type === "word" && (child.text === "@" || child.text === "*"));
        if (literal) {
          this.cover(child);
        } else {
          this.problems.push(
            `${quoteSource(whole.text)} evaluates the array subscript ${quoteSource(child.text)} when the command runs`,
          );
          this.wordParts(child, depth + 1, true);
        }
      } else if (field === "name" || child.type === "[" || child.type === "]") {
        this.cover(child);
      } else {
        this.unexpected(child, quoteSource(whole.text));
      }
    }
  }

  private commandSubstitution(node: Node, depth: number): void {
    if (node.text.startsWith("`")) {
      this.problems.push(
        `${quoteSource(node.text)} is a backquote substitution; use $(...) instead`,
      );
    }
    for (const { child, field } of children(node)) {
      if (!child.isNamed && ["$(", ")", "`"].includes(child.type)) {
        this.cover(child);
      } else if (field === "redirect" && REDIRECT_TYPES.has(child.type)) {
        // `$(< file)`: bash reads the file without running a command.
        this.redirect(child, undefined, depth);
      } else if (child.isNamed) {
        this.statement(child, depth + 1);
      } else if (child.type === "&" || child.type === ";") {
        this.statementsToken(child, node);
      } else {
        this.unexpected(child, quoteSource(node.text));
      }
    }
  }

  private statementsToken(token: Node, parent: Node): void {
    this.cover(token);
    if (token.type === "&") {
      this.problems.push(
        `\`&\` in ${quoteSource(parent.text)} runs a command in the background`,
      );
    }
  }

  private processSubstitution(node: Node, depth: number): void {
    for (const { child } of children(node)) {
      if (!child.isNamed && ["<(", ">(", ")"].includes(child.type)) {
        this.cover(child);
      } else if (child.isNamed) {
        this.statement(child, depth + 1);
      } else if (child.type === "&" || child.type === ";") {
        this.statementsToken(child, node);
      } else {
        this.unexpected(child, quoteSource(node.text));
      }
    }
  }

  private redirect(
    node: Node,
    finding: BashSimpleCommand | undefined,
    depth: number,
  ): void {
    const sink = finding?.problems ?? this.problems;
    switch (node.type) {
      case "file_redirect":
        this.fileRedirect(node, sink, depth);
        return;
      case "herestring_redirect":
        for (const { child } of children(node)) {
          if (child.type === "<<<" || child.type === "file_descriptor") this.cover(child);
          else if (child.isNamed) this.word(child, depth);
          else this.unexpected(child, quoteSource(node.text));
        }
        return;
      case "heredoc_redirect":
        this.heredoc(node, finding, depth);
        return;
      default:
        this.unexpected(node, "a redirection");
    }
  }

  private fileRedirect(node: Node, sink: string[], depth: number): void {
    let operator = "";
    const destinations: Node[] = [];
    for (const { child, field } of children(node)) {
      if (field === "descriptor") this.cover(child);
      else if (field === "destination") destinations.push(child);
      else if (!child.isNamed) {
        this.cover(child);
        operator = child.type;
      } else this.unexpected(child, quoteSource(node.text));
    }
    if (destinations.length > 1) {
      const rest = destinations.slice(1).map((d) => d.text).join(" ");
      this.notUnderstood(
        `the parser read ${quoteSource(rest)} as part of the redirection ${
          quoteSource(node.text)
        }; bash passes it to the command as arguments`,
      );
    }
    const destination = destinations[0];
    const target = destination === undefined ? undefined : this.word(destination, depth);
    const described = quoteSource(node.text);
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
        if (target?.value === "/dev/null") return;
        sink.push(
          `${described} reads a file through the shell (which also opens /dev/tcp network paths); pass the file to the command instead`,
        );
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
    const quotedDelimiter = start !== undefined && /['"\\]/.test(start.text);
    const delimiter = start === undefined ? "" : heredocDelimiter(start.text);
    const stripTabs = node.child(0)?.type === "<<-";
    const asBashReadsIt = (line: string) => stripTabs ? line.replace(/^\t+/, "") : line;
    if (!node.children.some((child) => child?.type === "heredoc_end")) {
      this.notUnderstood(`the here-document ${quoteSource(node.text)} has no end line`);
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
          // With an unquoted delimiter bash joins a line ending in a backslash
          // with the next before it compares it: `EO\⏎F` ends `<<EOF`.
          const lines = (quotedDelimiter ? child.text : child.text.replaceAll("\\\n", "")).split("\n");
          if (lines.some((line) => asBashReadsIt(line) === delimiter)) {
            this.notUnderstood(
              `bash ends the here-document ${quoteSource(child.text)} earlier than the parser, at ${
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
            this.unexpected(child, quoteSource(node.text));
          }
      }
    }
  }

  private heredocBody(node: Node, quotedDelimiter: boolean, depth: number): void {
    this.cover(node);
    if (quotedDelimiter) {
      if (node.namedChildCount > 0) {
        this.notUnderstood(
          `the parser found expansions in the quoted here-document ${quoteSource(node.text)}`,
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
            quoteSource(node.text)
          } contains ${literal.unrecognized}, which bash expands; quote the delimiter (<<'EOF') to keep it literal`,
        );
      }
    };
    for (const { child } of children(node)) {
      if (child.type === "heredoc_content") continue;
      checkLiteral(child.startIndex);
      literalStart = child.endIndex;
      // The body is covered as a whole, so the coverage check does not see
      // continuations inside its expansions: `$(ls\⏎blk)` runs lsblk.
      for (let i = child.startIndex; i < child.endIndex; i++) {
        if (this.source[i] !== "\\" || this.source[i + 1] !== "\n") continue;
        const after = continuationEnd(this.source, i);
        if (joinsWord(this.source[i - 1]) && joinsWord(this.source[after])) {
          this.continuationJoins(i, after);
          break;
        }
        i = after - 1;
      }
      if (child.isNamed) this.wordParts(child, depth + 1, true);
      else this.unexpected(child, "a here-document");
    }
    checkLiteral(node.endIndex);
  }

  private continuationJoins(start: number, end: number): void {
    this.notUnderstood(
      `the line continuation in ${
        quoteSource(this.source.slice(Math.max(0, start - 10), end + 10))
      } joins two words into one for bash, which the parser reads apart`,
    );
  }

  /** Checks that every byte of the source belongs to a node the walk understood. */
  checkCoverage(): void {
    const source = this.source;
    const ranges = [...this.covered].sort((a, b) => a[0] - b[0]);
    let position = 0;
    const gaps: [number, number][] = [];
    for (const [start, end] of ranges) {
      if (start > position) gaps.push([position, start]);
      position = Math.max(position, end);
    }
    if (position < source.length) gaps.push([position, source.length]);
    let joinedByNewline = false;
    for (const [start, end] of gaps) {
      for (let i = start; i < end; i++) {
        const char = source[i];
        if (char === " " || char === "\t") continue;
        if (char === "\\" && source[i + 1] === "\n" && i + 1 < end) {
          // bash removes a line continuation before it splits words: `tr\⏎ap`
          // is `trap`, while the parser reads two words. Only a continuation
          // with a blank or an operator on one side separates words.
          const after = continuationEnd(source, i);
          if (joinsWord(source[i - 1]) && joinsWord(source[after])) {
            this.continuationJoins(i, after);
            return;
          }
          i = after - 1;
          continue;
        }
        if (char === "\n") {
          // Newlines before the first or after the last command join nothing.
          if (i < this.firstStatement || i >= this.lastStatement) continue;
          const rest = source.slice(i + 1, end);
          const beforeHeredoc = /^[ \t\n]*$/.test(rest) && this.heredocBodyStarts.has(end);
          if (!beforeHeredoc) joinedByNewline = true;
          continue;
        }
        this.notUnderstood(
          `the parser did not account for ${quoteSource(source.slice(i, Math.min(end, i + 20)))} at offset ${i}`,
        );
        break;
      }
    }
    if (joinedByNewline) {
      this.problems.push(
        "a newline joins commands; only ; && || | ( ) may join commands",
      );
    }
  }

  findSyntaxErrors(node: Node): void {
    if (node.type === "ERROR" || node.isMissing) {
      this.syntaxError(node);
      return;
    }
    if (!node.hasError) return;
    for (const { child } of children(node)) this.findSyntaxErrors(child);
  }
}

// Characters that end a word for bash; anything else next to a line
// continuation is glued to what is on its other side.
function joinsWord(char: string | undefined): boolean {
  return char !== undefined && !/[\s;&|()<>]/.test(char);
}

/** Where a run of line continuations starting at `start` ends. */
function continuationEnd(source: string, start: number): number {
  let end = start;
  while (source[end] === "\\" && source[end + 1] === "\n") end += 2;
  return end;
}

/**
 * Parses a command line and reads every simple command in it; fails closed
 * (`understood: false` with a reason) on anything it does not fully account
 * for.
 */
export async function analyzeBash(source: string): Promise<BashAnalysis> {
  const notUnderstood = (reason: string): BashAnalysis => ({
    commands: [],
    problems: [reason],
    understood: false,
    empty: false,
  });
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
  const tree = await parseBash(source);
  if (tree === undefined) {
    return notUnderstood("parsing the command took too long");
  }
  try {
    const walker = new Walker(source);
    const root = tree.rootNode;
    if (root.hasError) walker.findSyntaxErrors(root);
    if (root.type === "program") walker.statements(root, 0);
    else walker.statement(root, 0);
    walker.checkCoverage();
    return {
      commands: walker.commands,
      problems: walker.problems,
      understood: walker.understood,
      empty: walker.statementCount === 0,
    };
  } finally {
    tree.delete();
  }
}
