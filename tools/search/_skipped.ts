// What a search could not look at, said in its result: a few examples with
// their reasons and the total, so that a miss is never silent while the
// result stays small (a path past the system's limit can be tens of
// kilobytes long).

import type { Skipped } from "./_walk.ts";

const SHOWN = 10;
const PATH_CHARS = 160;

function shortPath(path: string): string {
  if (path.length <= PATH_CHARS) return path;
  const half = PATH_CHARS / 2;
  return `${path.slice(0, half)}…(${path.length - PATH_CHARS} characters)…${path.slice(-half)}`;
}

/** Collects what was skipped, and says it in a result. */
export class SkipList {
  readonly #shown: Skipped[] = [];
  #count = 0;

  /** Records one skipped path. */
  add(skip: Skipped): void {
    this.#count++;
    if (this.#shown.length < SHOWN) this.#shown.push({ path: shortPath(skip.path || "."), reason: skip.reason });
  }

  /** How many were skipped. */
  get count(): number {
    return this.#count;
  }

  /** The fields a result gets: `skipped` (examples) and `skipped_count`, or nothing. */
  fields(): { skipped?: Skipped[]; skipped_count?: number } {
    return this.#count === 0 ? {} : { skipped: this.#shown, skipped_count: this.#count };
  }

  /** A sentence for the note, or undefined. */
  sentence(): string | undefined {
    if (this.#count === 0) return undefined;
    return `${this.#count} path${this.#count === 1 ? " was" : "s were"} not searched (see skipped for why), so ` +
      "matches there are not in this result.";
  }
}
