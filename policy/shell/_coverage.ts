/**
 * The byte-coverage check: every byte of the source must belong to a node the
 * walk understood, or be a blank or a newline outside any command. Line
 * continuations are gone by then: the walk reads the line as bash does, joined
 * (`_continuations.ts`). That is what catches tree-sitter-bash's error
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
