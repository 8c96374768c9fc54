/**
 * Atomic file replacement: readers see the old content or the new, never a
 * half-written file, and a crash leaves no partial file behind.
 *
 * @module
 */
import fsp from "node:fs/promises";
import path from "node:path";
import { ToolError } from "./errors.ts";

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
 * `realPath` must be a real path (as the policy's resolution returns): its
 * folder is checked to be its own real path before the temp file is created
 * and again before the rename, and the write fails with `path_changed`
 * (kind `policy`) otherwise. This narrows the window in which a racing process
 * could swap a folder for a symlink after the policy's check; it cannot close
 * it entirely (Node has no `openat2(RESOLVE_BENEATH)`). Rename replaces a
 * symlink at `realPath` itself rather than writing through it. A file with several hard links
 * is replaced by a new file, so the other links keep the old content.
 *
 * Requires `--allow-read` and `--allow-write` for the file's folder.
 *
 * @example
 * ```ts
 * import { atomicWrite } from "@toolfence/core";
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
  // The folder must be where the policy judged it to be, now and again just
  // before the rename: a folder swapped for a symlink by a process racing the
  // policy's check is noticed instead of written through.
  await requireRealFolder(folder, realPath);
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
    await requireRealFolder(folder, realPath);
    await fsp.rename(temp, realPath);
  } catch (error) {
    await fsp.rm(temp, { force: true }).catch(() => {});
    throw error;
  }
  await syncFolder(folder);
}

async function requireRealFolder(folder: string, realPath: string): Promise<void> {
  const real = await fsp.realpath(folder);
  if (real === folder) return;
  throw new ToolError(
    `The folder of ${realPath} is not where it was judged to be (it leads to ${real}); nothing was written`,
    {
      code: "path_changed",
      kind: "policy",
      recoverable: false,
      recoveryHint: "Resolve the path through the workspace again.",
      details: { path: realPath, folder, leadsTo: real },
    },
  );
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
