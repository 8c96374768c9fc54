/**
 * Loading an optional peer package: a framework an adapter entry point wraps,
 * the MCP SDK, `@opentelemetry/api`. On npm these are optional peers. One
 * loaded at first use through {@linkcode importPeer} (a dynamic import) that
 * is not installed is a `ToolError` with code `peer_missing` that names the
 * package and the range to install. Never at a module's top level: a
 * top-level await anywhere in an entry point's module graph makes it
 * impossible to `require()` (ERR_REQUIRE_ASYNC_MODULE), so an entry point
 * that needs a peer's values when it builds its tools imports the peer
 * statically, and a loader of such an entry point (`toolfence serve`) tells a
 * missing peer apart with {@linkcode isMissingPeer} or {@linkcode importPeer}.
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
 * Whether `error` says that the package `name` itself (not a package it
 * depends on) could not be found: Node's and Deno's `ERR_MODULE_NOT_FOUND`
 * quote the package (`'ai'`, `"@langchain/core/tools"`). For a module that
 * imports a peer statically, loaded with a dynamic `import()`.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { isMissingPeer } from "@toolfence/core";
 * const error = await import("not-installed-package").then(() => undefined, (e: unknown) => e);
 * console.log(isMissingPeer(error, "not-installed-package")); // true
 * ```
 */
export function isMissingPeer(error: unknown, name: string): boolean {
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
    if (isMissingPeer(error, peer.name)) throw missingPeerError(peer, error);
    throw error;
  }
}
