/**
 * The expansion layer of the walk: `${...}` and its operators, array
 * subscripts, arithmetic, and text bash reads as a pattern.
 *
 * @module
 */
import type { Node } from "web-tree-sitter";
import type { BashWord } from "./_tree.ts";
import { quoteSource, readLiteral, type WordParts } from "./_literals.ts";
import { children, WalkerBase } from "./_walker_base.ts";

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

/** Reads expansions, arithmetic and patterns. */
export abstract class ExpansionWalker extends WalkerBase {
  /** Reads one word and walks every substitution inside it. */
  abstract word(node: Node, depth: number): BashWord;

  /** Reads a part of a word; `quoted` inside double quotes or a here-document. */
  protected abstract wordParts(node: Node, depth: number, quoted: boolean): WordParts;

  /** Text bash treats as a pattern, which the tree leaves unparsed. */
  protected pattern(node: Node): void {
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

  protected arithmetic(node: Node, depth: number, whole: Node): void {
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
        // Variables and substitutions inside arithmetic are evaluated as
        // arithmetic again, and bash runs command substitutions hidden in
        // array subscripts of that text.
        this.problems.push(
          `${quoteSource(this.text(whole))} does arithmetic on ${
            quoteSource(this.text(node))
          }, a value computed when the command runs`,
        );
        if (node.type === "word" || node.type === "variable_name") this.cover(node);
        else this.word(node, depth);
    }
  }

  protected expansion(node: Node, depth: number, quoted: boolean): void {
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
        } else if (op === "=" || op === ":=") {
          this.problems.push(`${quoteSource(this.text(node))} assigns a default value to the variable`);
        } else if (op === "@") {
          const transformation = tokens[index + 1]?.child.type ?? "";
          if (!SAFE_TRANSFORMATIONS.has(transformation)) {
            this.problems.push(
              `${quoteSource(this.text(node))} uses the @${transformation} transformation, which can expand commands`,
            );
          }
          if (tokens[index + 1] !== undefined) this.cover(tokens[++index].child);
        } else if (op === ":") {
          // Substring offsets are arithmetic; only literal numbers are safe.
          const operand = tokens[index + 1]?.child;
          if (operand?.type !== "number") {
            this.problems.push(
              `${quoteSource(this.text(node))} computes a substring offset arithmetically from a run-time value`,
            );
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
          this.wordParts(child, depth + 1, quoted);
      }
    }
  }

  protected subscript(node: Node, depth: number, whole: Node): void {
    for (const { child, field } of children(node)) {
      if (field === "index") {
        const literal = child.type === "number" ||
          (child.type === "word" && (this.text(child) === "@" || this.text(child) === "*"));
        if (literal) {
          this.cover(child);
        } else {
          this.problems.push(
            `${quoteSource(this.text(whole))} evaluates the array subscript ${
              quoteSource(this.text(child))
            } when the command runs`,
          );
          this.wordParts(child, depth + 1, true);
        }
      } else if (field === "name" || child.type === "[" || child.type === "]") {
        this.cover(child);
      } else {
        this.unexpected(child, quoteSource(this.text(whole)));
      }
    }
  }
}
