// A fingerprint of a whole tree (every entry's path, type, mode and content or
// link text), to prove byte for byte that something changed nothing.

import { createHash } from "node:crypto";
import fsp from "node:fs/promises";
import path from "node:path";

/** Path -> `type mode sha256` for every entry below `root` (FIFOs and sockets by type only). */
export async function fingerprint(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string) => {
    for (const name of (await fsp.readdir(dir)).sort()) {
      const full = path.join(dir, name);
      const rel = path.relative(root, full);
      const stat = await fsp.lstat(full);
      const mode = (stat.mode & 0o7777).toString(8);
      if (stat.isSymbolicLink()) out[rel] = `link ${mode} ${await fsp.readlink(full)}`;
      else if (stat.isDirectory()) {
        out[rel] = `dir ${mode}`;
        await walk(full);
      } else if (stat.isFile()) {
        out[rel] = `file ${mode} ${createHash("sha256").update(await fsp.readFile(full)).digest("hex")}`;
      } else out[rel] = `special ${mode}`;
    }
  };
  await walk(root);
  return out;
}
