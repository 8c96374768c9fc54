/**
 * Matching a wildcard pattern (`*`, `?`, `[...]`) against a text in at most
 * (pattern x text) steps. A regular expression with a `.*` for each `*`
 * backtracks through every way to split the text, exponentially in the
 * number of `*`: a shell glob `*a*a*a*a*ab` beside a name of 200 `a`s took
 * 65 s, a command rule `*git*push*--force*` against a line of 21,000
 * characters 95 s, each on the server's one thread. Here only the last `*`
 * is ever gone back to, which finds a match whenever there is one.
 *
 * @module
 */

/** One item of a pattern: any run of items, any one item, one of a set, or itself (a code point or a byte). */
export type WildcardItem = typeof ANY_RUN | ((item: number) => boolean) | number;

/** The item `*` is read as. */
export const ANY_RUN: -1 = -1;

const anyOne = () => true;

/**
 * A pattern's items, read as code points (or as the units given, such as its UTF-8 bytes): `*` any run, `?` any one,
 * and, when `classes` is set, `[...]` one of a set (`[!...]` or `[^...]` none of it; `a-z` a range; an unclosed `[`
 * itself). Not public API.
 */
export function wildcardPattern(pattern: string | readonly number[], classes: boolean): WildcardItem[] {
  const points = typeof pattern === "string" ? codePoints(pattern) : pattern;
  const items: WildcardItem[] = [];
  for (let i = 0; i < points.length; i++) {
    const point = points[i];
    if (point === 0x2a) items.push(ANY_RUN);
    else if (point === 0x3f) items.push(anyOne);
    else if (point === 0x5b && classes) {
      const end = points.indexOf(0x5d, i + 2);
      if (end < 0) {
        items.push(point);
        continue;
      }
      let body = points.slice(i + 1, end);
      const negated = body[0] === 0x21 || body[0] === 0x5e;
      if (negated) body = body.slice(1);
      const ranges: [number, number][] = [];
      for (let at = 0; at < body.length; at++) {
        if (body[at + 1] === 0x2d && at + 2 < body.length) {
          ranges.push([body[at], body[at + 2]]);
          at += 2;
        } else ranges.push([body[at], body[at]]);
      }
      items.push((item) => ranges.some(([low, high]) => item >= low && item <= high) !== negated);
      i = end;
    } else items.push(point);
  }
  return items;
}

/** Whether `text` (code points or bytes) matches `pattern`, whole. Not public API. */
export function wildcardMatches(pattern: readonly WildcardItem[], text: readonly number[]): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    const item = pattern[p];
    if (p < pattern.length && item === ANY_RUN) {
      star = p++;
      resume = t;
    } else if (p < pattern.length && (typeof item === "function" ? item(text[t]) : item === text[t])) {
      p++;
      t++;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === ANY_RUN) p++;
  return p === pattern.length;
}

/** The code points of a text, for {@linkcode wildcardMatches}. Not public API. */
export function codePoints(text: string): number[] {
  return Array.from(text, (character) => character.codePointAt(0)!);
}
