/**
 * Flag rules for the commands that read by default but can write files or run
 * other programs with some options: sed, awk, sort, uniq, tee, tar, find,
 * ripgrep, tree, file, date, printf and test; and jq (registered in `_flag_rules.ts`).
 * Options that hand a program a list of files to open (`wc --files0-from`,
 * `md5sum -c`) ask too: the names in the list are never seen.
 *
 * Option matching is deliberately loose: a long option matches when it is any
 * prefix of a dangerous one (GNU getopt accepts `sort --out=f`), and a short
 * option matches when its letter appears anywhere in a cluster (`sort -uo f`).
 * Loose matching only ever asks more often.
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import type { FlagContext } from "./_options.ts";
import { type GetoptSpec, hiddenOptionReason, mayBeSeveralWords, readGetopt, recordPaths, shown } from "./_options.ts";
import type { PathAccess, PathOperand } from "./_path_operands.ts";
import type { Rule } from "./_flag_rules_runners.ts";
import { readSedScript } from "./_sed_script.ts";
import { readFindExpression } from "./_find_expression.ts";
import { awkCommandProblem } from "./_awk_program.ts";
import { jqCommandProblem } from "./_jq_filter.ts";
import { dateStringFiles } from "./_date_string.ts";

/** The first argument that could expand into an option nobody can see yet. */
function hiddenOption(args: readonly BashWord[], name: string): string | undefined {
  const word = args.find((arg) => arg.value === undefined && arg.mayBeOption);
  return word === undefined ? undefined : hiddenOptionReason(word, name);
}

interface OptionSpec {
  /** Single-letter options, e.g. `o` for `-o`. */
  short?: string;
  /** Long option names without dashes. */
  long?: readonly string[];
  /** Exact words (find's primaries, which have a single dash). */
  exact?: readonly string[];
  /** What the options do, for the reason. */
  effect: string;
  /** Whether they make the program run another one, whose writes only the run knows (any path, a protected one). */
  runs?: boolean;
  /** What the program does with the files a list names, when they hand it one ({@linkcode fileList}). */
  lists?: PathAccess;
}

function matchesOption(value: string, spec: OptionSpec): boolean {
  if (spec.exact?.includes(value)) return true;
  if (value.startsWith("--") && value.length > 2) {
    const given = value.slice(2).split("=", 1)[0];
    return given !== "" && (spec.long ?? []).some((long) => long.startsWith(given));
  }
  if (value.startsWith("-") && !value.startsWith("--") && spec.short) {
    return [...value.slice(1)].some((letter) => spec.short!.includes(letter));
  }
  return false;
}

/** The rule that asks for the first word matching one of `specs`, with that spec's effect. */
function optionRule(...specs: OptionSpec[]): Rule {
  return (args, name, context) => {
    let problem: string | undefined;
    for (const word of args) {
      const matched = word.value === undefined ? [] : specs.filter((spec) => matchesOption(word.value!, spec));
      if (matched.some((spec) => spec.runs === true)) recordRun(word, name, context);
      const listed = matched.find((spec) => spec.lists !== undefined)?.lists;
      if (listed !== undefined) recordListed(word, listed, context);
      if (matched.length > 0) problem ??= `${shown(word)} ${matched[0].effect}`;
    }
    return problem ?? hiddenOption(args, name);
  };
}

/** A program `word` makes the command run: what it writes is only known when it runs. */
function recordRun(word: BashWord, name: string, context: FlagContext): void {
  context.pathOperands?.push({ value: undefined, access: "write", origin: `what ${name} ${shown(word)} runs` });
}

/**
 * Options that hand the program a list of the files to open, in a file or a
 * stream (`sort --files0-from=-`, `file -f list`, `md5sum -c sums`): the
 * names inside are never seen, so they could name any file, denied ones
 * included. So they ask whatever gives the list: a file, `-` (standard
 * input) or `<(...)`; and the files it names are paths only the run knows
 * (`access`: read, or written by the compressors that replace them), which
 * without the sandbox a person must allow.
 */
const FILE_LIST_EFFECT = "opens the files a list names (in a file or a stream), whose names the checker cannot see";

function fileList(options: Omit<OptionSpec, "effect" | "lists">, access: PathAccess = "read"): OptionSpec {
  return { ...options, effect: FILE_LIST_EFFECT, lists: access };
}

/**
 * The files a list names, which only the run knows: before, with the sandbox off and an automatic answer,
 * `printf '/outside/secret\0' > l && sort --files0-from=l` printed the file outside, as `wc`, `du`, `file -f`,
 * `md5sum -c`, `tar -T`, `zip -@` and `find -files0-from` opened what their lists named.
 */
function recordListed(word: BashWord, access: PathAccess, context: FlagContext): void {
  context.pathOperands?.push({ value: undefined, access, origin: `the files the list of ${shown(word)} names` });
}

const FILES0_FROM = fileList({ long: ["files0-from"] });

/**
 * Non-option words, skipping the values of the listed short options and of
 * the listed long options spelled whole (an abbreviation or a cluster leaves
 * its value among the operands, which only ever asks more often).
 */
function operands(
  args: readonly BashWord[],
  optionsWithValue: string,
  longWithValue: readonly string[] = [],
): BashWord[] {
  const result: BashWord[] = [];
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === "--") return [...result, ...args.slice(i + 1)];
    if (value !== undefined && value.startsWith("-") && value !== "-") {
      if (value.length === 2 && optionsWithValue.includes(value[1])) i++;
      else if (value.startsWith("--") && longWithValue.includes(value.slice(2))) i++;
      continue;
    }
    result.push(args[i]);
  }
  return result;
}

const uniqRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const files = operands(args, "fsw");
  const several = files.find(mayBeSeveralWords);
  if (several !== undefined) return `${shown(several)} may expand to several files, and uniq writes to its second file`;
  return files.length > 1 ? `${shown(files[1])} is uniq's output file, which it writes` : undefined;
};

/**
 * diff's `--to-file` and `--from-file` name a folder to compare every operand with; a pattern that expands into one
 * names the folder it matches in, or `..` (a file named `--to-file=..`), which the path check never sees.
 */
const diffRule: Rule = (args, name, context) => {
  const end = args.findIndex((arg) => arg.value === "--");
  const word = args.slice(0, end < 0 ? undefined : end).find((arg) => arg.value === undefined && arg.mayBeOption);
  if (word !== undefined) {
    return `${
      shown(word)
    } could expand into an option of diff, such as \`--to-file=..\`, which compares with a folder it names`;
  }
  return DIFF_PAGINATES(args.slice(0, end < 0 ? undefined : end), name, context);
};

/** diff's `-l` (`--paginate`) pipes its output through /usr/bin/pr, a program the allowlist does not hold. */
const DIFF_PAGINATES: Rule = optionRule({
  short: "l",
  long: ["paginate"],
  effect: "makes diff start pr, a program not on the allowlist, to paginate its output",
});

const teeRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const file = operands(args, "").find((arg) => arg.value !== "/dev/null");
  return file === undefined ? undefined : `${shown(file)} is a file tee writes`;
};

const SED_OPTIONS: GetoptSpec = {
  program: "sed",
  short: {
    n: "none",
    e: "required",
    f: "required",
    i: "optional",
    l: "required",
    E: "none",
    r: "none",
    s: "none",
    u: "none",
    z: "none",
    b: "none",
  },
  long: {
    quiet: "none",
    silent: "none",
    debug: "none",
    expression: "required",
    file: "required",
    "follow-symlinks": "none",
    "in-place": "optional",
    "line-length": "required",
    posix: "none",
    "regexp-extended": "none",
    separate: "none",
    sandbox: "none",
    unbuffered: "none",
    "null-data": "none",
    "zero-terminated": "none",
    binary: "none",
    help: "none",
    version: "none",
  },
};

/** A sed command as reasons name it. */
function sedCommandNamed(command: string): string {
  return command.startsWith("s///") ? `an s command with the e or w flag (\`${command}\`)` : `the ${command} command`;
}

/** The names GNU sed gives its standard streams in `r`, `R`, `w` and `W`. */
const SED_STANDARD_STREAMS = ["/dev/stdin", "/dev/stdout", "/dev/stderr"];

/**
 * sed as GNU sed reads its arguments: the scripts of `-e` (or the first
 * operand), read by {@linkcode readSedScript}; `-f` script files (recorded,
 * and asking since their content is not seen); `-i` (writes its operands);
 * the input files (recorded as reads). A script that runs programs (`e`,
 * `s///e`) or writes files (`w`, `W`, `s///w`, except to standard output or
 * error) asks; the files `r` and `R` read are recorded for the path rules.
 * With `--sandbox` sed refuses every such command before running any.
 */
/**
 * The name GNU sed's `-iSUFFIX` keeps a file's old content under: the file's name with the suffix, or with a `*` in
 * it, the suffix with each `*` the file's base name (in the file's folder unless it names a folder of its own).
 */
function backupName(file: string | undefined, suffix: string | null): string | undefined {
  if (file === undefined || suffix === null) return undefined;
  if (!suffix.includes("*")) return `${file}${suffix}`;
  const slash = file.lastIndexOf("/");
  const name = suffix.replaceAll("*", file.slice(slash + 1));
  return name.includes("/") || slash < 0 ? name : `${file.slice(0, slash + 1)}${name}`;
}

const sedRule: Rule = (args, _name, context) => {
  const reading = readGetopt(args, SED_OPTIONS);
  if (reading.problem !== undefined) return reading.problem;
  const files: PathOperand[] = [];
  const record = (value: string | undefined, access: PathOperand["access"], origin: string) =>
    files.push({ value, access, origin });
  const scripts: BashWord[] = [];
  let problem: string | undefined;
  let inPlace: BashWord | undefined;
  // `-iSUFFIX` keeps each file's old content under a backup name (`sed -irc s/a/b/ .npm` writes `.npmrc`); null when
  // only the run knows the suffix.
  let suffix: string | undefined | null;
  let sandboxed = false;
  let scriptFile = false;
  for (const item of reading.items) {
    if (item.kind !== "option") continue;
    if (item.name === "e" || item.name === "expression") scripts.push(item.valueWord!);
    if (item.name === "f" || item.name === "file") {
      scriptFile = true;
      record(item.value, "read", "sed -f");
      // Its commands are not seen: they may write any file.
      record(undefined, "write", "the sed -f script");
      problem ??= `${shown(item.word)} reads a sed script from a file, whose commands cannot be checked`;
    }
    if (item.name === "i" || item.name === "in-place") {
      inPlace = item.word;
      suffix = item.unknownValue === true ? null : item.value;
    }
    if (item.name === "sandbox") sandboxed = true;
  }
  const operands = reading.items.filter((item) => item.kind === "operand").map((item) => item.word);
  if (scripts.length === 0 && !scriptFile) {
    const script = operands.shift();
    if (script === undefined) return undefined;
    scripts.push(script);
  }
  for (const operand of operands) {
    record(operand.value, inPlace ? "write" : "read", "sed input file");
    if (inPlace !== undefined && suffix !== undefined && suffix !== "") {
      record(backupName(operand.value, suffix), "write", "the backup sed -i keeps");
    }
  }
  if (inPlace !== undefined) problem ??= `${shown(inPlace)} makes sed edit files in place`;
  const unknownScript = scripts.find((script) => script.value === undefined);
  if (unknownScript !== undefined) {
    record(undefined, "write", "a sed script only known when the command runs");
    recordPaths(files, context);
    return `the sed script ${shown(unknownScript)} is only known when the command runs`;
  }
  const script = readSedScript(scripts.map((word) => word.value!));
  const shownScript = scripts.map(shown).join(" ");
  if (script.problem !== undefined) return `the sed script ${shownScript} ${script.problem}`;
  // sed --sandbox refuses the whole script when it has any of these commands.
  if (sandboxed) {
    const outside = recordPaths(files, context);
    return problem ?? outside;
  }
  for (const effect of script.effects) {
    if (effect.access === "run") {
      problem ??= `the sed script ${shownScript} uses ${sedCommandNamed(effect.command)}, which runs a command`;
      // What the command writes is not known.
      record(undefined, "write", `sed script \`${effect.command}\``);
      continue;
    }
    // The standard streams are no files: sed reads or writes the ones it was given.
    if (SED_STANDARD_STREAMS.includes(effect.file)) continue;
    record(effect.file, effect.access, `sed script \`${effect.command}\``);
    if (effect.access === "write") {
      problem ??= `the sed script ${shownScript} uses ${
        sedCommandNamed(effect.command)
      }, which writes \`${effect.file}\``;
    }
  }
  const outside = recordPaths(files, context);
  return problem ?? outside;
};

const tarOptions = optionRule(
  {
    short: "cxruA",
    long: ["create", "extract", "get", "append", "update", "catenate", "concatenate", "delete"],
    effect: "makes tar write files or run a program",
  },
  {
    short: "IF",
    long: [
      "to-command",
      "use-compress-program",
      "checkpoint-action",
      "info-script",
      "new-volume-script",
      "rsh-command",
    ],
    effect: "makes tar write files or run a program",
    runs: true,
  },
  // GNU tar also reads options from the list, unless --verbatim-files-from.
  fileList({ short: "T", long: ["files-from"] }),
);

/**
 * The archive names of tar's and cpio's options (`letters` take one: tar's `f`, cpio's `F`, `I`, `O`; `--file`), the
 * first word's cluster of tar's too (`tar tf h:a`): a name with a `:` before any `/` is `[user@]host:file`, which GNU tar
 * and cpio read or write through a remote shell they run (`/usr/bin/rsh host /usr/sbin/rmt`), unless
 * `--force-local`.
 */
function remoteArchive(args: readonly BashWord[], letters: string, bundled: boolean): BashWord | undefined {
  if (args.some((arg) => arg.value !== undefined && arg.value.length > 8 && "--force-local".startsWith(arg.value))) {
    return undefined;
  }
  const names: (BashWord | undefined)[] = [];
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === undefined || value === "--") break;
    if (value.startsWith("--")) {
      const [option, ...rest] = value.slice(2).split("=");
      if (option === "file") names.push(rest.length > 0 ? { ...args[i], value: rest.join("=") } : args[i + 1]);
      continue;
    }
    const cluster = value.startsWith("-") ? value.slice(1) : i === 0 && bundled ? value : "";
    for (let at = 0; at < cluster.length; at++) {
      if (!letters.includes(cluster[at])) continue;
      names.push(at + 1 < cluster.length ? { ...args[i], value: cluster.slice(at + 1) } : args[i + 1]);
      break;
    }
  }
  return names.find((word) => word?.value !== undefined && /^[^/]*:/.test(word.value));
}

const REMOTE_ARCHIVE = "names a remote archive (`host:file`), which it reaches by running a remote shell";

const tarRule: Rule = (args, name, context) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const remote = remoteArchive(args, "f", true);
  if (remote !== undefined) {
    recordRun(remote, name, context);
    return `${shown(remote)} ${REMOTE_ARCHIVE}`;
  }
  const first = args[0]?.value ?? "";
  // `tar xf a.tar`, `tar tT list`: the first word is a cluster of options without a dash.
  let cluster: string | undefined;
  if (first !== "" && !first.startsWith("-")) {
    // `tar cIf PROG a.tar .`: the cluster's `I` and `F` take a program too.
    if (/[IF]/.test(first)) recordRun(args[0], name, context);
    if (first.includes("T")) recordListed(args[0], "read", context);
    if (/[cxruA]/.test(first)) cluster = `${shown(args[0])} makes tar write files`;
    else if (first.includes("T")) cluster = `${shown(args[0])} (\`T\`) ${FILE_LIST_EFFECT}`;
  }
  // The options after the cluster are read all the same: the programs they run and the lists they hand tar are
  // recorded. Before, a cluster that writes ended the reading, and with the sandbox off an automatic answer let
  // `tar cf x.tar --checkpoint-action=exec=CMD a` and `tar cf x.tar -I CMD a` run CMD on the host, and
  // `tar cf x.tar -T list` store the files outside the list named.
  const options = tarOptions(args, name, context);
  const dates = recordPaths(tarDates(args), context);
  return cluster ?? options ?? dates;
};

/** tar's letters that take a value (GNU tar's). */
const TAR_VALUED = "bCfFgHIKLNTVX";

/**
 * What the dates of tar's `-N`, `--newer`, `--after-date`, `--newer-mtime` and `--mtime` open: a value starting with `/` or `.`
 * is a file whose time tar takes, any other a date string, which may name a zone file. A long option is matched by
 * any start of it (argp's), and `N` in the first word's cluster without a dash takes a later word, unseen here.
 */
function tarDates(args: readonly BashWord[]): PathOperand[] {
  const files: PathOperand[] = [];
  const record = (value: string | undefined, origin: string) =>
    value !== undefined && (value.startsWith("/") || value.startsWith("."))
      ? files.push({ value, access: "read", origin })
      : files.push(...dateStringFiles(value, origin));
  const first = args[0]?.value;
  if (first !== undefined && !first.startsWith("-") && first.includes("N")) record(undefined, "tar N");
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === undefined || value === "--") break;
    if (value.startsWith("--")) {
      const [given, ...inline] = value.slice(2).split("=");
      const dated = ["newer", "newer-mtime", "after-date", "mtime"];
      if (given.length < 3 || !dated.some((long) => long.startsWith(given))) continue;
      record(inline.length > 0 ? inline.join("=") : args[++i]?.value, `tar --${given}`);
      continue;
    }
    if (!value.startsWith("-")) continue;
    for (let at = 1; at < value.length; at++) {
      if (!TAR_VALUED.includes(value[at])) continue;
      const rest = value.slice(at + 1);
      const taken = rest !== "" ? rest : args[++i]?.value;
      if (value[at] === "N") record(taken, "tar -N");
      break;
    }
  }
  return files;
}

const testOperators = optionRule({
  exact: ["-v", "-R"],
  effect: "tests a variable by name, which evaluates array subscripts that can run commands",
  runs: true,
});

const BINARY_TEST_OPERATORS = new Set([
  "=",
  "==",
  "!=",
  "<",
  ">",
  "-eq",
  "-ne",
  "-lt",
  "-le",
  "-gt",
  "-ge",
  "-nt",
  "-ot",
  "-ef",
  "-a",
  "-o",
]);

/** A word known only at run time that stays one word (fully double-quoted). */
function quotedDynamic(word: BashWord): boolean {
  return word.value === undefined && /^"(?:[^"\\]|\\.)*"$/s.test(word.text);
}

/**
 * `test` and `[`: `-v` and `-R` ask. A word known only at run time could
 * become `-v` before another argument, so it asks unless bash's rules by
 * argument count make it an operand whatever it holds: fully double-quoted
 * (one word), and last, or around a static binary operator in the
 * three-argument form (`[ "$(uname)" = Linux ]`, also after `!`).
 */
const testRule: Rule = (args, name, context) => {
  const operands = name === "[" && args.at(-1)?.value === "]" ? args.slice(0, -1) : args;
  const safe = new Set<BashWord>();
  const last = operands.at(-1);
  if (last !== undefined && quotedDynamic(last)) safe.add(last);
  const binary = (at: number) => BINARY_TEST_OPERATORS.has(operands[at]?.value ?? "");
  const unsplit = operands.every((word) => word.value !== undefined || quotedDynamic(word));
  if (unsplit && operands.length === 3 && binary(1)) safe.add(operands[0]);
  if (unsplit && operands.length === 4 && operands[0].value === "!" && binary(2)) safe.add(operands[1]);
  return testOperators(args.filter((arg) => !safe.has(arg)), name, context);
};

/**
 * Whether an option word of date sets the clock: `--set` or an abbreviation
 * of it, or `-s` in a cluster, unless a letter before it takes the rest as its
 * value (`-Iseconds` is `-I seconds`).
 */
function setsClock(option: string): boolean {
  if (option.startsWith("--")) {
    const given = option.slice(2).split("=", 1)[0];
    return given !== "" && "set".startsWith(given);
  }
  for (const letter of option.slice(1)) {
    if (letter === "s") return true;
    if ("dfrI".includes(letter)) return false;
  }
  return false;
}

/**
 * The word with which date's words set the system clock, if one may: `-s`/`--set` (`operand` false), or an operand
 * that is not a `+FORMAT` (one only known when it runs may be any). Options after one getopt does not know are not
 * read (date refuses them).
 */
export function clockSetter(args: readonly BashWord[]): { word: BashWord; operand: boolean } | undefined {
  const set = args.find((word) => word.value?.startsWith("-") && setsClock(word.value));
  if (set !== undefined) return { word: set, operand: false };
  const operand = readGetopt(args, DATE_OPTIONS).items.find((item) =>
    item.kind === "operand" && item.word.value?.startsWith("+") !== true
  );
  return operand === undefined ? undefined : { word: operand.word, operand: true };
}

/** GNU date's options, as it hands them to getopt_long. */
const DATE_OPTIONS: GetoptSpec = {
  program: "date",
  short: { d: "required", f: "required", I: "optional", r: "required", R: "none", s: "required", u: "none" },
  long: {
    date: "required",
    debug: "none",
    file: "required",
    "iso-8601": "optional",
    reference: "required",
    resolution: "none",
    "rfc-email": "none",
    "rfc-822": "none",
    "rfc-2822": "none",
    "rfc-3339": "required",
    set: "required",
    uct: "none",
    universal: "none",
    utc: "none",
    help: "none",
    version: "none",
  },
};

/**
 * date: `-s` and `--set` set the clock, and so does an operand that is not a
 * `+FORMAT` (`date 010203042030`: MMDDhhmm[[CC]YY][.ss], in GNU's date and
 * the BSDs'; a word known only at run time may be one). The values of
 * `-d`, `-f` and `-r` are no operands. A date of `-d` may open a file
 * (`TZ="/x/y" now`): recorded as read. `-f` reads its dates from a file or
 * a stream, whose `TZ="..."` nobody sees: it asks.
 */
const dateRule: Rule = (args, name, context) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const setter = clockSetter(args);
  if (setter !== undefined && !setter.operand) return `${shown(setter.word)} sets the system clock`;
  const reading = readGetopt(args, DATE_OPTIONS);
  if (reading.problem !== undefined) return reading.problem;
  if (setter !== undefined) {
    return `${shown(setter.word)} is not known to be a +FORMAT, and date sets the system clock to any other operand`;
  }
  const files: PathOperand[] = [];
  for (const item of reading.items) {
    if (item.kind === "operand") continue;
    if (item.name === "d" || item.name === "date") {
      files.push(...dateStringFiles(item.value, item.name === "d" ? "date -d" : "date --date"));
    }
    if (item.name === "f" || item.name === "file") {
      return `${shown(item.word)} makes date read its dates from a file or a stream, and a date's \`TZ="FILE"\` ` +
        "opens any FILE as a time zone, which the checker cannot see; give the dates with `-d`";
    }
  }
  return recordPaths(files, context);
};

/** GNU touch's options, as it hands them to getopt_long. */
const TOUCH_OPTIONS: GetoptSpec = {
  program: "touch",
  short: { a: "none", c: "none", d: "required", f: "none", h: "none", m: "none", r: "required", t: "required" },
  long: {
    time: "required",
    date: "required",
    reference: "required",
    "no-create": "none",
    "no-dereference": "none",
    help: "none",
    version: "none",
  },
};

/** touch (a policy file may allow it): the date of `-d` may open a zone file (`TZ="/x/y" now`), recorded as read. */
const touchRule: Rule = (args, name, context) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const reading = readGetopt(args, TOUCH_OPTIONS);
  if (reading.problem !== undefined) return reading.problem;
  const files = reading.items.flatMap((item) =>
    item.kind === "option" && (item.name === "d" || item.name === "date")
      ? dateStringFiles(item.value, item.name === "d" ? "touch -d" : "touch --date")
      : []
  );
  return recordPaths(files, context);
};

const fileOptions = optionRule(
  {
    short: "Cp",
    long: ["compile", "preserve-date"],
    effect: "makes file write a compiled magic file or reset file times",
  },
  {
    // As `rg -z` does: gzip, lz4, xz and their kin, found on PATH.
    short: "zZ",
    long: ["uncompress", "uncompress-noreport"],
    effect: "makes file run decompression programs",
  },
  fileList({ short: "f", long: ["files-from"] }),
);

/** file's short options that take a value (`-e`, `-F`, `-P`, `-f` and `-m`). */
const FILE_VALUED_LETTERS = "eFPfm";

/**
 * The magic files of `-m` and `--magic-file`: a list separated by `:`, each
 * read (`file -m a:/etc/passwd a` reads /etc/passwd and prints its lines in
 * its warnings), recorded for the path rules.
 */
function magicFiles(args: readonly BashWord[], context: FlagContext): string | undefined {
  const lists: BashWord[] = [];
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === "--") break;
    if (value === undefined || !value.startsWith("-") || value === "-") continue;
    if (value.startsWith("--")) {
      const [given, ...inline] = value.slice(2).split("=");
      // getopt takes any unique prefix; `--m` is ambiguous and fails, which asking costs nothing.
      if (given === "" || !"magic-file".startsWith(given)) continue;
      if (inline.length > 0) lists.push({ ...args[i], value: inline.join("=") });
      else if (args[i + 1] !== undefined) lists.push(args[++i]);
      continue;
    }
    for (let letter = 1; letter < value.length; letter++) {
      if (!FILE_VALUED_LETTERS.includes(value[letter])) continue;
      const rest = value.slice(letter + 1);
      const list = rest !== "" ? { ...args[i], value: rest } : args[++i];
      if (value[letter] === "m" && list !== undefined) lists.push(list);
      break;
    }
  }
  const files = lists.flatMap((list): PathOperand[] =>
    list.value === undefined
      ? [{ value: undefined, access: "read" as const, origin: "file -m" }]
      : list.value.split(":").filter((piece) => piece !== "").map((piece) => ({
        value: piece,
        access: "read" as const,
        origin: "file -m",
      }))
  );
  return recordPaths(files, context);
}

/** file: options that write or run decompressors ask; the magic files of `-m` are judged as paths. */
const fileRule: Rule = (args, name, context) => fileOptions(args, name, context) ?? magicFiles(args, context);

/** find, read by {@linkcode readFindExpression}: its files recorded, its commands, deletes and writes asking. */
const findRule: Rule = (args, _name, context) => {
  const reading = readFindExpression(args);
  const outside = recordPaths(reading.files, context);
  return reading.problem ?? outside;
};

/** awk, gawk, mawk and nawk, read by {@linkcode awkCommandProblem}. */
export const awkRule: Rule = (args, name, context) => {
  const files: PathOperand[] = [];
  const problem = awkCommandProblem(args, name, files);
  const outside = recordPaths(files, context);
  return problem ?? outside;
};

/** jq, read by {@linkcode jqCommandProblem}. */
export const jqRule: Rule = (args, _name, context) => {
  const files: PathOperand[] = [];
  const problem = jqCommandProblem(args, files);
  const outside = recordPaths(files, context);
  return problem ?? outside;
};

/**
 * tail: following by name (`-F`, `--follow=name`, `--retry`) opens each file
 * again whenever its name appears or is replaced, for as long as tail runs: it
 * reads whatever the name leads to then, which no judgement before the start
 * sees. A background `tail -F n` of a name that did not exist yet read the file
 * outside the workspace a link at `n` led to once the copy tool put one there
 * (with no sandbox and nobody to ask). `tail -f` follows the file it opened.
 */
function followsByName(value: string): boolean {
  if (value.startsWith("--")) {
    const [given, ...rest] = value.slice(2).split("=");
    if (given !== "" && "retry".startsWith(given)) return true;
    const mode = rest.join("=");
    return given !== "" && "follow".startsWith(given) && mode !== "" && "name".startsWith(mode);
  }
  // A cluster: `-F`, or a letter after `-n`, `-c`, `-s` that take a value is that value (`-n5F` is not -F, GNU reads
  // `5F` as the count and fails), which asking costs nothing.
  return value.startsWith("-") && value.slice(1).includes("F");
}

const tailRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  for (const word of args) {
    if (word.value === "--") break;
    if (word.value !== undefined && followsByName(word.value)) {
      return `${shown(word)} makes tail open its files again by name as they appear or are replaced, reading ` +
        "whatever a name leads to then (a link to a file outside the workspace too); `tail -f` follows the file it opened";
    }
  }
  return undefined;
};

/**
 * What zip reads when it takes the names from the archive: a stored name leads anywhere, `../outside/secret` or
 * `lnk/f` (until 2026-12-06, with an allow rule for zip and the sandbox off, `zip -f x.zip` and `zip -u x.zip` stored
 * the file outside an archive's `../outside/secret` names on an automatic answer).
 */
const ZIP_ARCHIVE_LIST = "reads again the files the archive names, whose stored names the checker cannot see";

/**
 * zip: `-T` runs unzip, or what `-TT CMD` names; `-@` (`--names-stdin`) takes the names of the files it stores
 * from standard input (`printf '/etc/shadow\n' | zip -0 - -@` prints the file).
 * `-f`, `-FS` and `-u` take them from the archive.
 */
const ZIP_OPTIONS: Rule = optionRule(
  { short: "T", long: ["test", "unzip-command"], effect: "makes zip run a program", runs: true },
  fileList({ short: "@", long: ["names-stdin"] }),
  // Freshening and syncing read again every file the archive names by its stored name.
  { ...fileList({ short: "f", long: ["freshen", "filesync"], exact: ["-FS"] }), effect: ZIP_ARCHIVE_LIST },
);

/** zip's options that take the next word; `-i` and `-x` take every word up to the next option. */
const ZIP_VALUED = "bnPZstO";

const ZIP_RULE: Rule = (args, name, context) => {
  const problem = ZIP_OPTIONS(args, name, context);
  // `-u` without names to add updates every entry from the file its stored name names (with names, only those).
  const update = args.find((word) =>
    word.value !== undefined && matchesOption(word.value, { short: "u", long: ["update"], effect: ZIP_ARCHIVE_LIST })
  );
  const lists = args.some((word) => word.value !== undefined && /^-[^-]*[ix]/.test(word.value));
  if (update === undefined || (!lists && operands(args, ZIP_VALUED).length > 1)) return problem;
  recordListed(update, "read", context);
  return problem ?? `${shown(update)} ${ZIP_ARCHIVE_LIST}`;
};

/**
 * libarchive's tar: `--use-compress-program` runs a program, and `-T` (`-I`, `--files-from`) takes the names of the
 * files it stores or extracts from a list.
 */
const bsdtarOptions: Rule = optionRule(
  { long: ["use-compress-program"], effect: "makes bsdtar run a program", runs: true },
  fileList({ short: "TI", long: ["files-from"] }),
);

/**
 * bsdtar's rule: its options, and each word `@ARCHIVE`, an archive whose entries it copies into the one it creates,
 * appends to or updates, read as the file it names. Before, the word was judged as a file named `@...` of the
 * workspace: with an allow rule for bsdtar and the sandbox off, `bsdtar cf - @../outside/y.tar` printed the entries
 * of an archive outside on no question.
 */
const BSDTAR_RULE: Rule = (args, name, context) => {
  const archives: PathOperand[] = args
    .filter((word) => (word.value ?? word.text).startsWith("@"))
    .map((word) => ({
      value: word.value?.slice(1),
      access: "read",
      origin: `the archive bsdtar ${shown(word)} copies`,
    }));
  const outside = recordPaths(archives, context);
  return bsdtarOptions(args, name, context) ?? outside;
};

/** The rules for text and file tools, by program name. */
export const TEXT_RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ["find", findRule],
  [
    "sort",
    optionRule(
      { short: "o", long: ["output"], effect: "makes sort write a file or run a program" },
      { long: ["compress-program"], effect: "makes sort write a file or run a program", runs: true },
      FILES0_FROM,
    ),
  ],
  ["wc", optionRule(FILES0_FROM)],
  ["tail", tailRule],
  ["du", optionRule(FILES0_FROM)],
  [
    "rg",
    optionRule(
      // -z runs gzip, xz, bzip2 and friends on compressed files (found by the oracle).
      { short: "z", long: ["search-zip"], effect: "makes ripgrep run a program" },
      { long: ["pre", "hostname-bin"], effect: "makes ripgrep run a program", runs: true },
    ),
  ],
  ["uniq", uniqRule],
  ["tee", teeRule],
  ["diff", diffRule],
  ["tree", optionRule({ short: "oR", long: ["output"], effect: "makes tree write files" })],
  // `split --filter=CMD` hands each piece to `sh -c CMD`; `zip -T` runs unzip, or what `-TT CMD` names.
  ["split", optionRule({ long: ["filter"], effect: "makes split run a shell command", runs: true })],
  ["zip", ZIP_RULE],
  // Compressors that take the names of the files they compress, decompress and remove from a list: `xz --files`
  // (standard input without a value), `--files0`, `zstd --filelist LIST`.
  ...["xz", "unxz", "xzcat", "lzma", "unlzma", "lzcat"].map((name) =>
    [name, optionRule(fileList({ long: ["files", "files0"] }, "write"))] as const
  ),
  ...["zstd", "unzstd", "zstdcat", "zstdmt"].map((name) =>
    [name, optionRule(fileList({ long: ["filelist"] }, "write"))] as const
  ),
  ["bsdtar", BSDTAR_RULE],
  // `rsync -e CMD` runs CMD to reach the other side, even for a host that does not exist; `--rsync-path` and
  // `-M` (`--remote-option`) change the program or options of the other side, which for a local copy runs here.
  // A path of another host (`host:path`, `host::module`, `rsync://host/`) is reached through ssh or rsync's daemon
  // protocol: `rsync a u@h:` runs ssh and sends a file, which the path check took for a local name.
  ["rsync", (args, name, context) => {
    const problem = optionRule(
      {
        short: "eM",
        long: ["rsh", "rsync-path", "remote-option", "daemon", "config"],
        effect: "makes rsync run a program",
        runs: true,
      },
      fileList({ long: ["files-from"] }),
    )(args, name, context);
    const remote = args.find((arg) =>
      arg.value !== undefined && !arg.value.startsWith("-") && /^[^/]*:|^rsync:\/\//i.test(arg.value)
    );
    if (remote === undefined) return problem;
    recordRun(remote, name, context);
    return problem ??
      `${shown(remote)} names a path on another host, which rsync reaches over the network (through ssh)`;
  }],
  ["cpio", (args, name, context) => {
    const remote = remoteArchive(args, "FIO", false);
    if (remote !== undefined) {
      recordRun(remote, name, context);
      return `${shown(remote)} ${REMOTE_ARCHIVE}`;
    }
    return optionRule(
      { long: ["rsh-command"], effect: "makes cpio run a program", runs: true },
      // Copy-out (`-o`) and copy-pass (`-p`) take the names of the files they copy from standard input.
      fileList({ short: "op", long: ["create", "pass-through"] }),
    )(args, name, context);
  }],
  ["file", fileRule],
  // `-c SUMS` reads every file SUMS names, and tells whether it has the checksum given.
  ...["md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "shasum"].map(
    (name) => [name, optionRule(fileList({ short: "c", long: ["check"] }))] as const,
  ),
  ["date", dateRule],
  ["touch", touchRule],
  // A subscript in the name printf -v assigns is evaluated: what a command substitution there runs, the run knows.
  ["printf", optionRule({ short: "v", effect: "assigns a shell variable", runs: true })],
  ["test", testRule],
  ["[", testRule],
  ["sed", sedRule],
  ["tar", tarRule],
  ["awk", awkRule],
  ["gawk", awkRule],
  ["mawk", awkRule],
  ["nawk", awkRule],
]);
