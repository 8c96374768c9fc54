/**
 * Finding programs on disk without `access(X_OK)`: under Deno, `node:fs`'s
 * `access` with `X_OK` asks for the process's uid (`--allow-sys=uid`) inside
 * its promise machinery, and without that grant the error escapes every
 * `try`/`catch` and the promise never settles ("Top-level await promise never
 * resolved"). `stat` needs only read access and fails the ordinary way.
 *
 * @module
 */

import { type Stats, statSync } from "node:fs";
import { stat } from "node:fs/promises";

/**
 * Whether `file` is a regular file with an execute bit set. Throws what `stat`
 * throws (a missing file, or the runtime's own refusal, which the caller tells
 * apart with `isRuntimePermissionError`), never the uncatchable error of
 * `access(X_OK)`.
 *
 * Requires `--allow-read` for `file`.
 */
export async function isExecutableFile(file: string): Promise<boolean> {
  return executable(await stat(file));
}

/**
 * {@linkcode isExecutableFile}, answered at once, for a caller that cannot
 * wait for the runtime's thread pool; false where `stat` fails.
 *
 * Requires `--allow-read` for `file`.
 */
export function isExecutableFileSync(file: string): boolean {
  try {
    return executable(statSync(file));
  } catch {
    return false;
  }
}

function executable(info: Stats): boolean {
  return info.isFile() && (info.mode & 0o111) !== 0;
}
