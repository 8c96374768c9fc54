/**
 * The links a glob may match. Bash opens what a pattern matches, so a link
 * inside the workspace that leads out (`link -> ~/.ssh`) is reached by
 * `cat *\/id_rsa` though the pattern's folder lies inside; the path rules judge
 * each such link by where it leads. Without the OS sandbox nothing else would
 * stop the read.
 *
 * @module
 */
import fs from "node:fs";
import path from "node:path";

/** How many folder entries one pattern may make the checker look at; beyond, it asks. */
const MAX_ENTRIES = 10_000;

const GLOB_CHARS = /[*?[]/;

/**
 * A glob segment as a matcher of names, wider than bash's where that is
 * simpler: a bracket expression or a backslash matches any name. A glob never
 * matches a name that starts with `.` (bash without dotglob; the patterns that
 * start with `.` or `[` ask before they get here).
 */
function segmentMatcher(segment: string): (name: string) => boolean {
  if (!GLOB_CHARS.test(segment)) return (name) => name === segment;
  if (/[[\\]/.test(segment)) return (name) => !name.startsWith(".");
  const source = segment.replace(/[.+^${}()|\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  const regex = new RegExp(`^${source}$`, "s");
  return (name) => !name.startsWith(".") && regex.test(name);
}

/**
 * The links among what `segments` (a glob's parts after its static folder)
 * may match under `base`, not descended into: the caller judges where each
 * leads. `undefined` when matching would look at more than
 * {@linkcode MAX_ENTRIES} entries.
 */
export function globLinks(base: string, segments: readonly string[]): string[] | undefined {
  const links: string[] = [];
  let folders = [base];
  let seen = 0;
  for (const [index, segment] of segments.entries()) {
    const matches = segmentMatcher(segment);
    const next: string[] = [];
    for (const folder of folders) {
      let names: string[];
      try {
        names = GLOB_CHARS.test(segment) ? fs.readdirSync(folder) : [segment];
      } catch {
        continue; // A folder bash cannot read matches nothing.
      }
      seen += names.length;
      if (seen > MAX_ENTRIES) return undefined;
      for (const name of names.filter(matches)) {
        const entry = path.join(folder, name);
        let stat: fs.Stats;
        try {
          stat = fs.lstatSync(entry);
        } catch {
          continue;
        }
        if (stat.isSymbolicLink()) links.push(entry);
        else if (stat.isDirectory() && index < segments.length - 1) next.push(entry);
      }
    }
    folders = next;
  }
  return links;
}
