/**
 * Line continuations, removed as bash removes them, before the walk.
 *
 * bash deletes a backslash-newline while it reads its input, before it splits
 * words or recognises an operator or an expansion: `$\⏎[...]` is the
 * arithmetic `$[...]`, `$(\⏎(...))` is `$((...))`, `2\⏎>f` redirects
 * descriptor 2, `<\⏎<E` starts a here-document. The parser reads the same
 * continuation as a separator or as part of a literal word, so its tree
 * describes another line. The walk therefore reads the line as bash reads it,
 * with every continuation bash removes already removed.
 *
 * bash keeps a continuation only where it reads characters literally: inside
 * single quotes and `$'...'`, in a comment, and in the body of a here-document
 * whose delimiter is quoted. Which of those a continuation sits in is read from
 * the tree of the line as written, and checked again on the tree of the joined
 * line; when the two disagree (a continuation decided where a quote or a
 * here-document starts) the line is not understood.
 *
 * @module
 */
import type { Node, Tree } from "web-tree-sitter";
import { heredocDelimiterQuoted, quoteSource } from "./_literals.ts";

/** How bash treats one continuation. */
type Reading = "kept" | "removed" | { unsure: string };

/**
 * Whether a single quote inside `node` may not be the quote the parser takes
 * it for: `'` is an ordinary character inside double quotes and
 * here-documents, and its reading inside `${...}`, arithmetic and test
 * expressions depends on the context.
 */
function unsureQuoteContext(node: Node): boolean {
  return ["string", "heredoc_body", "expansion"].includes(node.type) || /arithmetic|expression/.test(node.type);
}

/** The offsets of every backslash-newline not itself escaped by a backslash. */
function continuationOffsets(source: string): number[] {
  const offsets: number[] = [];
  for (let i = source.indexOf("\\\n"); i !== -1; i = source.indexOf("\\\n", i + 2)) {
    let backslashes = 0;
    while (source[i - 1 - backslashes] === "\\") backslashes++;
    if (backslashes % 2 === 0) offsets.push(i);
  }
  return offsets;
}

function ancestors(node: Node | null): Node[] {
  const found: Node[] = [];
  for (let current = node; current !== null; current = current.parent) found.push(current);
  return found;
}

/** Whether a here-document body node belongs to a here-document with a quoted delimiter. */
function quotedHeredocBody(body: Node, source: string): boolean {
  const start = body.parent?.children.find((child) => child?.type === "heredoc_start");
  return start !== undefined && start !== null &&
    heredocDelimiterQuoted(source.slice(start.startIndex, start.endIndex));
}

/**
 * Whether bash reads a continuation just before `offset` literally because it
 * sits inside `node`: after the opening quote of `'...'`, after the `$'` of
 * `$'...'`, after the `#` of a comment, or anywhere in the body of a
 * here-document with a quoted delimiter.
 */
function readsLiterallyAt(node: Node, source: string, offset: number): boolean {
  if (offset >= node.endIndex) return false;
  switch (node.type) {
    case "raw_string":
    case "comment":
      return offset > node.startIndex;
    case "ansi_c_string":
      return offset > node.startIndex + 1;
    case "heredoc_body":
      return offset >= node.startIndex && quotedHeredocBody(node, source);
    default:
      return false;
  }
}

/** How bash treats the character at `offset` of `source`, as `tree` reads its context. */
function readingAt(tree: Tree, source: string, offset: number): Reading {
  const chain = ancestors(tree.rootNode.descendantForIndex(offset, offset + 1));
  const literal = chain.find((node) => readsLiterallyAt(node, source, offset));
  if (literal === undefined) return "removed";
  if (literal.type === "raw_string" || literal.type === "ansi_c_string") {
    const context = chain.slice(chain.indexOf(literal) + 1).find(unsureQuoteContext);
    if (context !== undefined) {
      return {
        unsure: `the line continuation in ${
          quoteSource(source.slice(literal.startIndex, literal.endIndex))
        } sits in quotes inside ${
          quoteSource(source.slice(context.startIndex, context.endIndex))
        }, where bash may not read them as quotes`,
      };
    }
  }
  return "kept";
}

/** The line as bash reads it, or why it cannot be known. */
export type JoinedLine = { source: string } | { notUnderstood: string };

/**
 * Removes the line continuations bash removes from `source`, whose tree is
 * `tree`. `reparse` parses the joined line, for the check that it reads every
 * remaining continuation as literal and none removed as quoted.
 */
export async function joinContinuations(
  source: string,
  tree: Tree,
  reparse: (source: string) => Promise<Tree | undefined>,
): Promise<JoinedLine> {
  const offsets = continuationOffsets(source);
  if (offsets.length === 0) return { source };
  const kept = new Set<number>();
  for (const offset of offsets) {
    const reading = readingAt(tree, source, offset);
    if (typeof reading === "object") return { notUnderstood: reading.unsure };
    if (reading === "kept") kept.add(offset);
  }
  if (kept.size === offsets.length) return { source };
  let joined = "";
  let from = 0;
  // Where each continuation lands in the joined line.
  const keptAt: number[] = [];
  const removedAt: number[] = [];
  for (const offset of offsets) {
    if (kept.has(offset)) {
      keptAt.push(joined.length + offset - from);
      continue;
    }
    joined += source.slice(from, offset);
    from = offset + 2;
    removedAt.push(joined.length);
  }
  joined += source.slice(from);
  const joinedTree = await reparse(joined);
  if (joinedTree === undefined) return { notUnderstood: "parsing the command took too long" };
  try {
    for (const at of keptAt) {
      if (readingAt(joinedTree, joined, at) !== "kept") return { notUnderstood: disagreement(joined, at) };
    }
    for (const at of removedAt) {
      // A removed continuation that lands inside a quote, a comment or a
      // quoted here-document would have been kept by bash.
      if (readingAt(joinedTree, joined, at) !== "removed") return { notUnderstood: disagreement(joined, at) };
    }
  } finally {
    joinedTree.delete();
  }
  return { source: joined };
}

function disagreement(joined: string, at: number): string {
  return `bash and the parser disagree on whether the line continuation before ${
    quoteSource(joined.slice(at, at + 20))
  } is quoted`;
}
