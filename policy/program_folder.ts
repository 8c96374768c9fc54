// The removal of a folder a sandboxed program was given to write in (the browser's profile and downloads).

import { removeConfined } from "@toolfence/internal";

/**
 * Removes `dir`, a folder made for a program the process door confines
 * (`LauncherRequest.privateDir`), and everything in it, entry by entry in
 * each pinned folder, never following a link at any depth; nothing there is
 * no error. The program may write there, so while it goes a folder in it may
 * be swapped for a link out of it: Node's `fs.rm(dir, { recursive: true })`
 * lists and unlinks by path and follows such a link (a probe's racer in the
 * folder deleted 34 of 200 files outside under Node 22), where this removes
 * only the link.
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
  await removeConfined(dir);
}
