/**
 * In-process locks on real paths, for the check-then-write step of a
 * read-modify-write: two edits of one file in this process can no longer both
 * pass their "is the file still what I read?" check and then overwrite each
 * other. Other processes are not covered (Node offers no portable file lock).
 *
 * @module
 */

const tails = new Map<string, Promise<void>>();

async function acquire(path: string): Promise<() => void> {
  const previous = tails.get(path);
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = (previous ?? Promise.resolve()).then(() => mine);
  tails.set(path, tail);
  await previous;
  return () => {
    release();
    if (tails.get(path) === tail) tails.delete(path);
  };
}

/**
 * Runs `fn` while holding the locks of `paths` (taken in sorted order, so two
 * callers with overlapping sets cannot deadlock); callers on the same path run
 * one after another, in the order they asked.
 *
 * @example
 * ```ts
 * import { withPathLocks } from "@toolfence/internal";
 * const result = await withPathLocks(["/w/a.txt"], async () => {
 *   // check the file's hash, then write it
 *   return "written";
 * });
 * console.log(result);
 * ```
 */
export async function withPathLocks<T>(paths: readonly string[], fn: () => Promise<T>): Promise<T> {
  const releases: (() => void)[] = [];
  try {
    for (const path of [...new Set(paths)].sort()) releases.push(await acquire(path));
    return await fn();
  } finally {
    for (const release of releases.reverse()) release();
  }
}
