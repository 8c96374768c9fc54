/**
 * GNU sed scripts read as GNU sed 4.9 compiles them (`compile.c`): where each
 * command ends, which commands run programs (`e`, `s///e`), and which files a
 * script reads (`r`, `R`) and writes (`w`, `W`, `s///w`). The reading follows
 * sed's own rules exactly where they decide what the next command is: labels
 * end at blanks, `;`, `}` and `#`; file names run to the end of the line; the
 * text of `a`, `i`, `c` runs to the end of the line, continued by a trailing
 * backslash, into the next `-e` piece too; `s` flags may be spaced. A script
 * sed would refuse to compile is reported as a problem, so does anything this
 * reader is not sure of (a `\c` escape in a regex, whose reading changed
 * between sed versions; a delimiter outside ASCII, which a C locale splits).
 *
 * @module
 */

/** Something a sed script does beyond printing: run a program, read or write a file. */
export interface SedEffect {
  /** The command, as it is named in reasons: `e`, `s///e`, `r`, `R`, `w`, `W`, `s///w`. */
  command: string;
  /** `run` for `e` and `s///e`; `read` or `write` for the file commands. */
  access: "run" | "read" | "write";
  /** The file the command names (for `e`, the command text, empty when it runs the pattern space). */
  file: string;
}

/** What a sed script does, or why it cannot be read. */
export interface SedScriptReading {
  /** Why the script must ask regardless of its effects (sed would refuse it, or it is unclear). */
  problem?: string;
  effects: SedEffect[];
}

const BLANK = /^[ \t]$/;
const SPACE = /^[ \t\n\v\f\r]$/;
const DIGIT = /^[0-9]$/;

class ScriptError extends Error {}

/**
 * Reads the pieces of one sed program (each `-e` value, or the one script
 * operand) as GNU sed compiles them, in order.
 *
 * @example
 * ```ts
 * import { readSedScript } from "./_sed_script.ts";
 * readSedScript([":a e touch x"]).effects; // [{ command: "e", access: "run", file: "touch x" }]
 * ```
 */
export function readSedScript(pieces: readonly string[]): SedScriptReading {
  const effects: SedEffect[] = [];
  let pendingText = false;
  let blocks = 0;
  try {
    for (const piece of pieces) pendingText = compilePiece(piece, pendingText, effects, (delta) => (blocks += delta));
  } catch (error) {
    if (error instanceof ScriptError) return { problem: error.message, effects };
    throw error;
  }
  if (blocks !== 0) return { problem: "has an unmatched `{`, which sed refuses", effects };
  return { effects };
}

/** Compiles one piece; returns whether an `a`, `i` or `c` text continues into the next piece. */
function compilePiece(
  script: string,
  pendingText: boolean,
  effects: SedEffect[],
  block: (delta: number) => number,
): boolean {
  let at = 0;
  const EOF = undefined;
  const inchar = (): string | undefined => at < script.length ? script[at++] : EOF;
  // Like sed's savchar: the end of the piece is not pushed back.
  const savchar = (ch: string | undefined) => {
    if (ch !== EOF) at--;
  };
  const inNonblank = () => {
    let ch: string | undefined;
    do ch = inchar(); while (ch !== EOF && BLANK.test(ch));
    return ch;
  };
  const fail = (why: string): never => {
    throw new ScriptError(why);
  };
  const inInteger = (first: string | undefined) => {
    let ch = first;
    let digits = "";
    while (ch !== EOF && DIGIT.test(ch)) {
      digits += ch;
      ch = inchar();
    }
    savchar(ch);
    return digits === "" ? 0 : Number(digits);
  };
  const readEndOfCmd = () => {
    const ch = inNonblank();
    if (ch === "}" || ch === "#") savchar(ch);
    else if (ch !== EOF && ch !== "\n" && ch !== ";") fail(`has extra characters after a command (\`${ch}\`)`);
  };
  /** The text of `a`, `i`, `c`, `e`: returns whether it continues into the next piece. */
  const readText = (leadin: string | undefined): { text: string; pending: boolean } => {
    if (leadin === EOF) return { text: "", pending: true };
    let text = leadin === "\n" ? "" : leadin;
    let ch = inchar();
    while (ch !== EOF && ch !== "\n") {
      if (ch === "\\") {
        ch = inchar();
        if (ch === EOF) return { text, pending: true };
      }
      text += ch;
      ch = inchar();
    }
    return { text, pending: false };
  };
  const snarfCharClass = (): string | undefined => {
    let ch = inchar();
    if (ch === "^") ch = inchar();
    if (ch === "]") ch = inchar();
    let state = 0;
    let delimiter: string | undefined;
    for (;; ch = inchar()) {
      if (ch === EOF || ch === "\n") return ch;
      if (ch === "." || ch === ":" || ch === "=") {
        if (state === 1) {
          delimiter = ch;
          state = 2;
          continue;
        }
        if (state === 2 && ch === delimiter) {
          state = 3;
          continue;
        }
      } else if (ch === "[") {
        if (state === 0) state = 1;
        continue;
      } else if (ch === "]") {
        if (state === 0 || state === 1) return ch;
        if (state === 3) state = 0;
      }
      state &= ~1;
    }
  };
  /** Reads up to the delimiter; `false` when the piece or the line ends first. */
  const matchSlash = (slash: string | undefined, regex: boolean): boolean => {
    if (slash === EOF || slash.charCodeAt(0) > 0x7f) {
      return slash === EOF ? false : fail("uses a delimiter outside ASCII, which sed reads by bytes in some locales");
    }
    let ch: string | undefined;
    while ((ch = inchar()) !== EOF && ch !== "\n") {
      if (ch === slash) return true;
      if (ch === "\\") {
        ch = inchar();
        if (ch === EOF) break;
        // sed 4.9 and later versions disagree on where `\c` ends inside a regex.
        if (regex && ch === "c") fail("has a `\\c` escape in a regex, which sed versions read differently");
      } else if (ch === "[" && regex) {
        ch = snarfCharClass();
        if (ch !== "]") break;
      }
    }
    if (ch === "\n") savchar(ch);
    return false;
  };
  /** An address, or `undefined` when the next character starts none (then nothing was read). */
  const compileAddress = (first: string | undefined): { kind: string; number?: number } | undefined => {
    let ch = first;
    if (ch === "/" || ch === "\\") {
      if (ch === "\\") ch = inchar();
      if (!matchSlash(ch, true)) fail("has an unterminated address regex");
      for (;;) {
        ch = inNonblank();
        if (ch !== "I" && ch !== "M") {
          savchar(ch);
          return { kind: "regex" };
        }
      }
    }
    if (ch !== EOF && DIGIT.test(ch)) {
      const number = inInteger(ch);
      ch = inNonblank();
      if (ch !== "~") savchar(ch);
      else if (inInteger(inNonblank()) > 0) return { kind: "step", number };
      return { kind: "number", number };
    }
    if (ch === "+" || ch === "~") {
      return inInteger(inNonblank()) === 0 ? { kind: "null" } : { kind: ch === "+" ? "plus" : "multiple" };
    }
    if (ch === "$") return { kind: "last" };
    return undefined;
  };
  const readFilename = () => {
    let name = "";
    let ch = inNonblank();
    while (ch !== EOF && ch !== "\n") {
      name += ch;
      ch = inchar();
    }
    if (name === "") fail("has an r, R, w or W command without a file name");
    return name;
  };
  const readLabel = () => {
    let ch = inNonblank();
    let label = "";
    while (ch !== EOF && ch !== "\n" && !BLANK.test(ch) && ch !== ";" && ch !== "}" && ch !== "#") {
      label += ch;
      ch = inchar();
    }
    savchar(ch);
    return label;
  };

  if (pendingText) {
    if (readText("\n").pending) return true;
  }
  for (;;) {
    let ch: string | undefined;
    while ((ch = inchar()) !== EOF && (ch === ";" || SPACE.test(ch)));
    if (ch === EOF) return false;
    const first = compileAddress(ch);
    let second: ReturnType<typeof compileAddress>;
    if (first !== undefined) {
      if (first.kind === "plus" || first.kind === "multiple") fail("uses +N or ~N as a first address");
      ch = inNonblank();
      if (ch === ",") {
        second = compileAddress(inNonblank());
        if (second === undefined) fail("has an unexpected `,`");
        ch = inNonblank();
      }
      if (
        first.kind === "number" && first.number === 0 &&
        ((second === undefined && ch !== "r") || (second !== undefined && second.kind !== "regex"))
      ) fail("uses line address 0 where sed refuses it");
    }
    if (ch === "!") {
      ch = inNonblank();
      if (ch === "!") fail("has multiple `!`s");
    }
    const addressed = first !== undefined;
    switch (ch) {
      case "#":
        if (addressed) fail("puts an address on a comment");
        while (ch !== EOF && ch !== "\n") ch = inchar();
        continue;
      case "v":
        readLabel();
        continue;
      case "{":
        block(1);
        continue;
      case "}":
        if (addressed) fail("puts an address on `}`");
        if (block(-1) < 0) fail("has an unexpected `}`");
        readEndOfCmd();
        continue;
      case "e": {
        ch = inNonblank();
        if (ch === EOF || ch === "\n") {
          effects.push({ command: "e", access: "run", file: "" });
          continue;
        }
        const text = textOf(ch);
        effects.push({ command: "e", access: "run", file: text.text });
        if (text.pending) return true;
        continue;
      }
      case "a":
      case "i":
      case "c": {
        const text = textOf(inNonblank());
        if (text.pending) return true;
        continue;
      }
      case ":":
        if (addressed) fail("puts an address on a label");
        if (readLabel() === "") fail("has a `:` without a label");
        continue;
      case "T":
      case "b":
      case "t":
        readLabel();
        continue;
      case "Q":
      case "q":
        if (second !== undefined) fail(`gives two addresses to \`${ch}\``);
        // falls through: like `l`, an optional number
      case "L":
      case "l":
        ch = inNonblank();
        if (ch !== EOF && DIGIT.test(ch)) inInteger(ch);
        else savchar(ch);
        readEndOfCmd();
        continue;
      case "=":
      case "d":
      case "D":
      case "F":
      case "g":
      case "G":
      case "h":
      case "H":
      case "n":
      case "N":
      case "p":
      case "P":
      case "z":
      case "x":
        readEndOfCmd();
        continue;
      case "r":
      case "R":
        effects.push({ command: ch, access: "read", file: readFilename() });
        continue;
      case "w":
      case "W":
        effects.push({ command: ch, access: "write", file: readFilename() });
        continue;
      case "s": {
        const slash = inchar();
        if (!matchSlash(slash, true) || !matchSlash(slash, false)) fail("has an unterminated `s` command");
        substitutionFlags();
        continue;
      }
      case "y": {
        const slash = inchar();
        if (!matchSlash(slash, false) || !matchSlash(slash, false)) fail("has an unterminated `y` command");
        readEndOfCmd();
        continue;
      }
      case EOF:
        fail("has an address without a command");
        break;
      default:
        fail(`uses the unknown command \`${ch}\``);
    }
  }

  /** `a`, `i`, `c` (and `e` with text): `a\` + text, `a\text`, or the one-liner `a text`. */
  function textOf(first: string | undefined): { text: string; pending: boolean } {
    let ch = first;
    if (ch === EOF) fail("has `a`, `c` or `i` without text");
    if (ch === "\\") ch = inchar();
    else {
      savchar(ch);
      ch = "\n";
    }
    return readText(ch);
  }

  function substitutionFlags(): void {
    const seen = new Set<string>();
    for (;;) {
      const ch = inNonblank();
      switch (ch) {
        case "i":
        case "I":
        case "m":
        case "M":
          continue;
        case "e":
          if (!seen.has("e")) effects.push({ command: "s///e", access: "run", file: "" });
          seen.add("e");
          continue;
        case "p":
        case "g":
          if (seen.has(ch)) fail(`gives \`s\` the flag \`${ch}\` twice`);
          seen.add(ch);
          continue;
        case "w":
          effects.push({ command: "s///w", access: "write", file: readFilename() });
          return;
        case "}":
        case "#":
          savchar(ch);
          return;
        case EOF:
        case "\n":
        case ";":
          return;
        case "\r":
          if (inchar() === "\n") return;
          fail("has an unknown flag of `s`");
          break;
        default:
          if (ch !== EOF && DIGIT.test(ch)) {
            if (seen.has("number")) fail("gives `s` two number flags");
            seen.add("number");
            if (inInteger(ch) === 0) fail("gives `s` the number flag 0");
            continue;
          }
          fail(`has an unknown flag of \`s\` (\`${ch}\`)`);
      }
    }
  }
}
