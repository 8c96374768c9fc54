/**
 * Loads tree-sitter-bash once, from bytes embedded in `_wasm.ts`, and
 * parses with a time limit.
 *
 * @module
 */
import { Language, Parser, type Tree } from "web-tree-sitter";
import { type EmbeddedWasm, TREE_SITTER_BASH_WASM, TREE_SITTER_RUNTIME_WASM } from "./_wasm.ts";

/** How long one parse may take before the command is judged not understood. */
export const PARSE_TIME_LIMIT_MS = 500;

let parserPromise: Promise<Parser> | undefined;

async function decodeWasm(wasm: EmbeddedWasm): Promise<Uint8Array> {
  const compressed = Uint8Array.from(
    atob(wasm.gzipBase64),
    (char) => char.charCodeAt(0),
  );
  const stream = new Blob([compressed]).stream().pipeThrough(
    new DecompressionStream("gzip"),
  );
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function createParser(): Promise<Parser> {
  // Handing the runtime its own wasm stops emscripten from reading
  // `tree-sitter.wasm` from disk, which would need --allow-read under Deno.
  await Parser.init({ wasmBinary: await decodeWasm(TREE_SITTER_RUNTIME_WASM) });
  const language = await Language.load(await decodeWasm(TREE_SITTER_BASH_WASM));
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}

/** Returns the shared bash parser, loading it on first use. */
export function bashParser(): Promise<Parser> {
  if (parserPromise === undefined) {
    parserPromise = createParser();
    // A failed load must not poison every later call.
    parserPromise.catch(() => parserPromise = undefined);
  }
  return parserPromise;
}

/**
 * How deeply the nodes of a parsed line may nest. The walks over a tree recurse
 * once a node, each step a call into the parser's WebAssembly: a line of 150
 * nested `$(` (a tree 452 deep) overflowed the stack inside such a call, which
 * left the runtime's own stack pointer behind, and every later parse of the
 * process failed with `memory access out of bounds` (another session's
 * `echo hi` too). A line 400 `$(` deep with `ls` inside asked before through
 * the walker's own limit; no command line anyone writes nests a tenth as deep.
 */
export const MAX_TREE_DEPTH = 256;

/** Whether `tree` nests deeper than `limit`, found without recursion (a cursor's steps). */
function nestsDeeper(tree: Tree, limit: number): boolean {
  const cursor = tree.walk();
  try {
    let depth = 0;
    for (;;) {
      if (cursor.gotoFirstChild()) {
        if (++depth > limit) return true;
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return false;
        depth--;
      }
    }
  } finally {
    cursor.delete();
  }
}

/**
 * Parses a command line; returns `undefined` when parsing took longer than
 * `timeLimitMs`, or when the tree nests deeper than {@linkcode MAX_TREE_DEPTH}
 * (a walk of it would overflow the stack), so that the caller can fail closed.
 */
export async function parseBash(
  source: string,
  timeLimitMs: number = PARSE_TIME_LIMIT_MS,
): Promise<Tree | undefined> {
  const parser = await bashParser();
  const deadline = performance.now() + timeLimitMs;
  // web-tree-sitter cancels the parse when the callback returns true, although
  // its type declares the result as void.
  const progressCallback = (() => performance.now() > deadline) as () => void;
  const tree = parser.parse(source, null, { progressCallback });
  if (tree === null) {
    parser.reset();
    return undefined;
  }
  if (nestsDeeper(tree, MAX_TREE_DEPTH)) {
    tree.delete();
    return undefined;
  }
  return tree;
}
