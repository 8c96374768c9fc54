/**
 * The byte-coverage check: every byte of the source must belong to a node the
 * walk understood, or be a blank, a line continuation that separates words, or
 * a newline outside any command. That is what catches tree-sitter-bash's error
 * recovery and misparses, where the tree silently drops bytes, puts words in
 * the wrong place, or lets a newline join two commands.
 *
 * @module
 */
import { quoteSource } from "./_literals.ts";

/** What the walk knows when it checks coverage. */
export interface CoverageInput {
  /** The command line. */
  source: string;
  /** Byte ranges the walk accounted for, in any order. */
  covered: readonly [number, number][];
  /** Where the first statement starts (`Infinity` when there is none). */
  firstStatement: number;
  /** Where the last statement ends (-1 when there is none). */
  lastStatement: number;
  /** Where here-document bodies start: the newline before one joins nothing. */
  heredocBodyStarts: ReadonlySet<number>;
}

/** What the coverage check found. */
export interface CoverageResult {
  /** Set when the tree does not account for the source: the line is not understood. */
  notUnderstood?: string;
  /** Reasons to ask that do not make the line "not understood". */
  problems: string[];
}

/**
 * Whether a character next to a line continuation glues it to the word on its
 * other side (anything that does not end a word for bash).
 */
export function joinsWord(char: string | undefined): boolean {
  return char !== undefined && !/[\s;&|()<>]/.test(char);
}

/**
 * Whether the character before a line continuation at `start` glues it to a
 * word: a word character, or an operator character escaped by a backslash
 * (`\|\⏎-` is the one word `|-`).
 */
export function joinsWordBefore(source: string, start: number): boolean {
  if (joinsWord(source[start - 1])) return true;
  let backslashes = 0;
  while (source[start - 2 - backslashes] === "\\") backslashes++;
  return start >= 1 && backslashes % 2 === 1;
}

/** Where a run of line continuations starting at `start` ends. */
export function continuationEnd(source: string, start: number): number {
  let end = start;
  while (source[end] === "\\" && source[end + 1] === "\n") end += 2;
  return end;
}

/** The reason for a continuation that bash removes inside a word, which the parser reads as a separator. */
export function continuationJoinsReason(source: string, start: number, end: number): string {
  return `the line continuation in ${
    quoteSource(source.slice(Math.max(0, start - 10), end + 10))
  } joins two words into one for bash, which the parser reads apart`;
}

/** Checks that every byte of the source belongs to a node the walk understood. */
export function checkCoverage(input: CoverageInput): CoverageResult {
  const { source, firstStatement, lastStatement, heredocBodyStarts } = input;
  const ranges = [...input.covered].sort((a, b) => a[0] - b[0]);
  let position = 0;
  const gaps: [number, number][] = [];
  for (const [start, end] of ranges) {
    if (start > position) gaps.push([position, start]);
    position = Math.max(position, end);
  }
  if (position < source.length) gaps.push([position, source.length]);
  let joinedByNewline = false;
  for (const [start, end] of gaps) {
    for (let i = start; i < end; i++) {
      const char = source[i];
      if (char === " " || char === "\t") continue;
      if (char === "\\" && source[i + 1] === "\n" && i + 1 < end) {
        // bash removes a line continuation before it splits words: `tr\⏎ap`
        // is `trap`, while the parser reads two words. Only a continuation
        // with a blank or an operator on one side separates words.
        const after = continuationEnd(source, i);
        if (joinsWordBefore(source, i) && joinsWord(source[after])) {
          return { notUnderstood: continuationJoinsReason(source, i, after), problems: [] };
        }
        i = after - 1;
        continue;
      }
      if (char === "\n") {
        // Newlines before the first or after the last command join nothing.
        if (i < firstStatement || i >= lastStatement) continue;
        const rest = source.slice(i + 1, end);
        const beforeHeredoc = /^[ \t\n]*$/.test(rest) && heredocBodyStarts.has(end);
        if (!beforeHeredoc) joinedByNewline = true;
        continue;
      }
      return {
        notUnderstood: `the parser did not account for ${
          quoteSource(source.slice(i, Math.min(end, i + 20)))
        } at offset ${i}`,
        problems: [],
      };
    }
  }
  return {
    problems: joinedByNewline ? ["a newline joins commands; only ; && || | ( ) may join commands"] : [],
  };
}
