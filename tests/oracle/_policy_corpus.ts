/**
 * The command lines of the command-analysis tests (tests/policy/shell/check_command_test.ts),
 * read from that file's syntax tree so that the oracle runs every case those
 * tests judge, including ones added later: first arguments of `allows`,
 * `asks`, `check` and `checkCommand`, the lists a `for (const command of
 * [...])` walks, and the first strings of `[command, reasons]` tables.
 *
 * @module
 */
import fsp from "node:fs/promises";
import ts from "typescript";

const JUDGES = new Set(["allows", "asks", "check", "checkCommand"]);

function stringOf(node: ts.Node | undefined): string | undefined {
  if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) return node.text;
  return undefined;
}

/** The command lines in `file`; an empty list when the file does not exist. */
export async function policyTestCommands(
  file = new URL("../policy/shell/check_command_test.ts", import.meta.url),
): Promise<string[]> {
  let source: string;
  try {
    source = await fsp.readFile(file, "utf8");
  } catch {
    return [];
  }
  const tree = ts.createSourceFile("command_test.ts", source, ts.ScriptTarget.Latest, true);
  const found = new Set<string>();
  const add = (text: string | undefined) => {
    // NUL cannot be passed to a program as an argument.
    if (text !== undefined && !text.includes("\0")) found.add(text);
  };
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && JUDGES.has(node.expression.text)) {
      add(stringOf(node.arguments[0]));
    }
    if (
      ts.isForOfStatement(node) && ts.isVariableDeclarationList(node.initializer) &&
      ts.isArrayLiteralExpression(node.expression)
    ) {
      const name = node.initializer.declarations[0]?.name;
      if (name && ts.isIdentifier(name) && name.text === "command") {
        node.expression.elements.forEach((e) => add(stringOf(e)));
      }
    }
    if (ts.isArrayLiteralExpression(node)) {
      for (const element of node.elements) {
        if (
          ts.isArrayLiteralExpression(element) && element.elements.length === 2 &&
          ts.isArrayLiteralExpression(element.elements[1])
        ) {
          add(stringOf(element.elements[0]));
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return [...found];
}
