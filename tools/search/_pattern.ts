// One pattern language, two engines. A grep pattern is parsed once and
// written out in the common syntax of ripgrep's Rust regex crate and RE2 (the
// two differ only in how an ASCII word boundary is spelled), with every
// construct given one meaning: \w \d \b are ASCII, \s is JavaScript's
// whitespace, `.` stops at line breaks. ripgrep finds candidate files; lines
// are matched in JavaScript by RE2JS. Both are automata that run in time
// linear in the text, so no pattern can make a search take polynomial or
// exponential time (a backtracking engine such as RegExp takes cubic time for
// a*a*c on a long line of a's, and would block the event loop for good).
// Constructs only one side has, or that differ silently between them
// (lookaround, backreferences, inline flags, POSIX classes, a `[` inside a
// class), are refused with a reason. So are nested repetitions such as
// (a+)+: not slow here, but refused since before, and rarely meant.

import { RE2JS } from "re2js";
import { ToolError } from "@toolfence/core";

/** Matching within one line of text (no line terminators in the input). */
export interface LineMatcher {
  /** Whether the line holds a match. */
  test(line: string): boolean;
  /**
   * A UTF-16 index in the line at the first match, to show the line around
   * it, or -1 without a match: where the first match starts, or where the
   * earliest-ending match ends. RE2JS finds a match's start with its NFA,
   * which is linear but 10 to 100 times slower than the DFA that `test`
   * runs; a long line is located by bisecting with `test` instead.
   */
  locate(line: string): number;
}

// Lines up to this long are located with the NFA; beyond, by bisection.
const NFA_LOCATE_CHARS = 1024;

/** A pattern compiled for both engines. */
export interface CompiledPattern {
  /** Matches within one line, in linear time. */
  line: LineMatcher;
  /** Finds candidate files in a whole text: never misses a line `line` would match. Linear time. */
  text: { test(text: string): boolean };
  /** The same pattern in ripgrep's syntax, case folding included. */
  rust: string;
  /** The same pattern in RE2's syntax, as `line` runs it. */
  re2: string;
}

/** Options of {@linkcode compilePattern}. */
export interface PatternOptions {
  /** A regular expression (default) or a fixed string. */
  regex: boolean;
  /** Whether case matters. */
  caseSensitive: boolean;
}

const RUST_WHITESPACE =
  "\\t\\n\\x0B\\x0C\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";

// The complements of those sets as ranges, for use inside a class (RE2 has no nested classes). Surrogates are
// left out: Rust's classes hold scalar values only, and decoded text holds no lone surrogates.
const NOT_DIGIT = "\\x{0}-\\x{2F}\\x{3A}-\\x{D7FF}\\x{E000}-\\x{10FFFF}";
const NOT_WORD = "\\x{0}-\\x{2F}\\x{3A}-\\x{40}\\x{5B}-\\x{5E}\\x{60}\\x{7B}-\\x{D7FF}\\x{E000}-\\x{10FFFF}";
const NOT_WHITESPACE =
  "\\x{0}-\\x{8}\\x{E}-\\x{1F}\\x{21}-\\x{9F}\\x{A1}-\\x{167F}\\x{1681}-\\x{1FFF}\\x{200B}-\\x{2027}" +
  "\\x{202A}-\\x{202E}\\x{2030}-\\x{205E}\\x{2060}-\\x{2FFF}\\x{3001}-\\x{D7FF}\\x{E000}-\\x{FEFE}\\x{FF00}-\\x{10FFFF}";

// Class escapes: [outside a class, inside a class].
const CLASS_ESCAPES: Record<string, [string, string]> = {
  d: ["[0-9]", "0-9"],
  D: ["[^0-9]", NOT_DIGIT],
  w: ["[0-9A-Za-z_]", "0-9A-Za-z_"],
  W: ["[^0-9A-Za-z_]", NOT_WORD],
  // JavaScript's \s is exactly RUST_WHITESPACE.
  s: [`[${RUST_WHITESPACE}]`, RUST_WHITESPACE],
  S: [`[^${RUST_WHITESPACE}]`, NOT_WHITESPACE],
};

const MAX_REPEAT = 1000;
const MAX_GROUP_DEPTH = 100;

class PatternError extends Error {
  constructor(message: string, readonly at: number) {
    super(message);
  }
}

interface Piece {
  rust: string;
}

/** What a parsed sequence looks like, for the quantifier rules. */
interface Parsed extends Piece {
  /** Contains a repetition with no small upper bound. */
  repeats: boolean;
  /** Contains an alternation whose branches may match the same text, like (a|ab). */
  ambiguous?: boolean;
  /** The exact text it always matches, when it is plain text. */
  text?: string;
  /** The character every match starts with, when known. */
  first?: string;
}

// Whether two branches of an alternation might match at the same place: then
// repeating the alternation lets a backtracking engine try exponentially many
// ways. Unknown counts as overlapping.
function overlap(a: Parsed, b: Parsed): boolean {
  if (a.text !== undefined && b.text !== undefined) return a.text.startsWith(b.text) || b.text.startsWith(a.text);
  return a.first === undefined || b.first === undefined || a.first === b.first;
}

function hex(cp: number): string {
  return cp.toString(16).toUpperCase();
}

function literal(cp: number): Piece {
  if (cp === 10 || cp === 13) {
    throw new PatternError("patterns match within one line and cannot contain line breaks", -1);
  }
  const ch = String.fromCodePoint(cp);
  if (/^[A-Za-z0-9_ ]$/.test(ch)) return { rust: ch };
  return { rust: `\\x{${hex(cp)}}` };
}

class Parser {
  readonly cps: number[];
  i = 0;
  constructor(readonly source: string, readonly caseSensitive: boolean) {
    this.cps = Array.from(source, (c) => c.codePointAt(0)!);
  }

  // A single literal character as parsed.
  char(cp: number): Parsed {
    const ch = String.fromCodePoint(cp);
    const folded = this.caseSensitive ? ch : ch.toLowerCase();
    return { ...literal(cp), repeats: false, text: folded, first: folded };
  }

  fail(message: string, at = this.i): never {
    throw new PatternError(message, at);
  }

  peek(offset = 0): string | undefined {
    const cp = this.cps[this.i + offset];
    return cp === undefined ? undefined : String.fromCodePoint(cp);
  }

  alternation(depth: number): Parsed {
    const branches: Parsed[] = [this.sequence(depth)];
    while (this.peek() === "|") {
      this.i++;
      branches.push(this.sequence(depth));
    }
    if (branches.length === 1) return branches[0];
    const ambiguous = branches.some((b, i) => b.ambiguous || branches.slice(0, i).some((a) => overlap(a, b)));
    return {
      rust: branches.map((b) => b.rust).join("|"),
      repeats: branches.some((b) => b.repeats),
      ambiguous,
    };
  }

  sequence(depth: number): Parsed {
    const out: Parsed = { rust: "", repeats: false, text: "" };
    for (let index = 0;; index++) {
      const ch = this.peek();
      if (ch === undefined || ch === "|" || (ch === ")" && depth > 0)) return out;
      const start = this.i;
      const atom = this.atom(depth);
      const quantified = this.quantifier(atom, start);
      out.rust += quantified.rust;
      out.repeats ||= quantified.repeats;
      out.ambiguous ||= quantified.ambiguous;
      out.text = out.text !== undefined && quantified.text !== undefined ? out.text + quantified.text : undefined;
      if (index === 0) out.first = quantified.first;
    }
  }

  // An atom, or an assertion (which may not be quantified).
  atom(depth: number): Parsed & { assertion?: boolean } {
    const ch = this.peek()!;
    this.i++;
    switch (ch) {
      case ".":
        return { rust: "[^\\n\\r\\x{2028}\\x{2029}]", repeats: false };
      case "^":
      case "$":
        return { rust: ch, repeats: false, assertion: true };
      case "(":
        return this.group(depth);
      case ")":
        return this.fail("unmatched )", this.i - 1);
      case "[":
        return { ...this.characterClass(), repeats: false };
      case "*":
      case "+":
      case "?":
        return this.fail(`${ch} has nothing to repeat; escape it as \\${ch} to match it literally`, this.i - 1);
      case "{":
        return this.fail("a literal { must be escaped as \\{", this.i - 1);
      case "}":
        return this.fail("a literal } must be escaped as \\}", this.i - 1);
      case "]":
        return this.fail("a literal ] must be escaped as \\]", this.i - 1);
      case "\\":
        return this.escape(false);
      default:
        return this.char(this.cps[this.i - 1]);
    }
  }

  group(depth: number): Parsed {
    const open = this.i - 1;
    // The parser recurses per group; a bound keeps a hostile pattern from exhausting the stack.
    if (depth >= MAX_GROUP_DEPTH) this.fail(`groups nest more than ${MAX_GROUP_DEPTH} deep`, open);
    if (this.peek() === "?") {
      const next = this.peek(1);
      const after = this.peek(2);
      if (next === ":") this.i += 2;
      else if (next === "=" || next === "!" || (next === "<" && (after === "=" || after === "!"))) {
        this.fail("lookahead and lookbehind are not supported", open);
      } else if (next === "<" || (next === "P" && after === "<")) {
        this.i += next === "P" ? 3 : 2;
        const name = this.source.slice(this.offsetOf(this.i)).match(/^[A-Za-z_][A-Za-z0-9_]*>/);
        if (!name) this.fail("invalid group name", open);
        this.i += name[0].length;
      } else this.fail("inline flags such as (?i) are not supported; use case_sensitive instead", open);
    }
    const inner = this.alternation(depth + 1);
    if (this.peek() !== ")") this.fail("unclosed (", open);
    this.i++;
    return { ...inner, rust: `(?:${inner.rust})` };
  }

  // Index into the UTF-16 source of code point index `cp`.
  offsetOf(cp: number): number {
    let offset = 0;
    for (let k = 0; k < cp; k++) offset += this.cps[k] > 0xffff ? 2 : 1;
    return offset;
  }

  quantifier(atom: Parsed & { assertion?: boolean }, start: number): Parsed {
    const ch = this.peek();
    let quantifier: string;
    let unbounded: boolean;
    if (ch === "*" || ch === "+" || ch === "?") {
      this.i++;
      quantifier = ch;
      unbounded = ch !== "?";
    } else if (ch === "{") {
      const text = this.source.slice(this.offsetOf(this.i));
      const m = text.match(/^\{(\d+)(,(\d*))?\}/);
      if (!m) this.fail("a literal { must be escaped as \\{");
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) {
        this.fail(`repetition counts above ${MAX_REPEAT} are not supported`);
      }
      if (max < min) this.fail(`the repetition {${m[1]}${m[2]}} has its numbers out of order`);
      this.i += m[0].length;
      quantifier = m[0];
      unbounded = max === Infinity || max > 1;
    } else return atom;
    if (atom.assertion) this.fail("an anchor or boundary cannot be repeated", start);
    if (unbounded && atom.repeats) {
      this.fail("nested repetition such as (a+)+ can take exponential time; simplify the pattern", start);
    }
    if (unbounded && atom.ambiguous) {
      this.fail(
        "repeating alternatives that can match the same text, such as (a|ab)*, can take exponential time; " +
          "make the alternatives start differently",
        start,
      );
    }
    if (this.peek() === "?") {
      this.i++;
      quantifier += "?";
    } else if (this.peek() === "+") this.fail("possessive quantifiers such as a++ are not supported");
    const next = this.peek();
    if (next === "*" || next === "+" || next === "?" || next === "{") this.fail("a repetition cannot be repeated");
    return { rust: atom.rust + quantifier, repeats: atom.repeats || unbounded, ambiguous: atom.ambiguous };
  }

  // After a backslash. Returns the escape's meaning outside a class, or (with
  // `inClass`) inside one; a single code point has `cp` set.
  escape(inClass: boolean): Parsed & { cp?: number; assertion?: boolean } {
    const at = this.i - 1;
    const ch = this.peek();
    if (ch === undefined) this.fail("the pattern ends with a lone backslash", at);
    this.i++;
    if (ch in CLASS_ESCAPES) {
      const [rustOut, rustIn] = CLASS_ESCAPES[ch];
      return { rust: inClass ? rustIn : rustOut, repeats: false };
    }
    const single = (cp: number) => ({ ...this.char(cp), cp });
    switch (ch) {
      case "b":
      case "B":
        if (inClass) this.fail("\\b inside a class is not supported", at);
        return { rust: `(?-u:\\${ch})`, repeats: false, assertion: true };
      case "t":
        return single(9);
      case "f":
        return single(12);
      case "v":
        return single(11);
      case "n":
      case "r":
        return this.fail("patterns match within one line and cannot contain line breaks", at);
      case "0":
        if (/[0-9]/.test(this.peek() ?? "")) this.fail("octal escapes are not supported", at);
        return single(0);
      case "x": {
        const m = this.source.slice(this.offsetOf(this.i)).match(/^[0-9A-Fa-f]{2}/);
        if (!m) this.fail("\\x needs two hex digits", at);
        this.i += 2;
        return single(parseInt(m[0], 16));
      }
      case "u": {
        const rest = this.source.slice(this.offsetOf(this.i));
        const m = rest.match(/^\{([0-9A-Fa-f]{1,6})\}/) ?? rest.match(/^([0-9A-Fa-f]{4})/);
        if (!m) this.fail("\\u needs four hex digits or {hex}", at);
        const cp = parseInt(m[1], 16);
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) this.fail("\\u must name a Unicode scalar value", at);
        this.i += m[0].length;
        return single(cp);
      }
      case "p":
      case "P": {
        const m = this.source.slice(this.offsetOf(this.i)).match(/^\{[A-Za-z0-9_=]+\}/);
        if (!m) this.fail(`\\${ch} needs a property in braces, e.g. \\${ch}{L}`, at);
        this.i += m[0].length;
        return { rust: `\\${ch}${m[0]}`, repeats: false };
      }
      case "k":
        return this.fail("backreferences are not supported", at);
      case "c":
        return this.fail("control escapes (\\c) are not supported", at);
    }
    if (/[1-9]/.test(ch)) this.fail("backreferences are not supported", at);
    if (/[!-\/:-@\[-`{-~]/.test(ch)) return single(ch.codePointAt(0)!);
    return this.fail(`unknown escape \\${ch}`, at);
  }

  characterClass(): Piece {
    const open = this.i - 1;
    let rust = "[";
    if (this.peek() === "^") {
      this.i++;
      rust += "^";
    }
    if (this.peek() === "]") this.fail("a ] right after [ must be escaped as \\]", this.i);
    for (;;) {
      const ch = this.peek();
      if (ch === undefined) this.fail("unclosed [", open);
      if (ch === "]") {
        this.i++;
        return { rust: rust + "]" };
      }
      const first = this.classAtom();
      if (this.peek() === "-" && this.peek(1) !== "]" && this.peek(1) !== undefined) {
        this.i++;
        const second = this.classAtom();
        if (first.cp === undefined || second.cp === undefined) this.fail("a range needs a character at each end");
        if (second.cp < first.cp) this.fail("a range has its ends out of order");
        rust += `${first.rust}-${second.rust}`;
      } else {
        rust += first.rust;
      }
    }
  }

  classAtom(): Piece & { cp?: number } {
    const ch = this.peek()!;
    this.i++;
    if (ch === "\\") return this.escape(true);
    if (ch === "[") {
      this.fail("a [ inside a class must be escaped as \\[ (POSIX classes like [:alpha:] are not supported)");
    }
    return { ...literal(this.cps[this.i - 1]), cp: this.cps[this.i - 1] };
  }
}

function invalid(pattern: string, reason: string): ToolError {
  return new ToolError(`Invalid pattern ${JSON.stringify(pattern)}: ${reason}`, {
    code: "invalid_pattern",
    kind: "semantic",
    recoveryHint: "Fix the pattern, or pass regex: false to search for the text literally.",
    details: { pattern, reason },
  });
}

/**
 * Compiles a grep pattern for both engines, or throws `invalid_pattern` with
 * the reason and position.
 */
export function compilePattern(pattern: string, options: PatternOptions): CompiledPattern {
  let piece: Piece;
  try {
    if (options.regex) {
      const parser = new Parser(pattern, options.caseSensitive);
      piece = parser.alternation(0);
      if (parser.i < parser.cps.length) parser.fail("unmatched )");
    } else {
      const pieces = Array.from(pattern, (c) => literal(c.codePointAt(0)!));
      piece = { rust: pieces.map((p) => p.rust).join("") };
    }
  } catch (error) {
    if (!(error instanceof PatternError)) throw error;
    const where = error.at >= 0 ? ` (at character ${error.at + 1})` : "";
    throw invalid(pattern, error.message + where);
  }
  const fold = options.caseSensitive ? "" : "(?i)";
  // Only the word-boundary escape produces "(?-u:": a literal ( is always written as \x{28}.
  const re2 = piece.rust.replaceAll("(?-u:\\b)", "\\b").replaceAll("(?-u:\\B)", "\\B");
  try {
    const line = RE2JS.compile(fold + re2);
    // Over a whole text, ^ and $ match at line starts and ends, and a line may end with \r (CRLF); the
    // only $ in the pattern is the assertion (a literal $ is written as \x{24}).
    const text = RE2JS.compile("(?m)" + fold + re2.replaceAll("$", "\\r?$"));
    return {
      line: {
        test: (input) => line.test(input),
        locate(input) {
          if (!line.test(input)) return -1;
          // A cut line ends where $ and \b would not hold in the whole line; such patterns use the NFA.
          if (input.length <= NFA_LOCATE_CHARS || /\$|\\[bB]/.test(re2)) {
            const found = line.matcher(input);
            return found.find() ? found.start() : -1;
          }
          // The shortest prefix that holds a match ends where the earliest-ending match does.
          let low = 0;
          let high = input.length;
          while (low < high) {
            const mid = (low + high) >>> 1;
            if (line.test(input.slice(0, mid))) high = mid;
            else low = mid + 1;
          }
          return Math.max(0, low - 1);
        },
      },
      text: { test: (input) => text.test(input) },
      rust: fold + piece.rust,
      re2: fold + re2,
    };
  } catch (error) {
    const message = (error as Error).message.replace(/^error parsing regexp: /, "");
    throw invalid(pattern, `not supported (${message})`);
  }
}
