/**
 * Atomic file replacement: readers see the old content or the new, never a
 * half-written file, and a crash leaves no partial file behind.
 *
 * @module
 */
import fsp from "node:fs/promises";
import path from "node:path";

/** Options of {@linkcode atomicWrite}. */
export interface AtomicWriteOptions {
  /** Permission bits of the file; default: those of the file being replaced, or 0o666 less the umask for a new one. */
  mode?: number;
}

function randomSuffix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Writes `data` to `realPath` by writing a temp file in the same folder
 * (created exclusively, so it never follows a planted symlink), flushing it to
 * disk, giving it the mode of the file it replaces, and renaming it over
 * `realPath`. On failure the temp file is removed and `realPath` is untouched.
 *
 * `realPath` must already be resolved by the policy: rename replaces a symlink
 * at that path rather than writing through it. A file with several hard links
 * is replaced by a new file, so the other links keep the old content.
 *
 * Requires `--allow-read` and `--allow-write` for the file's folder.
 *
 * @example
 * ```ts
 * import { atomicWrite } from "./atomic_write.ts";
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
  let mode = options.mode;
  if (mode === undefined) {
    try {
      const existing = await fsp.stat(realPath);
      mode = existing.mode & 0o7777;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  // A short fixed-length name: `.<name>.tmp` would exceed NAME_MAX for long names.
  const temp = path.join(folder, `.toolfence-${randomSuffix()}.tmp`);
  const handle = await fsp.open(temp, "wx", mode ?? 0o666);
  try {
    try {
      // The open mode is masked by the umask; an explicit or inherited mode must be exact.
      if (mode !== undefined) await handle.chmod(mode);
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(temp, realPath);
  } catch (error) {
    await fsp.rm(temp, { force: true }).catch(() => {});
    throw error;
  }
  await syncFolder(folder);
}

// Makes the rename itself durable. Some platforms cannot fsync a folder; the
// data is already safe then, only the rename might be lost on power failure.
async function syncFolder(folder: string): Promise<void> {
  let handle: fsp.FileHandle | undefined;
  try {
    handle = await fsp.open(folder, "r");
    await handle.sync();
  } catch {
    // best effort, see above
  } finally {
    await handle?.close().catch(() => {});
  }
}
