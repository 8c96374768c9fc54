// The bubblewrap mounts that hide the policy's denied paths inside a sandbox:
// every existing entry of the workspace matching a deny glob is covered, a
// file by an empty read-only file, a folder by an empty read-only tmpfs.
import fsp from "node:fs/promises";
import { ToolError } from "@toolfence/core";
import { pathGlobMatcher } from "./path_globs.ts";

// A workspace with more entries than this cannot be walked before each
// command; the command is refused rather than run with a secret in view.
const MAX_ENTRIES = 200_000;

/**
 * The bwrap arguments masking every existing entry under `root` that the
 * globs deny (matched as {@linkcode pathGlobMatcher} does, letter case
 * ignored). Not public API.
 */
export async function hiddenMountArgs(root: string, globs: readonly string[]): Promise<string[]> {
  const relative = globs.filter((glob) => !glob.startsWith("/"));
  const absolute = globs.filter((glob) => glob.startsWith("/"));
  if (relative.length === 0 && absolute.length === 0) return [];
  const matchRel = pathGlobMatcher(relative);
  const matchAbs = pathGlobMatcher(absolute);
  const args: string[] = [];
  let seen = 0;
  const queue: { abs: string; rel: string }[] = [{ abs: root, rel: "" }];
  while (queue.length > 0) {
    const dir = queue.shift()!;
    let entries;
    try {
      entries = await fsp.readdir(dir.abs, { withFileTypes: true });
    } catch {
      continue; // Unreadable for us is unreadable inside too.
    }
    for (const entry of entries) {
      if (++seen > MAX_ENTRIES) {
        throw new ToolError(
          `The workspace has more than ${MAX_ENTRIES} entries, too many to hide the policy's denied paths ` +
            "from the sandbox before the command runs",
          { code: "sandbox_unavailable", kind: "policy", recoverable: false, details: { root } },
        );
      }
      const rel = dir.rel ? `${dir.rel}/${entry.name}` : entry.name;
      const abs = `${dir.abs}/${entry.name}`;
      if (matchRel(rel) || matchAbs(abs)) {
        if (entry.isDirectory()) args.push("--tmpfs", abs, "--remount-ro", abs);
        else if (entry.isFile()) args.push("--ro-bind", "/dev/null", abs);
        else if (entry.isSymbolicLink()) {
          // A link is masked where it leads, when that lies in the workspace.
          try {
            const target = await fsp.realpath(abs);
            const stat = await fsp.stat(target);
            if (target.startsWith(`${root}/`)) {
              args.push(
                ...(stat.isDirectory()
                  ? ["--tmpfs", target, "--remount-ro", target]
                  : ["--ro-bind", "/dev/null", target]),
              );
            }
          } catch {
            // Dangling: nothing to see.
          }
        }
        continue;
      }
      if (entry.isDirectory()) queue.push({ abs, rel });
    }
  }
  return args;
}
