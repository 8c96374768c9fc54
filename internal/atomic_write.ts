/**
 * Atomic file replacement: readers see the old content or the new, never a
 * half-written file, and a crash leaves no partial file under the target's
 * name.
 *
 * @module
 */
import fs from "node:fs";
import path from "node:path";
import {
  createConfined,
  type FolderPin,
  inFolder,
  openFolderConfined,
  placeInFolder,
  renameInFolder,
  syncFd,
  tempName,
  unlinkConfined,
  writeAll,
} from "./confined_fs.ts";

/** Options of {@linkcode atomicWrite}. */
export interface AtomicWriteOptions {
  /** Permission bits of the file; default: those of the file being replaced, or 0o666 less the umask for a new one. */
  mode?: number;
  /**
   * Whether the file may replace an entry at the path (default true). With
   * false the path is taken only while free: a file that appeared there since
   * the caller looked is left alone and the write throws `EEXIST`.
   */
  replace?: boolean;
}

/**
 * Writes `data` to `realPath` by creating a temp file in the same folder
 * (exclusively, never through a link), writing and flushing it, giving it the
 * mode of the file it replaces, and renaming it over `realPath`. On failure
 * the temp file is removed and `realPath` is untouched.
 *
 * `realPath` must be a real path (as the policy's resolution returns). The
 * temp file is created and the rename done with the folder pinned (see
 * `confined_fs.ts`): the folder must still be its own real path, and the
 * rename must happen in the same folder the temp file was made in, or the
 * write fails with `path_changed` (kind `policy`). A process racing to swap
 * the folder for a symlink therefore cannot redirect the write. Rename
 * replaces a symlink at `realPath` itself rather than writing through it. A
 * file with several hard links is replaced by a new file, so the other links
 * keep the old content. The temp file is named `.toolfence-<pid>-<random>.tmp`;
 * one left by a killed process is removed by `sweepDebris`.
 *
 * Requires `--allow-read` and `--allow-write` for the file's folder.
 *
 * @example
 * ```ts
 * import { atomicWrite } from "@toolfence/internal";
 * const file = await Deno.makeTempFile();
 * await atomicWrite(file, "hello\n");
 * console.log(await Deno.readTextFile(file)); // hello
 * ```
 */
export async function atomicWrite(
  realPath: string,
  data: Uint8Array | string,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const folder = path.dirname(realPath);
  const name = path.basename(realPath);
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  let mode = options.mode;
  if (mode === undefined) {
    const existing = inFolder(folder, (at) => {
      try {
        return fs.lstatSync(at(name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        return undefined;
      }
    });
    if (existing?.isFile()) mode = existing.mode & 0o7777;
  }
  const temp = path.join(folder, tempName());
  // The open mode is masked by the umask; an explicit or inherited mode must be exact.
  const { fd, pin } = createConfined(temp, mode ?? 0o666, mode !== undefined);
  try {
    try {
      await writeAll(fd, bytes);
      await syncFd(fd);
    } finally {
      fs.closeSync(fd);
    }
    (options.replace === false ? placeInFolder : renameInFolder)(folder, path.basename(temp), name, pin);
  } catch (error) {
    try {
      unlinkConfined(temp, pin);
    } catch {
      // The folder is no longer where it was; the temp file stays as debris for the sweep.
    }
    throw error;
  }
  await syncFolder(folder, pin);
}

// Makes the rename itself durable. Some platforms cannot fsync a folder; the
// data is already safe then, only the rename might be lost on power failure.
async function syncFolder(folder: string, pin: FolderPin): Promise<void> {
  let fd: number | undefined;
  try {
    fd = openFolderConfined(folder, pin);
    await syncFd(fd);
  } catch {
    // best effort, see above
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
