/**
 * GNU find's command line read as find reads it: the leading options (`-H`,
 * `-L`, `-P`, `-D LIST`, `-O LEVEL`), the starting points (every word up to
 * the first that starts an expression), then the expression, primary by
 * primary with the number of arguments each takes. Primaries that run
 * programs (`-exec`, `-execdir`, `-ok`, `-okdir`), delete (`-delete`) or
 * write files (`-fprint`, `-fprint0`, `-fprintf`, `-fls`) ask, and so does
 * `-files0-from`, whose list of starting points is never seen; the files a
 * primary reads (`-newer`, `-anewer`, `-cnewer`, `-samefile`, `-newerXY`,
 * the list of `-files0-from`) and the starting points are recorded. An unknown primary, or
 * a word only known at run time inside the expression, asks.
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import type { PathOperand } from "./_path_operands.ts";
import { dateStringFiles } from "./_date_string.ts";
import { shown } from "./_options.ts";

/** What a find command line does, as find reads it. */
export interface FindReading {
  /** Why it must ask, if it must. */
  problem?: string;
  /** The files and folders it reads (starting points, `-newer FILE`, ...) and writes. */
  files: PathOperand[];
}

const FLAGS = new Set(
  (
    "-daystart -depth -d -follow -ignore_readdir_race -noignore_readdir_race -mount -xdev -noleaf -nowarn -warn " +
    "-empty -executable -false -true -nogroup -nouser -readable -writable -prune -quit -print -print0 -ls " +
    "( ) ! , -not -a -and -o -or -help --help -version --version"
  ).split(" "),
);
const WITH_VALUE = new Set(
  (
    "-amin -atime -cmin -ctime -mmin -mtime -used -gid -uid -group -user -ilname -iname -inum -ipath -iregex " +
    "-iwholename -links -lname -name -path -wholename -regex -size -type -xtype -perm -fstype -maxdepth " +
    "-mindepth -regextype -context -printf"
  ).split(" "),
);
const READS_FILE = new Set(["-samefile", "-newer", "-anewer", "-cnewer", "-files0-from"]);
const WRITES_FILE = new Set(["-fprint", "-fprint0", "-fls"]);
const RUNS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
const EFFECT = "makes find run commands, delete or write files";
/** `-newerXY`: X and Y from `aBcm`, Y also `t` (then the argument is a date, not a file). */
const NEWER_XY = /^-newer[aBcm][aBcmt]$/;

/** Whether find takes `word` as the start of the expression rather than a starting point. */
function startsExpression(value: string): boolean {
  return (value.startsWith("-") && value.length > 1) || ["(", ")", "!", ","].includes(value);
}

/** find's starting points, the index of its expression, or why they cannot be told. */
export interface FindStartingPoints {
  /** The starting points as written (none: find walks `.`). */
  words: BashWord[];
  /** The index of the expression's first word. */
  next: number;
  /** Why the starting points cannot be told apart from the expression. */
  problem?: string;
}

/**
 * find's starting points as find reads them: after its leading options
 * (`-H`, `-L`, `-P`, `-D LIST`, `-O LEVEL`, then `--`, which ends only
 * these), every word up to the first that starts the expression.
 */
export function findStartingPoints(args: readonly BashWord[]): FindStartingPoints {
  let i = 0;
  // The leading options, as find's own loop reads them (`-D` takes the next word; `-O` is attached).
  for (; i < args.length; i++) {
    const value = args[i].value;
    if (value === undefined) {
      if (args[i].mayBeOption) {
        return { words: [], next: i, problem: `${shown(args[i])} could expand into an option of find` };
      }
      break;
    }
    if (value === "--") {
      i++;
      break;
    }
    if (value === "-H" || value === "-L" || value === "-P" || /^-O\d*$/.test(value)) continue;
    if (value === "-D") {
      if (args[++i] === undefined) return { words: [], next: i, problem: "`-D` needs a list of debug options" };
      continue;
    }
    break;
  }
  const words: BashWord[] = [];
  for (; i < args.length; i++) {
    const word = args[i];
    if (word.value === undefined) {
      if (word.mayBeOption) {
        return {
          words,
          next: i,
          problem: `${shown(word)} could expand into a primary of find, such as \`-exec\``,
        };
      }
      words.push(word);
      continue;
    }
    if (startsExpression(word.value)) break;
    words.push(word);
  }
  return { words, next: i };
}

/**
 * Reads find's arguments.
 *
 * @example
 * ```ts
 * import { readFindExpression } from "./_find_expression.ts";
 * const word = (value: string) => ({ text: value, value, mayBeOption: value.startsWith("-") });
 * readFindExpression([".", "-delete"].map(word)).problem; // "`-delete` makes find run commands, delete or write files"
 * ```
 */
export function readFindExpression(args: readonly BashWord[]): FindReading {
  const files: PathOperand[] = [];
  // An expression not understood may hold `-exec`: what it writes is only known when it runs.
  const fail = (problem: string): FindReading => ({
    problem,
    files: [...files, { value: undefined, access: "write", origin: "find's expression" }],
  });
  const points = findStartingPoints(args);
  for (const word of points.words) files.push({ value: word.value, access: "read", origin: "find starting point" });
  if (points.problem !== undefined) return fail(points.problem);
  let i = points.next;
  // `-delete` removes what it finds below the starting points (`.` when none is given), the points themselves too.
  const starts = files.length > 0 ? files.map((file) => file.value) : ["."];
  let deletes = false;
  let problem: string | undefined;
  while (i < args.length) {
    const word = args[i++];
    const value = word.value;
    if (value === undefined) {
      return fail(`${shown(word)} in find's expression is only known when the command runs (it could be \`-exec\`)`);
    }
    if (FLAGS.has(value)) continue;
    if (WITH_VALUE.has(value)) {
      const next = args[i++];
      if (next === undefined) return fail(`${shown(word)} needs an argument`);
      // A glob or split expansion may become several words, the second one a primary.
      if (next.value === undefined && next.mayBeOption) {
        return fail(`${shown(next)} could expand into several words, one of them a primary of find such as \`-exec\``);
      }
      continue;
    }
    if (value === "-delete") {
      problem ??= `${shown(word)} ${EFFECT}`;
      if (!deletes) {
        for (const start of starts) files.push({ value: start, access: "write", origin: "find -delete", below: true });
      }
      deletes = true;
      continue;
    }
    if (RUNS.has(value)) {
      // find's commands run to `;` or to `{} +`.
      let end = i;
      while (
        end < args.length && args[end].value !== ";" && !(args[end].value === "+" && args[end - 1]?.value === "{}")
      ) {
        end++;
      }
      if (end === args.length) return fail(`${shown(word)} has no terminating \`;\` or \`+\``);
      i = end + 1;
      problem ??= `${shown(word)} ${EFFECT}`;
      // What the command writes is only known when it runs.
      files.push({ value: undefined, access: "write", origin: `find ${value}` });
      continue;
    }
    const writes = WRITES_FILE.has(value) || value === "-fprintf";
    if (!writes && !READS_FILE.has(value) && !NEWER_XY.test(value)) {
      return fail(`${shown(word)} is not a primary of find known to be harmless`);
    }
    const file = args[i++];
    if (file === undefined) return fail(`${shown(word)} needs an argument`);
    // A date, which may name a zone file (`TZ="/x/y" now`).
    if (NEWER_XY.test(value) && value.endsWith("t")) {
      files.push(...dateStringFiles(file.value, `find ${value}`));
      continue;
    }
    if (writes) {
      if (value === "-fprintf" && args[i++] === undefined) return fail(`${shown(word)} needs a format`);
      files.push({ value: file.value, access: "write", origin: `find ${value}` });
      problem ??= `${shown(word)} ${EFFECT} (${shown(file)})`;
      continue;
    }
    files.push({ value: file.value, access: "read", origin: `find ${value}` });
    if (value === "-files0-from") {
      problem ??= `${shown(word)} makes find read its starting points from a list (a file or a stream), ` +
        "whose names the checker cannot see";
      // The starting points it walks are paths only the run knows.
      files.push({ value: undefined, access: "read", origin: `the starting points the list of ${shown(word)} names` });
    }
  }
  return problem === undefined ? { files } : { problem, files };
}
