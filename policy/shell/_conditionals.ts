/**
 * The conditional and arithmetic-command layer of the walk: `[[ ... ]]`,
 * `(( ... ))` and C-style `for` loops.
 *
 * @module
 */
import type { Node } from "web-tree-sitter";
import { quoteSource } from "./_literals.ts";
import { children } from "./_walker_base.ts";
import { RedirectWalker } from "./_redirects.ts";

const ARITHMETIC_TEST_OPERATORS = new Set(
  "-eq -ne -lt -le -gt -ge".split(" "),
);

/** Reads `[[ ... ]]` and arithmetic commands. */
export abstract class ConditionalWalker extends RedirectWalker {
  protected cStyleFor(node: Node, depth: number): void {
    this.problems.push(
      `the loop ${quoteSource(this.text(node))} evaluates arithmetic and assigns variables`,
    );
    for (const { child, field } of children(node)) {
      if (field === "body") this.statement(child, depth + 1);
      else if (child.isNamed) this.arithmetic(child, depth, node);
      else if (["for", "((", "))", ";"].includes(child.type)) this.cover(child);
      else this.unexpected(child, quoteSource(this.text(node)));
    }
  }

  protected arithmeticCommand(node: Node, depth: number): void {
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
  protected testCommand(node: Node, depth: number): void {
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
      if (op === "-v" || op === "-R") {
        this.problems.push(
          `${shown} in ${
            quoteSource(this.text(test))
          } tests a variable by name, and bash evaluates array subscripts (which can run commands) in it`,
        );
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
    if (op !== undefined && ARITHMETIC_TEST_OPERATORS.has(op)) {
      const literal = [left, right].every((side) => side?.value !== undefined && /^[+-]?[0-9]+$/.test(side.value));
      if (!literal) {
        this.problems.push(
          `${shown} compares arithmetically, and bash evaluates array subscripts (which can run commands) in the operands`,
        );
      }
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
