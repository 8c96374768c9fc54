/**
 * Reading literal text as bash does: quote removal for unquoted, double-quoted
 * and here-document text, `$'...'` decoding, here-document delimiters, and the
 * expansion syntax bash would see in text the parser left as a literal.
 *
 * @module
 */

import { textPrefix } from "@toolfence/core";

/** Reasons quote at most this many characters of the source. */
const QUOTE_LIMIT = 60;

/** Quotes a piece of source for a human-readable reason. */
export function quoteSource(text: string): string {
  const oneLine = text.replaceAll("\n", "\\n");
  const short = oneLine.length > QUOTE_LIMIT ? `${textPrefix(oneLine, QUOTE_LIMIT - 1)}…` : oneLine;
  return `\`${short}\``;
}
/** What is known about a word, or a part of one, before the command runs. */
export interface WordParts {
  /** The text after quote removal, when it is static. */
  value?: string;
  /** Static text known at the start of the word, before any run-time part. */
  prefix: string;
  /** Why the value is only known when the command runs. */
  dynamic?: string;
  /** An unquoted expansion may split the word into several words. */
  splits: boolean;
  /**
   * Bash matches the part against file names (pathname expansion), reading
   * folders: an unquoted glob written in it, or in a word of an unquoted
   * `${...}` (`${x:-/srv/*}`). The value of an expansion is not counted.
   */
  globs?: boolean;
  /**
   * The unquoted `[` and `]` of the part, in order: a bracket expression may
   * open in one node of a word and close in another (`[!a]*` comes as `[`,
   * `!a]`, `*`), so only the joined word tells whether it is a pattern.
   */
  brackets?: string;
}

/** The empty string, `""`. */
export const STATIC_EMPTY: WordParts = { value: "", prefix: "", splits: false };

/** Joins the parts of a concatenated word. */
export function joinParts(parts: WordParts[]): WordParts {
  let value: string | undefined = "";
  let prefix = "";
  let prefixOpen = true;
  let dynamic: string | undefined;
  let splits = false;
  let globs = false;
  let brackets = "";
  for (const part of parts) {
    brackets += part.brackets ?? "";
    if (prefixOpen) {
      prefix += part.value ?? part.prefix;
      if (part.value === undefined) prefixOpen = false;
    }
    if (part.value === undefined) {
      value = undefined;
      dynamic ??= part.dynamic;
    } else if (value !== undefined) {
      value += part.value;
    }
    splits ||= part.splits;
    globs ||= part.globs === true;
  }
  // A bracket expression split across parts makes the word a pattern.
  const open = brackets.indexOf("[");
  if (open >= 0 && brackets.includes("]", open + 1)) {
    // The static text known at the start ends where the pattern may begin.
    const at = prefix.indexOf("[");
    return {
      prefix: at < 0 ? prefix : prefix.slice(0, at),
      dynamic: dynamic ?? `${quoteSource(value ?? prefix)} uses a glob pattern`,
      splits,
      globs: true,
      brackets,
    };
  }
  return { value, prefix, dynamic, splits, brackets, ...(globs ? { globs } : {}) };
}

const EXPANSION_START = /[A-Za-z0-9_({[@*#?$!\-'"]/;

/**
 * Reads unquoted or double-quoted literal text the way bash does; reports
 * expansion syntax the parser did not turn into nodes, since text it treats as
 * literal but bash expands is exactly where a command could hide.
 */
export function readLiteral(
  text: string,
  mode: "unquoted" | "double" | "heredoc" | "pattern",
): { value: string; unrecognized?: string; glob?: string; globs?: boolean; brackets: string } {
  let value = "";
  let glob: string | undefined;
  // An unquoted `*`, `?` or bracket expression: bash matches the text against file names.
  let globs = false;
  let brackets = "";
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    const next = text[i + 1];
    if (char === "\\" && next !== undefined) {
      if (next === "\n") {
        i++;
        continue;
      }
      const escapable = mode === "unquoted" || mode === "pattern" ||
        "$`\\".includes(next) || (mode === "double" && next === '"');
      if (escapable) {
        value += next;
        i++;
        continue;
      }
      value += char;
      continue;
    }
    if (char === "`") return { value, unrecognized: "a backquote", brackets };
    // bash starts a process substitution anywhere a word may hold one,
    // including a `=~` regular expression the parser keeps as plain text.
    if ((char === "<" || char === ">") && next === "(" && mode === "pattern") {
      return { value, unrecognized: `\`${char}(\``, brackets };
    }
    if (char === "$" && next !== undefined && EXPANSION_START.test(next)) {
      const quotedDollar = mode !== "unquoted" && (next === "'" || next === '"');
      if (!quotedDollar) return { value, unrecognized: `\`$${next}\``, brackets };
    }
    if (mode === "unquoted") {
      if (char === "\n") return { value, unrecognized: "a newline", brackets };
      if ("'\"<>|&;()".includes(char)) {
        return { value, unrecognized: `\`${char}\``, brackets };
      }
      // A `[` with no `]` after it is no bracket expression: `[ -f x ]`; but
      // the `]` may be in the next node of the same word (see joinParts).
      if ("*?".includes(char) || (char === "[" && text.includes("]", i + 1))) {
        glob ??= "a glob pattern";
        globs = true;
      }
      if (char === "[" || char === "]") brackets += char;
      if ("{}".includes(char)) glob ??= "brace expansion";
      if (char === "~" && (i === 0 || "=:".includes(text[i - 1]))) {
        glob ??= "tilde expansion";
      }
    }
    value += char;
  }
  return { value, glob, brackets, ...(globs ? { globs } : {}) };
}

const ANSI_C_SIMPLE: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/**
 * Decodes the inside of `$'...'` as bash does; NUL ends the string.
 * `undefined` when the result depends on the locale or is not text.
 */
export function decodeAnsiC(body: string): string | undefined {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const char = body[i];
    if (char !== "\\" || i + 1 >= body.length) {
      out += char;
      continue;
    }
    const next = body[++i];
    if (next in ANSI_C_SIMPLE) {
      out += ANSI_C_SIMPLE[next];
      continue;
    }
    let unknown = false;
    const numeric = (pattern: RegExp, radix: number, skip: number) => {
      const match = pattern.exec(body.slice(i + skip));
      if (match === null) return false;
      // Above ASCII, bash makes a raw byte (\x, octal) or a character in
      // the locale's encoding (\u, \U): what the command gets depends on it.
      const code = parseInt(match[0], radix);
      if (code >= 0x80) unknown = true;
      else out += String.fromCharCode(code);
      i += skip + match[0].length - 1;
      return true;
    };
    if (/[0-7]/.test(next) && numeric(/^[0-7]{1,3}/, 8, 0)) {
      if (unknown) return undefined;
      continue;
    }
    if (next === "x" && numeric(/^[0-9a-fA-F]{1,2}/, 16, 1)) {
      if (unknown) return undefined;
      continue;
    }
    if (next === "u" && numeric(/^[0-9a-fA-F]{1,4}/, 16, 1)) {
      if (unknown) return undefined;
      continue;
    }
    if (next === "U" && numeric(/^[0-9a-fA-F]{1,8}/, 16, 1)) {
      if (unknown) return undefined;
      continue;
    }
    if (next === "c" && i + 1 < body.length) {
      const control = body[++i];
      if (control.charCodeAt(0) >= 0x80) return undefined;
      // bash reads `\c\\` as control-backslash, and `\c?` as DEL.
      if (control === "\\" && body[i + 1] === "\\") i++;
      out += control === "?" ? "\x7f" : String.fromCharCode(control.toUpperCase().charCodeAt(0) & 0x1f);
      continue;
    }
    out += `\\${next}`;
  }
  const nul = out.indexOf("\0");
  return nul === -1 ? out : out.slice(0, nul);
}

/**
 * Where bash ends a `$'...'` string that starts `text`: after the first quote
 * that no backslash escapes (`\\` is an escaped backslash).
 */
export function ansiCStringEnd(text: string): number {
  for (let i = 2; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === "'") return i + 1;
  }
  return -1;
}

/**
 * Whether a here-document's delimiter word is quoted (any quote or backslash
 * in it), which makes bash read the body literally: no expansions, no
 * continuations joined.
 */
export function heredocDelimiterQuoted(word: string): boolean {
  return /['"\\]/.test(word);
}

/** The delimiter of a here-document as bash compares it: quotes removed. */
export function heredocDelimiter(word: string): string {
  let out = "";
  for (let i = 0; i < word.length; i++) {
    const char = word[i];
    if (char === "'") {
      const end = word.indexOf("'", i + 1);
      out += word.slice(i + 1, end === -1 ? undefined : end);
      i = end === -1 ? word.length : end;
    } else if (char === '"') {
      let j = i + 1;
      for (; j < word.length && word[j] !== '"'; j++) {
        if (word[j] === "\\" && '"\\$`'.includes(word[j + 1] ?? "")) j++;
        out += word[j];
      }
      i = j;
    } else if (char === "\\" && i + 1 < word.length) {
      out += word[++i];
    } else {
      out += char;
    }
  }
  return out;
}

/** How many words a brace expansion may make before the checker stops following it. */
const MAX_BRACE_EXPANSIONS = 64;

/**
 * Every term of a brace sequence (`{1..3}`, `{n..p}`, `{01..10..3}`), as
 * bash makes them: the increment's sign is ignored and 0 counts as 1; a
 * number with a leading zero pads every term to the wider end. Each term is
 * a name of its own, which may be a link that leads anywhere (`o` of
 * `{n..p}`), so the ends do not stand for the terms between. `undefined`
 * for letters of two cases (the terms between hold `[`, `\\`, `` ` ``) and
 * for more terms than `budget`.
 */
function sequenceTerms(from: string, to: string, by: string | undefined, budget: number): string[] | undefined {
  const numeric = /[0-9]/.test(from);
  if (numeric !== /[0-9]/.test(to)) return undefined;
  if (!numeric && (from.toLowerCase() === from) !== (to.toLowerCase() === to)) return undefined;
  const start = numeric ? Number(from) : from.charCodeAt(0);
  const end = numeric ? Number(to) : to.charCodeAt(0);
  const step = Math.abs(Number(by ?? 1)) || 1;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || !Number.isSafeInteger(step)) return undefined;
  if (Math.floor(Math.abs(end - start) / step) + 1 > budget) return undefined;
  const padded = numeric && (/^-?0[0-9]/.test(from) || /^-?0[0-9]/.test(to));
  const width = padded ? Math.max(from.length, to.length) : 0;
  const terms: string[] = [];
  for (let n = start; start <= end ? n <= end : n >= end; n += start <= end ? step : -step) {
    if (!numeric) terms.push(String.fromCharCode(n));
    else if (width === 0) terms.push(String(n));
    else terms.push(n < 0 ? `-${String(-n).padStart(width - 1, "0")}` : String(n).padStart(width, "0"));
  }
  return terms;
}

/** `{a,b}` and `{1..3}` expanded as bash does, when simple enough; `undefined` when not. */
export function expandBraces(text: string, budget = MAX_BRACE_EXPANSIONS): string[] | undefined {
  for (let open = text.indexOf("{"); open >= 0; open = text.indexOf("{", open + 1)) {
    let depth = 0;
    const commas: number[] = [];
    let close = -1;
    for (let i = open; i < text.length; i++) {
      if (text[i] === "{") depth++;
      else if (text[i] === "}" && --depth === 0) {
        close = i;
        break;
      } else if (text[i] === "," && depth === 1) commas.push(i);
    }
    if (close < 0) return [text];
    const body = text.slice(open + 1, close);
    let alternatives: string[] | undefined;
    if (commas.length > 0) {
      alternatives = [];
      let start = open + 1;
      for (const comma of [...commas, close]) {
        alternatives.push(text.slice(start, comma));
        start = comma + 1;
      }
    } else {
      const sequence = /^(-?[0-9]+|[A-Za-z])\.\.(-?[0-9]+|[A-Za-z])(?:\.\.(-?[0-9]+))?$/.exec(body);
      if (sequence === null) continue;
      alternatives = sequenceTerms(sequence[1], sequence[2], sequence[3], budget);
      if (alternatives === undefined) return undefined;
    }
    const out: string[] = [];
    for (const alternative of alternatives) {
      const expanded = expandBraces(text.slice(0, open) + alternative + text.slice(close + 1), budget);
      if (expanded === undefined) return undefined;
      out.push(...expanded);
      if (out.length > budget) return undefined;
    }
    return out;
  }
  return [text];
}
