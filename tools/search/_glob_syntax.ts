// Glob patterns written out as RE2 expressions, so that matching a path runs
// in time linear in its length. picomatch compiles a glob to a backtracking
// RegExp in which each * is a lazy [^/]*?: a pattern of a few stars (*a*a*a*c)
// takes seconds on one long file name, and a few more take forever, which a
// caller could use to block the event loop. The syntax is the common one:
// * within a segment, ** as a whole segment across segments, ?, [abc] [!a-z]
// [^a-z], {a,b} (nested), {1..10} and {a..e}, and \ to escape. Extended globs
// (@(a|b), !(a), +(a)) and POSIX classes are refused with a reason rather than
// read some other way. Dot files match like any other (dot: true).

/** A glob that cannot be compiled: the reason, for the model. */
export class GlobSyntaxError extends Error {}

const MAX_BRACE_RANGE = 1000;
const MAX_DEPTH = 32;

function literal(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (/^[A-Za-z0-9_]$/.test(ch)) return ch;
  return `\\x{${cp.toString(16).toUpperCase()}}`;
}

class GlobParser {
  readonly chars: string[];
  i = 0;
  constructor(source: string) {
    this.chars = Array.from(source);
  }

  // A sequence, up to the end, or (inside braces) a `,` or `}`.
  sequence(depth: number): string {
    if (depth > MAX_DEPTH) throw new GlobSyntaxError("braces are nested too deeply");
    let out = "";
    for (;;) {
      const ch = this.chars[this.i];
      if (ch === undefined) {
        if (depth > 0) throw new GlobSyntaxError("unclosed {");
        return out;
      }
      if (depth > 0 && (ch === "," || ch === "}")) return out;
      out += this.item(depth);
    }
  }

  atSegmentStart(): boolean {
    return this.i === 0 || this.chars[this.i - 1] === "/";
  }

  item(depth: number): string {
    const ch = this.chars[this.i];
    const next = this.chars[this.i + 1];
    if ("@!+*?".includes(ch) && next === "(") {
      throw new GlobSyntaxError(`extended globs such as ${ch}(…) are not supported; use {a,b} instead`);
    }
    switch (ch) {
      case "\\": {
        const escaped = this.chars[this.i + 1];
        if (escaped === undefined) throw new GlobSyntaxError("it ends with a lone backslash");
        this.i += 2;
        return literal(escaped);
      }
      case "*": {
        if (next === "*") {
          const start = this.atSegmentStart();
          let j = this.i;
          while (this.chars[j] === "*") j++;
          const after = this.chars[j];
          if (start && j - this.i === 2 && (after === "/" || after === undefined)) {
            this.i = j;
            if (after === "/") {
              this.i++;
              // `**/` : any number of whole segments, none included.
              return "(?:[^/]*/)*";
            }
            // A trailing `**`: everything below, and (after a `/`) the folder itself.
            return "";
          }
          this.i = j;
          return "[^/]*";
        }
        this.i++;
        return "[^/]*";
      }
      case "?":
        this.i++;
        return "[^/]";
      case "[":
        return this.characterClass();
      case "{":
        return this.braces(depth);
      default:
        this.i++;
        return literal(ch);
    }
  }

  characterClass(): string {
    const open = this.i;
    this.i++;
    let out = "[";
    if (this.chars[this.i] === "!" || this.chars[this.i] === "^") {
      out += "^";
      this.i++;
    }
    let first = true;
    for (;;) {
      const ch = this.chars[this.i];
      if (ch === undefined) {
        // An unclosed [ is a literal [, as in shells and picomatch.
        this.i = open + 1;
        return literal("[");
      }
      if (ch === "]" && !first) {
        this.i++;
        // A class never matches the separator.
        return out + (out.startsWith("[^") ? "/]" : "]");
      }
      if (ch === "[" && this.chars[this.i + 1] === ":") {
        throw new GlobSyntaxError("POSIX classes such as [[:alpha:]] are not supported; list the characters");
      }
      first = false;
      const low = this.classChar();
      if (low === "/") throw new GlobSyntaxError("a [class] cannot hold /, which only separates folders");
      if (this.chars[this.i] === "-" && this.chars[this.i + 1] !== undefined && this.chars[this.i + 1] !== "]") {
        this.i++;
        const high = this.classChar();
        if (high.codePointAt(0)! < low.codePointAt(0)!) throw new GlobSyntaxError("a range has its ends out of order");
        out += `${literal(low)}-${literal(high)}`;
      } else out += literal(low);
    }
  }

  classChar(): string {
    let ch = this.chars[this.i++];
    if (ch === "\\") {
      ch = this.chars[this.i++];
      if (ch === undefined) throw new GlobSyntaxError("it ends with a lone backslash");
    }
    return ch;
  }

  braces(depth: number): string {
    const open = this.i;
    const range = this.braceRange();
    if (range !== undefined) return range;
    this.i = open + 1;
    const branches = [this.sequence(depth + 1)];
    while (this.chars[this.i] === ",") {
      this.i++;
      branches.push(this.sequence(depth + 1));
    }
    if (this.chars[this.i] !== "}") throw new GlobSyntaxError("unclosed {");
    this.i++;
    // A single branch ({a}) is literal text in shells and picomatch.
    if (branches.length === 1) return literal("{") + branches[0] + literal("}");
    return `(?:${branches.join("|")})`;
  }

  // {1..5}, {a..e}: expanded; undefined when the braces hold something else.
  braceRange(): string | undefined {
    const rest = this.chars.slice(this.i, this.i + 64).join("");
    const m = /^\{(-?\d+)\.\.(-?\d+)\}/.exec(rest) ?? /^\{([A-Za-z])\.\.([A-Za-z])\}/.exec(rest);
    if (!m) return undefined;
    const numeric = /\d/.test(m[1]);
    const from = numeric ? Number(m[1]) : m[1].codePointAt(0)!;
    const to = numeric ? Number(m[2]) : m[2].codePointAt(0)!;
    if (Math.abs(to - from) >= MAX_BRACE_RANGE) {
      throw new GlobSyntaxError(`the range {${m[1]}..${m[2]}} has more than ${MAX_BRACE_RANGE} values`);
    }
    this.i += Array.from(m[0]).length;
    const step = to >= from ? 1 : -1;
    const values: string[] = [];
    for (let v = from; v !== to + step; v += step) {
      const text = numeric ? String(v) : String.fromCodePoint(v);
      values.push(Array.from(text, literal).join(""));
    }
    return `(?:${values.join("|")})`;
  }
}

/**
 * The RE2 expression (anchored at both ends) that matches the same paths as
 * `glob`, relative paths with `/` separators. Throws {@linkcode GlobSyntaxError}.
 */
export function globToRe2(glob: string): string {
  let trimmed = glob;
  while (trimmed.startsWith("./")) trimmed = trimmed.slice(2);
  if (trimmed.endsWith("/") && trimmed.length > 1) trimmed = trimmed.slice(0, -1);
  // Repeated globstars (**/**) mean one.
  trimmed = trimmed.replace(/(^|\/)\*\*(?:\/\*\*)+(?=\/|$)/g, "$1**");
  const parser = new GlobParser(trimmed);
  let body = parser.sequence(0);
  if (parser.i < parser.chars.length) throw new GlobSyntaxError("unmatched }");
  // A trailing `/**` also matches the folder itself, and a trailing `**` everything below it.
  const source = parser.chars.join("");
  if (/(^|\/)\*\*$/.test(source)) {
    body = /^(\*\*\/)*\*\*$/.test(source) ? "(?s:.*)" : body.replace(/\\x\{2F\}$/, "") + "(?:/(?s:.*))?";
  }
  return `^${body}$`;
}
