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
import path from "node:path";
import process from "node:process";
import { isRuntimePermissionError } from "./runtime_permissions.ts";

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

/**
 * The folders of `PATH` where a program the server runs itself, outside any
 * sandbox (bubblewrap, prlimit), may be looked for after the system's own
 * locations: absolute ones not inside the server's working folder. `npm run`
 * and `npx` put the project's `node_modules/.bin` first, and a server started
 * there serves that project as its workspace, where every sandboxed command may
 * write: a `bwrap` planted there ran outside the sandbox on every command, and
 * every result still said `sandboxed: true`. Empty when `PATH` cannot be read.
 *
 * Requires `--allow-env=PATH` (and `--allow-read` of the working folder to tell it).
 */
export function programSearchPath(): string[] {
  let searchPath = "";
  let cwd: string | undefined;
  try {
    searchPath = process.env.PATH ?? "";
  } catch {
    return [];
  }
  try {
    cwd = process.cwd();
  } catch {
    // Without read access to it: no PATH folder is trusted.
    return [];
  }
  const inside = (dir: string) => {
    const rel = path.relative(cwd!, dir);
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
  };
  return searchPath.split(":").filter((d) => path.isAbsolute(d) && !inside(path.normalize(d)));
}

/**
 * Where a program the server runs itself, outside any sandbox, may be: each of
 * `known` (the system's own locations, absolute paths ending in `/name`) and
 * then `name` in each folder of {@linkcode programSearchPath}, that is an
 * executable file, or that the runtime may not look at (a narrow
 * `--allow-read`: the caller's probe starts it by this absolute path, which
 * the runtime allows under `--allow-run=name` when PATH leads there). Never
 * the bare name: the runtime would look it up through the whole PATH, relative
 * folders and the project's `node_modules/.bin` included, and under the
 * narrow flags of `deno task serve` (which do not read /usr) a `bwrap` the
 * workspace ships ran outside the sandbox, as root, at every server start.
 *
 * Requires `--allow-env=PATH` for the PATH folders, and `--allow-read` of a
 * candidate to check it before the probe.
 */
export async function hostProgramCandidates(name: string, known: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const file of [...known, ...programSearchPath().map((dir) => path.join(dir, name))]) {
    if (found.includes(file)) continue;
    try {
      if (await isExecutableFile(file)) found.push(file);
    } catch (error) {
      // Unseen under the runtime's fence: the probe judges by starting it.
      if (isRuntimePermissionError(error)) found.push(file);
    }
  }
  return found;
}
