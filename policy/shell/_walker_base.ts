/**
 * The state every part of the walk shares: the source, the simple commands
 * found, the reasons to ask, and which bytes of the source the walk has
 * accounted for. The walk is one class split over several files, each layer
 * extending the one before: this base, expansions (`_expansions.ts`), words
 * (`_words.ts`), redirections (`_redirects.ts`), conditionals and arithmetic
 * commands (`_conditionals.ts`) and statements (`_walker.ts`).
 *
 * @module
 */
import type { Node } from "web-tree-sitter";
import type { BashSimpleCommand } from "./_tree.ts";
import { quoteSource } from "./_literals.ts";
import { describeNode, firstUnmodelledNode } from "./_node_types.ts";

/** How deeply nodes may nest before the walk gives up (and the line asks). */
export const MAX_DEPTH = 200;

/** Tokens that join or open statements, which the walk accounts for as it meets them. */
export const STATEMENT_TOKENS: ReadonlySet<string> = new Set(
  "; && || | |& ( ) { } ! if then elif else fi for select in do done while until case esac function".split(
    " ",
  ),
);

/** The node types of a redirection. */
export const REDIRECT_TYPES: ReadonlySet<string> = new Set([
  "file_redirect",
  "heredoc_redirect",
  "herestring_redirect",
]);

/** The children of a node with the field each sits in. */
export function children(node: Node): { child: Node; field: string | null }[] {
  const result = [];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child !== null) {
      result.push({ child, field: node.fieldNameForChild(i) });
    }
  }
  return result;
}

/** The shared state of the walk and the helpers every layer uses. */
export abstract class WalkerBase {
  readonly commands: BashSimpleCommand[] = [];
  readonly problems: string[] = [];
  understood = true;
  /** Byte ranges of the source the walk has accounted for. */
  protected readonly covered: [number, number][] = [];

  /**
   * @param source The command line as bash reads it. The tree may come from
   * a copy with some bytes replaced (see `_tree.ts`), so the text of a node
   * is always read from here, never from the node.
   */
  constructor(protected readonly source: string) {}

  /** The text of a node as bash reads it. */
  protected text(node: Node): string {
    return this.source.slice(node.startIndex, node.endIndex);
  }

  /** Walks a node that holds statements (a substitution's body, a loop's body). */
  abstract statement(node: Node, depth: number): void;

  /** Judges one redirection; its problems go to `finding` when it belongs to a command. */
  protected abstract redirect(node: Node, finding: BashSimpleCommand | undefined, depth: number): void;

  protected notUnderstood(reason: string): void {
    this.understood = false;
    if (!this.problems.includes(reason)) this.problems.push(reason);
  }

  protected cover(node: Node): void {
    this.covered.push([node.startIndex, node.endIndex]);
  }

  /** Accounts for source text that belongs to a node but to none of its children. */
  protected coverRange(start: number, end: number): void {
    this.covered.push([start, end]);
  }

  protected unexpected(node: Node, where: string): void {
    if (node.type === "ERROR" || node.isMissing) {
      this.syntaxError(node);
      return;
    }
    const what = node.isNamed ? `${node.type} ${quoteSource(this.text(node))}` : `the token ${quoteSource(node.type)}`;
    this.notUnderstood(`the checker does not handle ${what} in ${where}`);
  }

  protected syntaxError(node: Node): void {
    const text = node.isMissing ? `a missing ${quoteSource(node.type)}` : quoteSource(this.text(node));
    this.notUnderstood(`bash would not parse this as written: syntax error at ${text}`);
  }

  protected tooDeep(node: Node, depth: number): boolean {
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
}
