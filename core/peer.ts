/**
 * Loading an optional peer package: a framework an adapter entry point wraps,
 * the MCP SDK, `@opentelemetry/api`. On npm these are optional peers, so a
 * static import of one that is not installed fails before any of our code
 * runs, with a bare `ERR_MODULE_NOT_FOUND`. Loaded through
 * {@linkcode importPeer} instead (a dynamic import, at the entry point's top
 * level or at first use), a missing peer is a `ToolError` with code
 * `peer_missing` that names the package and the range to install.
 *
 * @module
 */

import { ToolError } from "./errors.ts";

/** An optional peer package: its npm name and the range this package supports. */
export interface Peer {
  /** The package's npm name, e.g. `ai` or `@langchain/core`. */
  readonly name: string;
  /** The semver range the package is tested with, e.g. `^7.0.0` (its member's deno.json gives the same). */
  readonly range: string;
  /** What needs it, for the message, e.g. `@toolfence/adapters/ai-sdk`. */
  readonly neededBy: string;
}

/**
 * Whether `error` says that `name` itself (not a package it depends on) could
 * not be found: Node's and Deno's `ERR_MODULE_NOT_FOUND` quote the package
 * (`'ai'`, `"@langchain/core/tools"`).
 */
function isMissing(error: unknown, name: string): boolean {
  if ((error as { code?: unknown })?.code !== "ERR_MODULE_NOT_FOUND") return false;
  const text = String((error as Error)?.message ?? error);
  return [`'${name}'`, `"${name}"`, `'${name}/`, `"${name}/`].some((quoted) => text.includes(quoted));
}

/**
 * The error for a peer that is not installed: code `peer_missing`, the
 * message naming the install command.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { missingPeerError } from "@toolfence/core";
 * const error = missingPeerError({ name: "ai", range: "^7.0.0", neededBy: "@toolfence/adapters/ai-sdk" });
 * console.log(error.message); // "@toolfence/adapters/ai-sdk needs ai, which is not installed: npm install ai@^7.0.0"
 * ```
 */
export function missingPeerError(peer: Peer, cause?: unknown): ToolError {
  return new ToolError(
    `${peer.neededBy} needs ${peer.name}, which is not installed: npm install ${peer.name}@${peer.range}`,
    {
      code: "peer_missing",
      recoveryHint: `Install ${peer.name}@${peer.range} (npm install ${peer.name}@${peer.range}; ` +
        `under Deno, deno add npm:${peer.name}@${peer.range}).`,
      details: { package: peer.name, range: peer.range, neededBy: peer.neededBy },
      cause,
    },
  );
}

/**
 * Runs `load` (a dynamic `import()` of the peer, written out so that bundlers
 * and JSR see it) and returns the module; when the peer itself is not
 * installed, throws {@linkcode missingPeerError}'s `peer_missing` error. Any
 * other failure (the peer's own dependency missing, a syntax error) is
 * rethrown as it is.
 *
 * Requires --allow-read for the peer's files, as any import does.
 *
 * @example
 * ```ts
 * import { importPeer } from "@toolfence/core";
 * const v = await importPeer(
 *   { name: "valibot", range: "^1.5.0", neededBy: "this example" },
 *   () => import("valibot"),
 * );
 * console.log(typeof v.object); // "function"
 * ```
 */
export async function importPeer<M>(peer: Peer, load: () => Promise<M>): Promise<M> {
  try {
    return await load();
  } catch (error) {
    if (isMissing(error, peer.name)) throw missingPeerError(peer, error);
    throw error;
  }
}
