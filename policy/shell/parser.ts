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
 * Parses a command line; returns `undefined` when parsing took longer than
 * `timeLimitMs`, so that the caller can fail closed.
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
  return tree;
}
