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

  protected testCommand(node: Node, depth: number): void {
    for (const { child } of children(node)) {
      if (!child.isNamed && ["[[", "]]", "[", "]"].includes(child.type)) {
        this.cover(child);
      } else if (child.isNamed) {
        this.testExpression(child, depth + 1, node);
      } else {
        this.unexpected(child, quoteSource(this.text(node)));
      }
    }
  }

  protected testExpression(node: Node, depth: number, test: Node): void {
    if (this.tooDeep(node, depth)) return;
    switch (node.type) {
      case "binary_expression": {
        const operator = node.childForFieldName("operator");
        const operands = [
          node.childForFieldName("left"),
          node.childForFieldName("right"),
        ];
        if (operator !== null && ARITHMETIC_TEST_OPERATORS.has(this.text(operator))) {
          const literal = operands.every((operand) => operand !== null && /^[+-]?[0-9]+$/.test(this.text(operand)));
          if (!literal) {
            this.problems.push(
              `${
                quoteSource(this.text(node))
              } compares arithmetically, and bash evaluates array subscripts (which can run commands) in the operands`,
            );
          }
        }
        for (const { child } of children(node)) {
          if (operator !== null && child.equals(operator)) this.cover(child);
          else if (child.type === "regex") this.pattern(child);
          else if (child.isNamed) this.testExpression(child, depth + 1, test);
          else this.unexpected(child, quoteSource(this.text(test)));
        }
        return;
      }
      case "unary_expression": {
        const operator = node.child(0);
        if (operator !== null && (this.text(operator) === "-v" || this.text(operator) === "-R")) {
          this.problems.push(
            `${
              quoteSource(this.text(node))
            } tests a variable by name, and bash evaluates array subscripts (which can run commands) in it`,
          );
        }
        for (const { child } of children(node)) {
          if (operator !== null && child.equals(operator)) this.cover(child);
          else if (child.isNamed) this.testExpression(child, depth + 1, test);
          else this.unexpected(child, quoteSource(this.text(test)));
        }
        return;
      }
      case "parenthesized_expression":
        for (const { child } of children(node)) {
          if (child.isNamed) this.testExpression(child, depth + 1, test);
          else if (child.type === "(" || child.type === ")") this.cover(child);
          else this.unexpected(child, quoteSource(this.text(test)));
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
}
