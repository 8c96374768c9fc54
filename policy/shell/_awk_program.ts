/**
 * awk programs and command lines, read well enough to find what runs a
 * command, reads a file other than the operands, or writes one: `system`,
 * pipes (`print | "cmd"`, `"cmd" | getline`, gawk's `|&`), `getline < file`,
 * output redirections (`print > f`, `print >> f`, `printf ... > f`), gawk's
 * `@include`, `@load`, `@namespace` and indirect calls (`@f()`), and the
 * program changing `ARGV`/`ARGC` or `PROCINFO` (which adds input files or
 * names functions to call). The program is tokenised as awk does: strings,
 * regex literals (where an operand is expected, so that `a / b / c` divides),
 * comments, line continuations; where awks differ (`/` inside a bracket
 * expression of a regex) or the text is unterminated, it asks. The operands
 * are input files (recorded) unless they are `var=value` assignments.
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
    const token = tokens[at];
    if (token === "system") return "can run commands or write files (`system`)";
    if (token === "|" || token === "|&") return "can run commands or write files (a pipe, `|`)";
    if (token === "@") return "can run commands or write files (gawk's `@`: include, load or an indirect call)";
    if (RISKY_VARIABLES.has(token)) return `can run commands or write files (\`${token}\` adds files or calls)`;
    if (token === "getline") {
      for (let next = at + 1; next < tokens.length && !STATEMENT_END.has(tokens[next]); next++) {
        if (tokens[next] === "<") return "can run commands or write files (`getline <` reads another file)";
      }
    }
    if (token === "print" || token === "printf") {
      let depth = 0;
      for (let next = at + 1; next < tokens.length && !(depth === 0 && STATEMENT_END.has(tokens[next])); next++) {
        const inner = tokens[next];
        if (inner === "(" || inner === "[") depth++;
        else if (inner === ")" || inner === "]") depth--;
        else if (depth <= 0 && (inner === ">" || inner === ">>")) {
          return "can run commands or write files (output redirection, `>`)";
        }
      }
    }
  }
  return undefined;
}

const RISKY_VARIABLES = new Set(["ARGV", "ARGC", "PROCINFO"]);
const STATEMENT_END = new Set([";", "\n", "}", "{", "&&", "||"]);
/** Tokens after which `/` divides; after anything else it starts a regex. */
const ENDS_OPERAND = /^([A-Za-z_][A-Za-z0-9_]*|[0-9.][0-9.eE]*|"|\)|\]|\$|\+\+|--)$/;
const KEYWORDS = new Set([
  "print",
  "printf",
  "return",
  "if",
  "while",
  "for",
  "do",
  "else",
  "in",
  "getline",
  "delete",
  "exit",
  "next",
  "nextfile",
  "function",
  "func",
  "BEGIN",
  "END",
  "BEGINFILE",
  "ENDFILE",
]);
const OPERATORS = [
  ">>",
  "|&",
  "||",
  "&&",
  "++",
  "--",
  "==",
  "!=",
  "<=",
  ">=",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "^=",
  "**",
];

/** The program's tokens (strings as `"`, regexes as `/re/`), or why it cannot be read. */
function tokenize(program: string): string[] | string {
  const tokens: string[] = [];
  let at = 0;
  const previous = () => tokens.at(-1) ?? "";
  while (at < program.length) {
    const char = program[at];
    if (char === "\\" && program[at + 1] === "\n") {
      at += 2;
    } else if (char === " " || char === "\t" || char === "\r") {
      at++;
    } else if (char === "#") {
      while (at < program.length && program[at] !== "\n") at++;
    } else if (char === '"') {
      at++;
      while (at < program.length && program[at] !== '"') {
        if (program[at] === "\n") return "has a string that runs past the end of a line";
        at += program[at] === "\\" ? 2 : 1;
      }
      if (at >= program.length) return "has an unterminated string";
      at++;
      tokens.push('"');
    } else if (char === "/" && !(ENDS_OPERAND.test(previous()) && !KEYWORDS.has(previous()))) {
      at++;
      let bracket = false;
      while (at < program.length && (bracket || program[at] !== "/")) {
        const inner = program[at];
        if (inner === "\n") return "has a regex that runs past the end of a line";
        if (inner === "\\") at++;
        else if (inner === "[" && !bracket) {
          bracket = true;
          // `[]...]` and `[^]...]`: a leading `]` is a member.
          if (program[at + 1] === "^") at++;
          if (program[at + 1] === "]") at++;
        } else if (inner === "]" && bracket) bracket = false;
        else if (inner === "/" && bracket) {
          return "has `/` inside a bracket expression of a regex, which awks read differently";
        }
        at++;
      }
      if (at >= program.length) return "has an unterminated regex";
      at++;
      tokens.push("/re/");
    } else if (/[A-Za-z_]/.test(char)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(program.slice(at))![0];
      tokens.push(word);
      at += word.length;
    } else if (/[0-9.]/.test(char)) {
      const number = /^[0-9.]+(?:[eE][+-]?[0-9]+)?/.exec(program.slice(at))![0];
      tokens.push(number);
      at += number.length;
    } else {
      const operator = OPERATORS.find((candidate) => program.startsWith(candidate, at)) ?? char;
      tokens.push(operator);
      at += operator.length;
    }
  }
  return tokens;
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
  if (reading.problem !== undefined) return reading.problem;
  let problem: string | undefined;
  let fromFile = false;
  for (const item of reading.items) {
    if (item.kind !== "option" || (item.name !== "f" && item.name !== "file")) continue;
    fromFile = true;
    pathOperands?.push({ value: item.value, access: "read", origin: `${name} -f` });
    problem ??= `${shown(item.word)} loads awk code from a file, which cannot be checked`;
  }
  const operands = reading.items.filter((item) => item.kind === "operand").map((item) => item.word);
  if (!fromFile) {
    const program = operands.shift();
    if (program === undefined) return undefined;
    if (program.value === undefined) return `the awk program ${shown(program)} is only known when the command runs`;
    const found = awkProgramProblem(program.value);
    if (found !== undefined) problem ??= `the awk program ${shown(program)} ${found}`;
  }
  for (const operand of operands) {
    if (operand.value !== undefined && ASSIGNMENT.test(operand.value)) continue;
    // `x$P` may become `v=...` or a file: either way the path rules see it as unknown.
    pathOperands?.push({ value: operand.value, access: "read", origin: `${name} input file` });
  }
  return problem;
}
