/**
 * The version of the `toolfence` command line (`toolfence --version`).
 *
 * @module
 */

/**
 * The package version: a copy of the root deno.json's, written there by
 * `scripts/version.ts --set` and checked by its test.
 *
 * @example
 * ```ts
 * import { VERSION } from "./version.ts";
 * console.log(`toolfence ${VERSION}`);
 * ```
 */
export const VERSION = "0.1.0";
