/**
 * The version of the `toolfence` command line (`toolfence --version`).
 *
 * @module
 */

/**
 * The package version; a test keeps it equal to the root deno.json's.
 *
 * @example
 * ```ts
 * import { VERSION } from "./version.ts";
 * console.log(`toolfence ${VERSION}`);
 * ```
 */
export const VERSION = "0.1.0";
