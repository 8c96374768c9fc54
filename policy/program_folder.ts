// What the server does with a folder a sandboxed program was given to write in (the browser's profile and
// downloads): read a file the program left there, and remove the folder.

import { Buffer } from "node:buffer";
import fs from "node:fs";
import { ToolError } from "@toolfence/core";
import { openReadConfined, removeConfined } from "@toolfence/internal";

/**
 * Reads the file `file` a program wrote in the folder made for it
 * (`LauncherRequest.privateDir`), at most `maxBytes`. The program may write
 * there, so it could have made the file, or a folder above it, a link to a
 * file only the server may read (a key in its home): the file is opened
 * without following a final link in its pinned folder (`path_changed` when
 * a folder of `file` is not the one it names, `ELOOP` for a link), must be a
 * regular file (`not_a_file`, never a FIFO that would block) and is read
 * from that descriptor, never again by path; `file_too_large` past
 * `maxBytes`, however much it grows while read.
 *
 * Requires `--allow-read` for `file`'s folder.
 *
 * @example
 * ```ts
 * import { readProgramFile } from "@toolfence/policy";
 * import { mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 *
 * const dir = await mkdtemp(join(tmpdir(), "program-"));
 * await writeFile(join(dir, "page.pdf"), "%PDF");
 * console.log((await readProgramFile(join(dir, "page.pdf"), 1 << 20)).length); // 4
 * ```
 */
export async function readProgramFile(file: string, maxBytes: number): Promise<Uint8Array> {
  const fd = openReadConfined(file);
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) {
      throw new ToolError(`${file} is not a regular file`, { code: "not_a_file", details: { path: file } });
    }
    const tooLarge = (size: number) =>
      new ToolError(`${file} is ${size} bytes or more, past the ${maxBytes} it may be`, {
        code: "file_too_large",
        details: { path: file, size, maxBytes },
      });
    if (stat.size > maxBytes) throw tooLarge(stat.size);
    const chunks: Uint8Array[] = [];
    let length = 0;
    for (;;) {
      // One byte past the cap tells a file at the cap from one that grew past it.
      const chunk = new Uint8Array(Math.min(Math.max(stat.size - length + 1, 65_536), maxBytes + 1 - length, 1 << 20));
      const bytesRead = await new Promise<number>((resolve, reject) =>
        fs.read(fd, chunk, 0, chunk.length, null, (error, n) => error ? reject(error) : resolve(n))
      );
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      length += bytesRead;
      if (length > maxBytes) throw tooLarge(length);
    }
    return Buffer.concat(chunks, length);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Removes `dir`, a folder made for a program the process door confines
 * (`LauncherRequest.privateDir`), and everything in it, entry by entry in
 * each pinned folder, never following a link at any depth; nothing there is
 * no error. The program may write there, so while it goes a folder in it may
 * be swapped for a link out of it: Node's `fs.rm(dir, { recursive: true })`
 * lists and unlinks by path and follows such a link (a probe's racer in the
 * folder deleted 34 of 200 files outside under Node 22), where this removes
 * only the link. A folder written to again while it goes (`ENOTEMPTY`) is
 * removed again, for about 5 s.
 *
 * Requires `--allow-read` and `--allow-write` for `dir`.
 *
 * @example
 * ```ts
 * import { removeProgramFolder } from "@toolfence/policy";
 * import { mkdtemp } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 *
 * const dir = await mkdtemp(join(tmpdir(), "program-"));
 * await removeProgramFolder(dir);
 * ```
 */
export async function removeProgramFolder(dir: string): Promise<void> {
  // A program's children may outlive it by a moment and change the folder while it goes (a browser's renderers
  // after its main process ended, on a loaded machine): a folder emptied and written to again is not empty at its
  // rmdir, and an entry listed and then removed by the program itself (its lock and temporary files) is gone at its
  // unlink. Such a folder is removed again, for about 5 s, before the failure is given back.
  for (let attempt = 1;; attempt++) {
    try {
      return await removeConfined(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== "ENOTEMPTY" && code !== "ENOENT") || attempt === RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/** How many times {@linkcode removeProgramFolder} tries, 50 ms more apart each time (4.5 s in all). */
const RETRIES = 14;
