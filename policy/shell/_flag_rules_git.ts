/**
 * The flag rule for git. Global options before the subcommand must be known
 * to be harmless. The listing subcommands (`branch`, `tag`, `remote`,
 * `stash list`, `config --get`) accept only their listing options, since
 * other options and operands create, delete or change things. The other
 * subcommands (`log`, `diff`, `show`, ...) ask for the options that write
 * files or switch on programs from the configuration (`--output`,
 * `--ext-diff`, `--textconv`, `--show-signature`, `-O`, signature formats),
 * matched loosely: git accepts any unique prefix of a long option.
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import {
  type FlagContext,
  flags,
  type GetoptArgument,
  hiddenOptionReason,
  mayBeSeveralWords,
  type OptionDef,
  type OptionGrammar,
  type OptionReading,
  readGetopt,
  readOptions,
  recordPaths,
  shown,
  type ValueCheck,
  valued,
} from "./_options.ts";
import type { Rule } from "./_flag_rules_runners.ts";
import { GIT_OPTIONS } from "./_git_options.ts";
import type { PathOperand } from "./_path_operands.ts";

/** Global options that change nothing but output and path matching. */
export const GIT_HARMLESS_GLOBAL_OPTIONS: readonly string[] = Object.freeze([
  "-P",
  "--no-pager",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--no-optional-locks",
  "--no-replace-objects",
  "--no-lazy-fetch",
  "--no-advice",
]);

/** The words of a git command after its harmless global options: the subcommand first. */
export function gitSubcommandWords(args: readonly string[]): readonly string[] {
  let index = 0;
  while (index < args.length && GIT_HARMLESS_GLOBAL_OPTIONS.includes(args[index])) index++;
  return args.slice(index);
}

const GLOBAL_DANGER = /^(-c|-C|--config-env|--exec-path=|--git-dir|--work-tree)/;

// Loose matching: `--out` is git's abbreviation of `--output`.
const LONG_DANGER = [
  "output",
  "output-directory",
  "open-files-in-pager",
  "ext-diff",
  "textconv",
  "show-signature",
  "exec",
  "upload-pack",
  "receive-pack",
  "help",
  "recurse-submodules",
  "submodule",
];

/** Options whose exact names are prefixes of dangerous ones. */
const EXACT_HARMLESS = ["text"];

/**
 * Pretty formats, ref formats and sort keys that verify signatures, which runs
 * the configured gpg program (`%G?`, `%(signature)`, `--sort=signature:grade`).
 */
const SIGNATURE_FORMAT = /%G|signature/i;

function looseDanger(word: BashWord): string | undefined {
  const value = word.value!;
  if (SIGNATURE_FORMAT.test(value)) {
    return `${shown(word)} verifies signatures, which runs the program the configuration names (gpg.program)`;
  }
  if (value.startsWith("--") && value.length > 2) {
    const given = value.slice(2).split("=", 1)[0];
    // An option's exact name wins over abbreviations: `--text` is not `--textconv`.
    if (given !== "" && !EXACT_HARMLESS.includes(given) && LONG_DANGER.some((long) => long.startsWith(given))) {
      return `${shown(word)} lets git write a file or start a program the configuration or attributes name`;
    }
    if (given !== "" && "pathspec-from-file".startsWith(given)) {
      return `${
        shown(word)
      } makes git read its paths from a list (a file or a stream), whose names the checker cannot see`;
    }
  } else if (/^-[^-]/.test(value) && value.includes("O")) {
    return `${shown(word)} (\`-O\`) makes git read an order file or start a pager program`;
  }
  return undefined;
}

const noSignature: ValueCheck = (_word, value) =>
  SIGNATURE_FORMAT.test(value) ? "verifies signatures, which runs the configured gpg program" : undefined;
const anyValue: OptionDef = { value: "optional" };
const format: OptionDef = { value: "required", check: noSignature };

const LISTING_FILTERS = {
  ...valued("contains no-contains merged no-merged points-at"),
  sort: { value: "required", check: noSignature } satisfies OptionDef,
};

const branch: OptionGrammar = {
  program: "git branch",
  short: flags("a r v q i l"),
  long: {
    ...flags("all remotes verbose quiet ignore-case list show-current no-color no-column no-abbrev omit-empty"),
    ...LISTING_FILTERS,
    color: anyValue,
    abbrev: anyValue,
    format,
  },
};

const tag: OptionGrammar = {
  program: "git tag",
  optionalShortValue: "attached",
  short: { ...flags("l i"), n: anyValue },
  long: {
    ...flags("list ignore-case no-color no-column omit-empty"),
    ...LISTING_FILTERS,
    color: anyValue,
    format,
  },
};

const stashList: OptionGrammar = {
  program: "git stash list",
  short: { n: { value: "required" } },
  long: {
    ...flags("oneline no-color abbrev-commit no-abbrev-commit reverse"),
    ...valued("max-count date since until after before grep author"),
    color: anyValue,
    format,
    pretty: format,
  },
  operand: () => "is not a `git stash list` option known to be harmless",
};

const config: OptionGrammar = {
  program: "git config",
  short: flags("l z"),
  long: {
    ...flags(
      "get get-all get-regexp get-urlmatch list local global system worktree show-origin show-scope name-only " +
        "null includes no-includes bool int bool-or-int path expiry-date all regexp fixed-value",
    ),
    ...valued("type default value url"),
  },
};

/** The file `git config -f F` (`--file F`, `--file=F`, `-fF`, abbreviated `--fi F`) names, the last one given. */
function configFile(args: readonly BashWord[]): BashWord | undefined {
  let file: BashWord | undefined;
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === undefined) continue;
    if (value === "--") break;
    const long = /^--(fi|fil|file)(=|$)/.exec(value);
    if (value === "-f" || (long !== null && long[2] === "")) file = args[i + 1];
    else if (long !== null) file = { text: value, value: value.slice(long[0].length), mayBeOption: false };
    else if (/^-[lz]*f./.test(value)) {
      file = { text: value, value: value.slice(value.indexOf("f") + 1), mayBeOption: false };
    }
  }
  return file;
}

// git 2.46's subcommands that change the configuration (`get` and `list` only read).
const CONFIG_WRITERS = ["set", "unset", "rename-section", "remove-section", "edit"];
const READ_MODES = ["--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l"];

/** Judges a listing subcommand; `undefined` when it only lists. */
function listing(sub: string, args: readonly BashWord[], context: FlagContext): string | undefined {
  const read = (grammar: OptionGrammar, words = args) => readOptions(words, grammar, context);
  if (sub === "branch" || sub === "tag") {
    const reading = readAsGit(sub, args, sub === "branch" ? branch : tag, context);
    if (reading.problem !== undefined) return reading.problem;
    const operand = reading.operands[0];
    if (operand !== undefined && !reading.seen.has("--list") && !reading.seen.has("-l")) {
      return `${shown(operand)} makes \`git ${sub}\` create a ${sub} (only \`git ${sub} --list PATTERN\` lists)`;
    }
    return undefined;
  }
  if (sub === "stash") {
    // `git stash show` is a diff: judged like one (and needs the sandbox, as diffs do).
    if (args[0]?.value === "show") return looseProblem(args.slice(1));
    if (args[0]?.value !== "list") {
      const what = args[0] === undefined ? "`git stash`" : `\`git stash ${args[0].text}\``;
      return `${what} changes the stash or the working tree (only \`git stash list\` and \`git stash show\` run without asking)`;
    }
    return read(stashList, args.slice(1)).problem;
  }
  if (sub === "config") {
    // `git config -f F` reads and may change F (`git config -f .npmrc a.b c` writes .npmrc): judged as written, and
    // the option, not one known to be harmless, asks.
    const given = configFile(args);
    if (given !== undefined) {
      context.pathOperands?.push({ value: given.value, access: "write", origin: "git config -f" });
    }
    const reading = read(config);
    if (reading.problem !== undefined) return reading.problem;
    // The file a changing `git config` writes, judged as written: the repository's, unless another scope is named
    // (the user's and the system's lie outside the workspace, where the line asks anyway).
    const writes = (why: string) => {
      const elsewhere = reading.seen.has("--global") || reading.seen.has("--system");
      const file = reading.seen.has("--worktree") ? ".git/config.worktree" : ".git/config";
      if (!elsewhere) context.pathOperands?.push({ value: file, access: "write", origin: "git config" });
      return why;
    };
    const style = reading.operands[0]?.value;
    if (style !== undefined && CONFIG_WRITERS.includes(style)) {
      return writes(`\`git config ${style}\` changes the configuration or opens an editor`);
    }
    // The subcommands `get` and `list` of git 2.46 read their own options after them (an older git takes `get` or
    // `list` for a key without a section and fails).
    const readingSubcommand = style === "get" || style === "list";
    // Otherwise git config reads options only before its first operand (its parser stops there): in
    // `git config x.y z --list` and `git config x.y --get`, the option is a value it sets.
    const first = readingSubcommand ? undefined : reading.operands[0];
    const late = first && args.slice(args.indexOf(first) + 1).find((word) => word.mayBeOption);
    if (first !== undefined && late !== undefined) {
      return `${shown(late)} comes after \`git config\`'s first operand ${shown(first)}, where git reads it as a ` +
        "value, not an option: it may change the configuration";
    }
    if (readingSubcommand || READ_MODES.some((mode) => reading.seen.has(mode))) return undefined;
    // `git config NAME` reads; a second operand would be the value it sets, and a name not known before the command
    // runs may be two (`git config core.{editor,pager}` sets core.editor).
    const name = reading.operands[0];
    if (reading.operands.length === 1 && mayBeSeveralWords(name)) {
      return writes(`${shown(name)} may expand to a name and a value, which \`git config\` sets`);
    }
    if (reading.operands.length === 1) return undefined;
    return writes(
      "`git config` with a value or without a name, and without `--get`, `--list`, `get` or `list`, may change the configuration",
    );
  }
  return remote(args, context);
}

const remoteOptions: OptionGrammar = { program: "git remote", short: flags("v"), long: flags("verbose") };

/** `git remote [-v]`, `git remote show -n [NAME...]`, `git remote get-url NAME`. */
function remote(args: readonly BashWord[], context: FlagContext): string | undefined {
  // git remote stops reading its own options at the first operand, the subcommand.
  const sub = args.findIndex((arg) => arg.value === undefined || !arg.value.startsWith("-"));
  const leading = readOptions(sub === -1 ? args : args.slice(0, sub), remoteOptions, context);
  if (leading.problem !== undefined || sub === -1) return leading.problem;
  const name = args[sub];
  const rest = args.slice(sub + 1);
  if (name.value === "show") {
    const reading = readOptions(rest, { program: "git remote show", short: flags("n") }, context);
    if (reading.problem !== undefined) return reading.problem;
    if (reading.operands.length > 0 && !reading.seen.has("-n")) {
      return `\`git remote show ${reading.operands[0].text}\` contacts the remote over the network (\`-n\` does not)`;
    }
    return undefined;
  }
  if (name.value === "get-url") {
    return readOptions(rest, { program: "git remote get-url", long: flags("push all") }, context).problem;
  }
  return `\`git remote ${name.text}\` changes the remotes or contacts them (only listing runs without asking)`;
}

/**
 * Reads a subcommand's arguments as git's parse-options does, with the
 * installed git's table of which options take a value (`_git_options.ts`,
 * generated from `git <subcommand> -h`): a required value is the next word
 * whatever it looks like (`--format --list` gives `--format` the value
 * `--list`), a unique prefix names a long option, `--no-NAME` negates one.
 * Then every option must be one `harmless` names, its value passing its check.
 */
function readAsGit(
  sub: string,
  args: readonly BashWord[],
  harmless: OptionGrammar,
  context: FlagContext,
): OptionReading {
  const table = GIT_OPTIONS[sub];
  const long: Record<string, GetoptArgument> = { ...table.long };
  for (const name of Object.keys(table.long)) {
    if (!name.startsWith("no-") && !Object.hasOwn(long, `no-${name}`)) long[`no-${name}`] = "none";
  }
  const reading = readGetopt(args, { program: harmless.program, short: table.short, long });
  const operands: BashWord[] = [];
  const seen = new Set<string>();
  if (reading.problem !== undefined) return { problem: reading.problem, operands, seen };
  for (const item of reading.items) {
    if (item.kind === "operand") {
      operands.push(item.word);
      continue;
    }
    const option = item.name.length === 1 ? `-${item.name}` : `--${item.name}`;
    const table = item.name.length === 1 ? harmless.short : harmless.long;
    const def = table !== undefined && Object.hasOwn(table, item.name) ? table[item.name] : undefined;
    const named = option === item.word.value ? shown(item.word) : `\`${option}\` in ${shown(item.word)}`;
    if (def === undefined) {
      return { problem: `${named} is not an option of ${harmless.program} known to be harmless`, operands, seen };
    }
    seen.add(option);
    if (item.valueWord === undefined || def.check === undefined) continue;
    const problem = item.unknownValue
      ? "is only known when the command runs"
      : def.check(item.valueWord, item.value!, context);
    if (problem !== undefined) {
      return { problem: `the value ${shown(item.valueWord)} of \`${option}\` ${problem}`, operands, seen };
    }
  }
  return { operands, seen };
}

const LISTING = new Set(["branch", "tag", "remote", "stash", "config"]);

/** The flag rule for git. */
export const gitRule: Rule = (args, name, context) => {
  const hidden = args.find((arg) => arg.value === undefined && arg.mayBeOption);
  if (hidden !== undefined) return hiddenOptionReason(hidden, name);
  let index = 0;
  for (; index < args.length && args[index].value?.startsWith("-"); index++) {
    const value = args[index].value!;
    // `--exec-path` alone only prints the path; with a value it moves git's helpers. `--help` alone prints the
    // usage; before a command it opens that command's manual through the viewer the configuration names.
    if (GIT_HARMLESS_GLOBAL_OPTIONS.includes(value) || value === "--exec-path" || value === "--version") continue;
    if (value === "--help" && args.length === 1) continue;
    if (GLOBAL_DANGER.test(value)) {
      return `${shown(args[index])} makes git read another configuration or repository, which can run programs`;
    }
    return `${shown(args[index])} is not a global option of git known to be harmless`;
  }
  const sub = args[index]?.value;
  const rest = args.slice(index + 1);
  if (sub !== undefined && LISTING.has(sub)) return listing(sub, rest, context);
  const problem = looseProblem(rest);
  const outside = recordPaths(filesRead(sub, rest), context);
  return problem ?? outside;
};

/** Options of the reading subcommands whose value is a file git opens (`git blame --contents FILE`). */
const FILE_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  blame: ["--contents", "--ignore-revs-file", "-S"],
  grep: ["-f"],
  "ls-files": ["--exclude-from", "-X"],
};

/**
 * The files a reading subcommand opens beyond the repository: the values of
 * {@linkcode FILE_OPTIONS}, and with `diff --no-index` every operand (two
 * files anywhere, compared).
 */
function filesRead(sub: string | undefined, args: readonly BashWord[]): PathOperand[] {
  const files: PathOperand[] = [];
  const options = sub === undefined ? [] : FILE_OPTIONS[sub] ?? [];
  const noIndex = sub === "diff" && args.some((word) => word.value === "--no-index");
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === "--") {
      if (noIndex) {
        for (const word of args.slice(i + 1)) {
          files.push({ value: word.value, access: "read", origin: "git diff --no-index" });
        }
      }
      break;
    }
    if (value !== undefined && !value.startsWith("-")) {
      if (noIndex) files.push({ value, access: "read", origin: "git diff --no-index" });
      continue;
    }
    if (value === undefined) {
      if (noIndex) files.push({ value, access: "read", origin: "git diff --no-index" });
      continue;
    }
    for (const option of options) {
      const origin = `git ${sub} ${option}`;
      if (value === option) files.push({ value: args[++i]?.value, access: "read", origin });
      else if (option.startsWith("--") && value.startsWith(`${option}=`)) {
        files.push({ value: value.slice(option.length + 1), access: "read", origin });
      } else if (!option.startsWith("--") && !value.startsWith("--") && value.startsWith(option)) {
        files.push({ value: value.slice(2), access: "read", origin });
      }
    }
  }
  return files;
}

/** The options of a reading subcommand (`log`, `diff`, ...) that write files or start programs. */
function looseProblem(args: readonly BashWord[]): string | undefined {
  for (const word of args) {
    if (word.value === undefined) continue;
    if (word.value === "--") break;
    const problem = looseDanger(word);
    if (problem !== undefined) return problem;
  }
  return undefined;
}
