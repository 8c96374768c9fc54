/**
 * awk programs and command lines, read well enough to find what runs a
 * command, reads a file other than the operands, or writes one: `system`,
 * pipes (`print | "cmd"`, `"cmd" | getline`, gawk's `|&`), `getline < file`,
 * output redirections (`print > f`, `print >> f`, `printf ... > f`), gawk's
 * `@include`, `@load`, `@namespace` and indirect calls (`@f()`), and the
 * program changing `ARGV`/`ARGC`, `PROCINFO` or gawk's `SYMTAB` (which add
 * input files or name functions to call).
 *
 * A string or regex literal hides its text from that search, so the program is
 * tokenised as gawk and mawk read it, and where they read it differently or
 * the reading is unsure, it asks. A `/` starts a regex where an operand is
 * expected and divides after one (a number, string, name, regex, `)`, `]`,
 * `getline`); after `$` and after the `)` of an `if`, `while` or `for`
 * condition an operand follows. A `/=` after an operand divides and assigns
 * where gawk's grammar allows an assignment, and is a regex elsewhere: it is
 * read only after a variable that starts a statement (`n /= 2`, `$3 /= 2`).
 * Both awks track bracket expressions in a regex, but differently from each
 * other and from older awks, so a `/` inside one asks. The operands are input
 * files (recorded) unless they are `var=value` assignments.
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import type { PathOperand } from "./_path_operands.ts";
import { readGetopt, shown } from "./_options.ts";

/** Why an awk program must ask, or `undefined` when it only reads its input and prints. */
export function awkProgramProblem(program: string): string | undefined {
  const tokens = tokenize(program);
  if (typeof tokens === "string") return tokens;
  for (let at = 0; at < tokens.length; at++) {
    const problem = tokenProblem(tokens, at);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Whether an awk program may run a command line its text does not show whole: `system`, a pipe, gawk's `@` (an
 * indirect call or a loaded extension), or a program not read.
 */
export function awkMayRunCommands(program: string): boolean {
  const tokens = tokenize(program);
  return typeof tokens === "string" || tokens.some((token) => ["system", "|", "|&", "@"].includes(token));
}

/** What `tokens[at]` lets the program do beyond reading its input and printing. */
function tokenProblem(tokens: readonly string[], at: number): string | undefined {
  const token = tokens[at];
  if (token === "system") return "can run commands or write files (`system`)";
  if (token === "|" || token === "|&") return "can run commands or write files (a pipe, `|`)";
  // `>>` is nothing but an append redirection in awk, wherever it stands.
  if (token === ">>") return "can run commands or write files (output redirection, `>>`)";
  if (token === "@") return "can run commands or write files (gawk's `@`: include, load or an indirect call)";
  if (RISKY_VARIABLES.has(token)) return `can run commands or write files (\`${token}\` adds files or calls)`;
  if (token === "getline" && restOfStatement(tokens, at).some((next) => next.token === "<")) {
    return "can run commands or write files (`getline <` reads another file)";
  }
  if (
    (token === "print" || token === "printf") &&
    restOfStatement(tokens, at).some((next) => next.token === ">" && next.depth === 0)
  ) {
    return "can run commands or write files (output redirection, `>`)";
  }
  return undefined;
}

const RISKY_VARIABLES = new Set(["ARGV", "ARGC", "PROCINFO", "SYMTAB"]);
/** Tokens within a statement after which gawk or mawk skip a newline (gawk after `?` and `:`), which does not end it. */
const NEWLINE_CONTINUES = new Set([",", "&&", "||", "?", ":"]);

/**
 * The tokens after `tokens[at]` in its statement, each with its depth in
 * parentheses counted from there: up to a `;`, `}` or line end outside them,
 * or a `)` that closes one opened before (a `for` header, `(getline x) < 0`).
 * `&&`, `||` and `?:` stay inside, as they do for awk: `print 1 && 1 > "f"`
 * writes `f`. awk's `>` is a redirection only outside parentheses of the
 * print statement; a `<` anywhere is counted, which may ask needlessly.
 */
function restOfStatement(tokens: readonly string[], at: number): { token: string; depth: number }[] {
  const rest: { token: string; depth: number }[] = [];
  let depth = 0;
  for (let next = at + 1; next < tokens.length; next++) {
    const token = tokens[next];
    if (token === ")" && depth === 0) break;
    if (depth === 0 && (token === ";" || token === "}")) break;
    if (depth === 0 && token === "\n" && !NEWLINE_CONTINUES.has(tokens[next - 1])) break;
    if (token === "(") depth++;
    if (token === ")") depth--;
    rest.push({ token, depth });
  }
  return rest;
}

/** Keywords after which an operand, so a regex, follows (in every awk). */
const BEFORE_OPERAND = new Set([
  "print",
  "printf",
  "return",
  "if",
  "while",
  "for",
  "do",
  "else",
  "in",
  "delete",
  "exit",
  "next",
  "break",
  "continue",
  "function",
  "BEGIN",
  "END",
]);
/**
 * Tokens before which gawk and mawk read a `/` differently: after `x++` or
 * `length` gawk divides where mawk starts a regex; mawk reads a regex after
 * any builtin function name; `func`, `switch`, `case`, `default`,
 * `BEGINFILE`, `ENDFILE` are keywords to gawk and names to mawk (`nextfile`
 * to older mawk).
 */
const UNSURE_BEFORE_SLASH = new Set([
  "++",
  "--",
  "func",
  "switch",
  "case",
  "default",
  "BEGINFILE",
  "ENDFILE",
  "nextfile",
  // The builtin functions of gawk and mawk, with mawk's keywords `split`, `match`, `sub`, `gsub`.
  "and",
  "asort",
  "asorti",
  "atan2",
  "bindtextdomain",
  "close",
  "compl",
  "cos",
  "dcgettext",
  "dcngettext",
  "exp",
  "fflush",
  "gensub",
  "gsub",
  "index",
  "int",
  "isarray",
  "length",
  "log",
  "lshift",
  "match",
  "mkbool",
  "mktime",
  "or",
  "patsplit",
  "rand",
  "rshift",
  "sin",
  "split",
  "sprintf",
  "sqrt",
  "srand",
  "strftime",
  "strtonum",
  "sub",
  "substr",
  "system",
  "systime",
  "tolower",
  "toupper",
  "typeof",
  "xor",
]);
/** Keywords whose parenthesised condition a statement follows. */
const CONDITION_KEYWORDS = new Set(["if", "while", "for"]);
const SPACE = /[ \t\r]+|\\[ \t\r]*\n|#[^\n]*/y;
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /[0-9.]+(?:[eE][+-]?[0-9]+)?/y;
const OPERATOR = />>|\|&|\|\||&&|\+\+|--|\*\*|[=!<>+\-*/%^]=|[-+*/%^!<>=~?:,;(){}[\]$|&@\n]/y;

/**
 * What a `/` after `tokens` is to awk: a regex, a division, or why that is
 * unsure. `assigns` when it is `/=`.
 */
function slashReading(
  tokens: readonly string[],
  closesCondition: boolean,
  assigns: boolean,
): "regex" | "divide" | string {
  const previous = tokens.at(-1);
  if (previous === undefined || closesCondition) return "regex";
  if (UNSURE_BEFORE_SLASH.has(previous)) {
    return `has \`${previous} /\`, which awks read differently (a division or a regex)`;
  }
  if (BEFORE_OPERAND.has(previous)) return "regex";
  // An operand ends here: a name (`getline` and `NF` among them), number, string, regex, `)` or `]`.
  const afterOperand = /^[A-Za-z_0-9.]/.test(previous) || ['"', "/re/", ")", "]"].includes(previous);
  if (!afterOperand) return "regex";
  if (assigns && !endsWithStatementVariable(tokens)) {
    return `has \`${previous} /=\`, which gawk reads as a regex unless an assignment can follow`;
  }
  return "divide";
}

/** The tokens a statement starts after (`undefined`: the program's start). */
const STATEMENT_START = new Set([undefined, "{", ";", "\n", "}", "else", "do"]);
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Whether the tokens end with a variable that starts a statement (`n`, `$3`):
 * the one place a `/=` surely divides and assigns. After other operands gawk
 * reads it as a regex wherever its grammar allows no assignment (`1 + n /=/`
 * concatenates one), which depends on more than the tokens around it.
 */
function endsWithStatementVariable(tokens: readonly string[]): boolean {
  const last = tokens.at(-1) ?? "";
  const field = tokens.at(-2) === "$";
  const variable = (field ? /^([A-Za-z_][A-Za-z0-9_]*|[0-9]+)$/ : VARIABLE).test(last) &&
    !BEFORE_OPERAND.has(last) && last !== "getline";
  return variable && STATEMENT_START.has(tokens.at(field ? -3 : -2));
}

/** The program's tokens (strings as `"`, regexes as `/re/`, line ends as `\n`), or why it cannot be read. */
function tokenize(program: string): string[] | string {
  const tokens: string[] = [];
  // For each open `(`: whether it opens an `if`, `while` or `for` condition.
  const conditions: boolean[] = [];
  let closesCondition = false;
  let at = 0;
  const match = (pattern: RegExp) => {
    pattern.lastIndex = at;
    return pattern.exec(program)?.[0];
  };
  while (at < program.length) {
    const space = match(SPACE);
    if (space !== undefined) {
      at += space.length;
      continue;
    }
    const previous = tokens.at(-1);
    const slash = program[at] === "/" ? slashReading(tokens, closesCondition, program[at + 1] === "=") : "divide";
    let token: string;
    if (program[at] === '"') {
      const end = stringEnd(program, at);
      if (typeof end === "string") return end;
      token = '"';
      at = end;
    } else if (slash !== "divide") {
      if (slash !== "regex") return slash;
      const end = regexEnd(program, at);
      if (typeof end === "string") return end;
      token = "/re/";
      at = end;
    } else {
      const found = match(WORD) ?? match(NUMBER) ?? match(OPERATOR);
      if (found === undefined) {
        return `has ${JSON.stringify(program[at])} outside a string or regex, which awks reject or read differently`;
      }
      token = found;
      at += found.length;
    }
    closesCondition = token === ")" && conditions.pop() === true;
    if (token === "(") conditions.push(CONDITION_KEYWORDS.has(previous ?? ""));
    tokens.push(token);
  }
  return tokens;
}

/** The index after the string that opens at `start`, or why it cannot be read. */
function stringEnd(program: string, start: number): number | string {
  let at = start + 1;
  while (at < program.length && program[at] !== '"') {
    if (program[at] === "\n") return "has a string that runs past the end of a line";
    // `\` escapes the next character, a newline too (a continued string).
    at += program[at] === "\\" ? 2 : 1;
  }
  return at >= program.length ? "has an unterminated string" : at + 1;
}

/**
 * The index after the regex literal that opens at `start`, or why it cannot
 * be read. gawk and mawk let a `/` inside a bracket expression belong to the
 * regex, but count brackets differently (a stray `]` before a `[`), and older
 * awks end the regex there: such a `/` asks.
 */
function regexEnd(program: string, start: number): number | string {
  const gawk = { depth: 0, open: -1 };
  const mawk = { depth: 0, open: -1 };
  for (let at = start + 1; at < program.length; at++) {
    const char = program[at];
    if (char === "\n") return "has a regex that runs past the end of a line";
    if (char === "\\") {
      // Both awks drop a continued line's `\` and newline, which moves the bracket positions they compare.
      if (program[at + 1] === "\n") return "has a regex continued on the next line";
      at++;
    } else if (char === "/" && gawk.depth <= 0 && mawk.depth === 0) {
      return at + 1;
    } else if (char === "/") {
      return "has `/` inside a bracket expression of a regex, which awks read differently";
    } else {
      countBracket(gawk, program, at, true);
      countBracket(mawk, program, at, false);
    }
  }
  return "has an unterminated regex";
}

/**
 * Counts a bracket at `at` as gawk 5 (`strayCloses`) and mawk 1.3.4 do: a `[`
 * opens one when none is open or it starts `[:`; a `]` first in the list
 * (after `[` or `[^`) is a member; a `]` with none open takes gawk's count
 * below zero, and then only a `[:` opens one.
 */
function countBracket(brackets: { depth: number; open: number }, program: string, at: number, strayCloses: boolean) {
  const char = program[at];
  if (char === "[" && (brackets.depth === 0 || program[at + 1] === ":")) {
    brackets.depth++;
    if (brackets.depth === 1) brackets.open = at;
  } else if (char === "]") {
    const member = brackets.depth > 0 &&
      (at === brackets.open + 1 || (at === brackets.open + 2 && program[at - 1] === "^"));
    if (!member && (brackets.depth > 0 || strayCloses)) brackets.depth--;
  }
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * The awk command line (awk, gawk, mawk, nawk): `-F` and `-v` are harmless,
 * `-f FILE` is recorded and asks (its code is not seen), every other option
 * asks (gawk's `-e`, `-i`, `-l`, `-E`, `--exec`, `--profile`, `-W ...`). The
 * program is the first operand; the rest are input files, recorded, or
 * `var=value` assignments.
 */
export function awkCommandProblem(
  args: readonly BashWord[],
  name: string,
  pathOperands?: PathOperand[],
): string | undefined {
  const reading = readGetopt(args, {
    program: name,
    short: { F: "required", v: "required", f: "required" },
    long: { "field-separator": "required", assign: "required", file: "required" },
    // awk stops reading options at the program.
    stopAtOperand: true,
  });
  if (reading.problem !== undefined) {
    // An option not read here may load code or edit files (gawk's `-i inplace` rewrites its operands).
    pathOperands?.push({ value: undefined, access: "write", origin: `${name}'s options` });
    return reading.problem;
  }
  let problem: string | undefined;
  let fromFile = false;
  for (const item of reading.items) {
    if (item.kind !== "option" || (item.name !== "f" && item.name !== "file")) continue;
    fromFile = true;
    pathOperands?.push({ value: item.value, access: "read", origin: `${name} -f` });
    // Code not seen may write anything.
    pathOperands?.push({ value: undefined, access: "write", origin: `${name} -f program` });
    problem ??= `${shown(item.word)} loads awk code from a file, which cannot be checked`;
  }
  const operands = reading.items.filter((item) => item.kind === "operand").map((item) => item.word);
  if (!fromFile) {
    const program = operands.shift();
    if (program === undefined) return undefined;
    if (program.value === undefined) return `the awk program ${shown(program)} is only known when the command runs`;
    const found = awkProgramProblem(program.value);
    if (found !== undefined) {
      problem ??= `the awk program ${shown(program)} ${found}`;
      // What it writes (a redirection's file is an expression; `system` and pipes run commands) is not known.
      pathOperands?.push({ value: undefined, access: "write", origin: `${name} program` });
    }
  }
  for (const operand of operands) {
    if (operand.value !== undefined && ASSIGNMENT.test(operand.value)) continue;
    // `x$P` may become `v=...` or a file: either way the path rules see it as unknown.
    pathOperands?.push({ value: operand.value, access: "read", origin: `${name} input file` });
  }
  return problem;
}
