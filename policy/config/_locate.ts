// Reading a JSON-with-comments file with positions: syntax errors and schema
// issues become problems with the file, line, column and key.
import { findNodeAtLocation, type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import type * as v from "valibot";

/** One thing wrong with a policy file. */
export interface FileProblem {
  /** The policy file. */
  file: string;
  /** 1-based line of the problem. */
  line: number;
  /** 1-based column of the problem. */
  column: number;
  /** The key path (`commands.deny[0]`), "" for the whole file. */
  key: string;
  /** What is wrong and what was expected. */
  message: string;
}

/** The 1-based line and column of `offset` in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

const SYNTAX: Record<string, string> = {
  InvalidSymbol: "an unexpected character",
  InvalidNumberFormat: "a malformed number",
  PropertyNameExpected: "a property name in double quotes was expected",
  ValueExpected: "a value was expected",
  ColonExpected: "`:` was expected",
  CommaExpected: "`,` was expected",
  CloseBraceExpected: "`}` was expected",
  CloseBracketExpected: "`]` was expected",
  EndOfFileExpected: "nothing more was expected after the top-level value",
  InvalidCommentToken: "a malformed comment",
  UnexpectedEndOfComment: "the comment is not closed",
  UnexpectedEndOfString: "the string is not closed",
  UnexpectedEndOfNumber: "the number is cut off",
  InvalidUnicode: "a malformed \\u escape",
  InvalidEscapeCharacter: "an invalid escape",
  InvalidCharacter: "a control character inside a string",
};

/** Parses JSONC (comments and trailing commas allowed); syntax errors become problems. */
export function parseJsonc(file: string, text: string): { tree?: Node; value?: unknown; problems: FileProblem[] } {
  if (text.trim() === "") return { problems: [{ file, line: 1, column: 1, key: "", message: "the file is empty" }] };
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const problems = errors.map((error) => ({
    file,
    ...lineColumn(text, error.offset),
    key: "",
    message: `not valid JSON: ${SYNTAX[printParseErrorCode(error.error)] ?? printParseErrorCode(error.error)}`,
  }));
  if (problems.length > 0 || tree === undefined) {
    if (problems.length === 0) problems.push({ file, line: 1, column: 1, key: "", message: "the file is empty" });
    return { problems };
  }
  // A key given twice would have its first value silently dropped: a rule a reader sees and nothing applies.
  const duplicates = (node: Node, at: (string | number)[]) => {
    if (node.type === "object") {
      const seen = new Map<string, Node>();
      for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (key === undefined) continue;
        const name = key.value as string;
        const first = seen.get(name);
        if (first !== undefined) {
          const was = lineColumn(text, first.offset);
          problems.push({
            file,
            ...lineColumn(text, key.offset),
            key: keyPath([...at, name]),
            message: `duplicate key ${JSON.stringify(name)} (first at line ${was.line}, column ${was.column})`,
          });
        } else seen.set(name, key);
        if (value) duplicates(value, [...at, name]);
      }
    } else if (node.type === "array") {
      (node.children ?? []).forEach((child, i) => duplicates(child, [...at, i]));
    }
  };
  duplicates(tree, []);
  if (problems.length > 0) return { problems };
  return { tree, value: nodeValue(tree), problems };
}

// The value of a node, keeping `__proto__` as an ordinary key.
function nodeValue(node: Node): unknown {
  switch (node.type) {
    case "object": {
      const out: Record<string, unknown> = Object.create(null);
      for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (key === undefined) continue;
        Object.defineProperty(out, key.value as string, {
          value: value === undefined ? undefined : nodeValue(value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return Object.setPrototypeOf(out, Object.prototype);
    }
    case "array":
      return (node.children ?? []).map(nodeValue);
    default:
      return node.value;
  }
}

/** `commands.deny[0]` for a path of keys and indexes. */
export function keyPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const part of path) {
    out += typeof part === "number" ? `[${part}]` : out === "" ? part : `.${part}`;
  }
  return out;
}

type Issue = v.BaseIssue<unknown>;

function issuePath(issue: Issue): (string | number)[] {
  return (issue.path ?? []).map((item) => item.key as string | number);
}

// A union's own message says little ("Expected (string | Object)"); when a
// branch got further into the value (an object with a bad key), its issues,
// whose paths are relative to the union's, say what is wrong there.
function deepest(issue: Issue, base: (string | number)[] = []): { issue: Issue; path: (string | number)[] }[] {
  const own = [...base, ...issuePath(issue)];
  if (issue.type !== "union" || !issue.issues?.length) return [{ issue, path: own }];
  const deeper = issue.issues.filter((inner) => issuePath(inner).length > 0);
  return deeper.length > 0 ? deeper.flatMap((inner) => deepest(inner, own)) : [{ issue, path: own }];
}

function describe(
  issue: Issue,
  path: readonly (string | number)[],
  known?: (path: readonly (string | number)[]) => string[],
): string {
  if (issue.kind === "schema" && issue.type === "strict_object" && issue.expected === "never") {
    const key = path.at(-1);
    const keys = known?.(path.slice(0, -1)) ?? [];
    return `unknown key ${JSON.stringify(key)}${keys.length ? `; expected one of: ${keys.join(", ")}` : ""}`;
  }
  if (issue.type === "strict_object" && issue.received === "undefined") {
    return `the key ${JSON.stringify(path.at(-1))} is missing`;
  }
  if (issue.type === "union" && issue.expected === "(string | Object)") {
    return `expected a string or an object, received ${issue.received}`;
  }
  // A check with a message of its own says it best.
  if (issue.kind === "validation" && !issue.message.startsWith("Invalid ")) return issue.message;
  if (issue.expected !== null && (issue.kind === "schema" || issue.kind === "validation")) {
    return `expected ${issue.expected}, received ${issue.received}`;
  }
  return issue.message.replace(/^Invalid \w+: /, "");
}

/** Schema issues as problems positioned at the offending key or value. */
export function issueProblems(
  file: string,
  text: string,
  tree: Node,
  issues: readonly Issue[],
  known?: (path: readonly (string | number)[]) => string[],
): FileProblem[] {
  const seen = new Set<string>();
  const out: FileProblem[] = [];
  for (const { issue, path } of issues.flatMap((issue) => deepest(issue))) {
    let node = findNodeAtLocation(tree, path);
    let at = node?.offset;
    // An unknown key points at the key itself.
    const unknownKey = issue.type === "strict_object" && issue.expected === "never";
    if (unknownKey && node?.parent?.type === "property" && node.parent.children?.[0]) {
      at = node.parent.children[0].offset;
    }
    for (let up = path.length - 1; at === undefined && up >= 0; up--) {
      node = findNodeAtLocation(tree, path.slice(0, up));
      at = node?.offset;
    }
    const problem = { file, ...lineColumn(text, at ?? 0), key: keyPath(path), message: describe(issue, path, known) };
    const id = `${problem.line}:${problem.column}:${problem.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(problem);
  }
  return out;
}

/** The position of the value at `path`, for rules and examples. */
export function positionOf(
  text: string,
  tree: Node,
  path: readonly (string | number)[],
): { line: number; column: number } | undefined {
  const node = findNodeAtLocation(tree, [...path]);
  return node === undefined ? undefined : lineColumn(text, node.offset);
}
