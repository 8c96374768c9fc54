/**
 * The policy file's command rules applied to a command line, through the
 * analysis: every simple command the parser finds (in lists, pipelines,
 * substitutions, subshells) is matched, and so is every command a wrapper
 * the analysis can see inside would run (`env`, `sudo`, `timeout 5`,
 * `xargs`, `nice -n 1`, `bash -c '...'`, `find -exec`, ...), with `git`'s
 * global options (`git -C dir push`) and a path in the command name
 * (`/usr/bin/git`) taken off. A deny rule is never matched by a string
 * prefix on the raw line.
 *
 * Where a deny or ask rule could match a command whose words are only known
 * when it runs (`$cmd push`, `"$(printf git)" push`), or the line is not
 * fully understood, the outcome is `uncertain`: the caller asks a person.
 *
 * @module
 */
import { analyzeBash, type BashAnalysis, type BashSimpleCommand } from "./_tree.ts";
import { COMMAND_RUNNERS, RUNS_SHELL_ESCAPES } from "./_flag_rules.ts";
import { startsShell } from "./_unknown_program.ts";
import { readSedScript } from "./_sed_script.ts";
import { listedName } from "./_program_family.ts";
import { awkMayRunCommands } from "./_awk_program.ts";
import { runsProjectCode } from "./allowlist.ts";
import { type CommandRule, describeRule, type PathRule, PolicyRules } from "../config/rules.ts";

const STRENGTH = { allow: 0, ask: 1, deny: 2 } as const;

/** One rule that matched, and the command it matched. */
export interface CommandRuleMatch {
  /** The rule. */
  rule: CommandRule;
  /** The words it matched (after unwrapping). */
  words: string[];
  /** The simple command as written. */
  text: string;
}

/** What the command rules say about a whole command line. */
export interface CommandRulesVerdict {
  /** The rule in force, when one matched: its decision is the line's. */
  rule?: CommandRule;
  /** What a shadow-mode rule would have decided instead, when stricter. */
  shadow?: CommandRule;
  /** Every match, for explanations. */
  matches: CommandRuleMatch[];
  /** Why a deny or ask rule might match commands that cannot be seen before they run. */
  uncertain: string[];
  /**
   * A word of the line that names a path the policy denies, and the path
   * rule: set by `decideCommand` from the path rules' judgement of every path
   * of the line (see `CommandCheck.paths`).
   */
  deniedPath?: { word: string; rule: PathRule };
  /**
   * Allowlist entries that the allow rules in force add for this line
   * (prefix rules as they are; glob rules as exact entries of the commands
   * they matched).
   */
  allowEntries: string[];
}

const MAX_DEPTH = 4;

// Options of wrappers that take a value in the next word, so that the value
// is not read as the command (`sudo -u root git push`: `root` is no command,
// though reading it as one is harmless: every suffix is tried).
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "su", "runuser"]);
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
const GIT_VALUE_OPTIONS = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
  "--super-prefix",
]);

const STREAM_RUNNERS = new Set(["xargs", "parallel"]);
const AWK_NAMES = new Set(["awk", "gawk", "mawk", "nawk"]);
const STDIN_NAMES = new Set(["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"]);

/**
 * Whether a shell (or `.`/`source`) reads the commands it runs from standard input: a shell without `-c` and without
 * a script operand, or with `-s`, and `.`/`source` of the standard input. Unsure (a word only known at run time)
 * counts as reading it.
 */
function readsCommandsFromStdin(name: string, args: readonly string[], allKnown: boolean): boolean {
  if (name === "." || name === "source") return args.length > 0 && STDIN_NAMES.has(args[0]);
  if (!SHELLS.has(name) || name === "su" || name === "runuser" || name === "busybox") return false;
  let operand: string | undefined;
  for (let at = 0; at < args.length; at++) {
    const word = args[at];
    if (word === "--") continue;
    // `-o NAME`, `+o NAME`, `-O NAME`, `+O NAME`: a shell option's name, no operand.
    if (/^[-+][oO]$/.test(word)) {
      at++;
      continue;
    }
    if (/^-[A-Za-z]*c/.test(word) && !word.startsWith("--")) return false;
    if (/^-[A-Za-z]*s/.test(word) && !word.startsWith("--")) return true;
    if (word.startsWith("-") || word.startsWith("+")) continue;
    operand = word;
    break;
  }
  if (operand === undefined) return allKnown;
  return STDIN_NAMES.has(operand);
}

function basename(word: string): string {
  const slash = word.lastIndexOf("/");
  return slash >= 0 && slash < word.length - 1 ? word.slice(slash + 1) : word;
}

// `git -C x -c a=b --no-pager push` is `git push` to the rules; `-c alias.p=push` given on the line is read too.
function withoutGitGlobals(words: readonly string[]): { words: string[]; aliases: Map<string, string> } {
  const aliases = new Map<string, string>();
  let i = 1;
  while (i < words.length && words[i].startsWith("-")) {
    const option = words[i];
    const value = option === "-c" ? words[i + 1] : option.startsWith("-c") ? option.slice(2) : undefined;
    const alias = value === undefined ? undefined : /^alias\.([^=]+)=([\s\S]*)$/i.exec(value);
    if (alias) aliases.set(alias[1].toLowerCase(), alias[2]);
    if (GIT_VALUE_OPTIONS.has(option)) i += 2;
    else i += 1;
  }
  return { words: ["git", ...words.slice(i)], aliases };
}

// git's own commands; anything else may be an alias from its configuration, which the line does not show.
const GIT_COMMANDS = new Set(
  ("add am annotate apply archimport archive backfill bisect blame branch bugreport bundle cat-file check-attr " +
    "check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column " +
    "commit commit-graph commit-tree config count-objects credential cvsexportcommit cvsimport daemon describe " +
    "diagnose diff diff-files diff-index diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch " +
    "fmt-merge-msg for-each-ref for-each-repo format-patch fsck gc get-tar-commit-id grep gui hash-object help " +
    "http-backend imap-send index-pack init instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo " +
    "mailsplit maintenance merge merge-base merge-file merge-index merge-tree mergetool mktag mktree " +
    "multi-pack-index mv name-rev notes p4 pack-objects pack-redundant pack-refs patch-id prune prune-packed pull " +
    "push quiltimport range-diff read-tree rebase receive-pack reflog refs remote repack replace replay " +
    "request-pull rerere reset restore rev-list rev-parse revert rm scalar send-email send-pack shortlog show " +
    "show-branch show-index show-ref sparse-checkout stage stash status stripspace submodule svn switch " +
    "symbolic-ref tag unpack-file unpack-objects update-index update-ref update-server-info upload-archive " +
    "upload-pack var verify-commit verify-pack verify-tag version whatchanged worktree write-tree").split(" "),
);

// cargo's own commands (`cargo --list` of cargo 1.9x with rustup's clippy, fmt and miri): another one is an alias of
// the project's `.cargo/config.toml` (`[alias] nn = "publish"`) or a plugin, either of which may run a denied command.
const CARGO_COMMANDS = new Set(
  ("add b bench build c check clean clippy config d doc fetch fix fmt generate-lockfile git-checkout help info init " +
    "install locate-project login logout metadata miri new owner package pkgid publish r read-manifest remove report " +
    "rm run rustc rustdoc search t test tree uninstall update vendor verify-project version yank").split(" "),
);

// gh's own commands (and its default alias `co`): another one is an alias (`gh alias set`) or an extension.
const GH_COMMANDS = new Set(
  ("agent-task alias api attestation auth browse cache co codespace completion config copilot extension gist " +
    "gpg-key help issue label org pr preview project release repo ruleset run search secret ssh-key status variable " +
    "workflow").split(" "),
);

/** Programs whose configuration may add subcommands, with their own: see {@linkcode Findings}. */
const CONFIGURABLE_COMMANDS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["cargo", CARGO_COMMANDS],
  ["gh", GH_COMMANDS],
]);

interface Candidate {
  /** Every word: its value, or as written when only known at run time (deny and ask rules may over-match). */
  words: string[];
  /** The words before the first one known only at run time. */
  known: string[];
  /** Whether a word is only known at run time. */
  open: boolean;
  text: string;
  /**
   * Whether it is a spelling the program may read the command as, found by over-reading (global options taken off,
   * npm's abbreviations and aliases): matched against deny and ask rules only, never to allow.
   */
  strictOnly?: boolean;
}

/** A word a CLI reads as an option before its subcommand (`npm -s`, `docker --context=x`, `cargo +nightly`). */
function optionLike(word: string): boolean {
  return word.length > 1 && (word.startsWith("-") || word.startsWith("+"));
}

/**
 * Where the subcommand may start after global options (`npm -w x publish`, `docker -H h rm`, `cargo +nightly
 * publish`): every word after a run of options, each option perhaps followed by its value. Over-reads (a value may
 * be taken for the subcommand), which only makes deny and ask rules match more often.
 */
function afterGlobalOptions(words: readonly string[], knownCount: number): number[] {
  const starts: number[] = [];
  if (words.length < 3 || knownCount < 2 || !optionLike(words[1])) return starts;
  let previousOption = true;
  for (let at = 2; at < knownCount; at++) {
    starts.push(at);
    const word = words[at];
    const previous = words[at - 1];
    if (optionLike(word)) previousOption = true;
    else if (previousOption && previous !== "--" && !previous.includes("=")) previousOption = false;
    else break;
  }
  return starts;
}

// npm 11's commands and aliases (lib/utils/cmd-list.js): npm also takes any unambiguous start of one
// (`npm publ` publishes) and camelCase for kebab-case (`npm installTest`).
const NPM_COMMANDS = (
  "access adduser approve-scripts audit bugs cache ci completion config dedupe deny-scripts deprecate diff dist-tag " +
  "docs doctor edit exec explain explore find-dupes fund get help help-search init install install-ci-test " +
  "install-scripts install-test link ll login logout ls org outdated owner pack ping pkg prefix profile prune " +
  "publish query rebuild repo restart root run sbom search set shrinkwrap stage star stars start stop team test " +
  "token trust undeprecate uninstall unpublish unstar update version view whoami"
).split(" ");
const NPM_ALIASES: Readonly<Record<string, string>> = {
  author: "owner",
  home: "docs",
  issues: "bugs",
  info: "view",
  show: "view",
  find: "search",
  add: "install",
  unlink: "uninstall",
  remove: "uninstall",
  rm: "uninstall",
  r: "uninstall",
  un: "uninstall",
  rb: "rebuild",
  list: "ls",
  ln: "link",
  create: "init",
  i: "install",
  it: "install-test",
  cit: "install-ci-test",
  u: "update",
  up: "update",
  c: "config",
  s: "search",
  se: "search",
  tst: "test",
  t: "test",
  ddp: "dedupe",
  v: "view",
  "run-script": "run",
  "clean-install": "ci",
  "clean-install-test": "install-ci-test",
  x: "exec",
  why: "explain",
  la: "ll",
  verison: "version",
  ic: "ci",
  innit: "init",
  in: "install",
  ins: "install",
  inst: "install",
  insta: "install",
  instal: "install",
  isnt: "install",
  isnta: "install",
  isntal: "install",
  isntall: "install",
  "install-clean": "ci",
  "isntall-clean": "ci",
  hlep: "help",
  "dist-tags": "dist-tag",
  upgrade: "update",
  udpate: "update",
  rum: "run",
  sit: "install-ci-test",
  urn: "run",
  ogr: "org",
  "add-user": "adduser",
};

/**
 * The npm commands `word` may name besides itself: its alias, or every command and alias it is the start of
 * (npm runs the one it is the unambiguous start of; an ambiguous one fails, and reading it as each only over-matches).
 */
function npmCommandsNamed(word: string): string[] {
  const kebab = word.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
  if (NPM_COMMANDS.includes(kebab)) return kebab === word ? [] : [kebab];
  if (Object.hasOwn(NPM_ALIASES, kebab)) return [NPM_ALIASES[kebab]];
  if (kebab === "" || kebab.startsWith("-")) return [];
  const named = new Set<string>();
  for (const name of [...NPM_COMMANDS, ...Object.keys(NPM_ALIASES)]) {
    if (name.startsWith(kebab)) named.add(Object.hasOwn(NPM_ALIASES, name) ? NPM_ALIASES[name] : name);
  }
  return [...named];
}

/** The word lists a simple command may run as, unwrapped. */
async function candidates(command: BashSimpleCommand, depth: number, findings: Findings): Promise<Candidate[]> {
  const words = command.words.map((word) => word.value ?? word.text);
  const firstDynamic = command.words.findIndex((word) => word.value === undefined);
  return await expand(words, firstDynamic < 0 ? words.length : firstDynamic, command.text, depth, findings);
}

// What expanding a command finds besides candidates: reasons for uncertainty, and subcommands that are not the
// program's own, so may be aliases its configuration defines (git's `alias.x`, cargo's `[alias]`, `gh alias set`),
// which a deny or ask rule for that program cannot see through.
interface Findings {
  uncertain: string[];
  aliases: { program: string; sub: string; text: string }[];
}

async function expand(
  all: string[],
  knownCount: number,
  text: string,
  depth: number,
  findings: Findings,
): Promise<Candidate[]> {
  const uncertain = findings.uncertain;
  if (all.length === 0) return [{ words: all, known: [], open: false, text }];
  const out: Candidate[] = [];
  const name = knownCount > 0 ? basename(all[0]) : all[0];
  const named = name === all[0] ? all : [name, ...all.slice(1)];
  const open = knownCount < all.length;
  out.push({ words: named, known: named.slice(0, knownCount), open, text });
  // git's programs for its subcommands run them (`/usr/lib/git-core/git-push origin` is `git push origin`).
  if (knownCount > 0 && /^git-./.test(name) && depth < MAX_DEPTH) {
    const words = ["git", name.slice(4), ...named.slice(1)];
    out.push(...await expand(words, knownCount + 1, text, depth + 1, findings));
  }
  if (name === "git" && knownCount > 0) {
    const { words: stripped, aliases } = withoutGitGlobals(named);
    const dropped = named.length - stripped.length;
    const knownStripped = Math.max(1, knownCount - dropped);
    out.push({ words: stripped, known: stripped.slice(0, knownStripped), open, text });
    const sub = stripped[1];
    const alias = sub === undefined ? undefined : aliases.get(sub.toLowerCase());
    if (alias !== undefined && depth < MAX_DEPTH) {
      // `-c alias.x=push`: `git x` is `git push`; `-c alias.x='!sh cmd'` runs a shell command.
      if (alias.trimStart().startsWith("!")) {
        const inner = await analyzeBash(alias.trimStart().slice(1));
        if (!inner.understood) uncertain.push(`the git alias ${JSON.stringify(sub)} is not fully understood`);
        for (const found of inner.commands) out.push(...await candidates(found, depth + 1, findings));
      } else {
        const replaced = ["git", ...alias.trim().split(/\s+/), ...stripped.slice(2)];
        out.push(
          ...await expand(
            replaced,
            open ? Math.min(replaced.length, knownStripped) : replaced.length,
            text,
            depth + 1,
            findings,
          ),
        );
      }
    } else if (sub !== undefined && knownStripped >= 2 && !sub.startsWith("-") && !GIT_COMMANDS.has(sub)) {
      findings.aliases.push({ program: "git", sub, text });
    }
  }
  if (knownCount > 0) {
    // git's own spellings are read above (its global options taken off: `git -C . bisect run git push`).
    const spellings = name === "git" ? out.slice(1) : otherSpellings(named, knownCount, open, text);
    if (name !== "git") out.push(...spellings);
    // The subcommand may stand after global options (`cargo +nightly nn`, `gh -R o/r xx`), where the spellings
    // start it: one that is not the program's own wherever it may start may be an alias.
    const own = CONFIGURABLE_COMMANDS.get(name);
    const subs = [named.slice(0, knownCount), ...spellings.map((spelling) => spelling.known)]
      .map((known) => known[1])
      .filter((word): word is string => word !== undefined && !optionLike(word));
    if (own !== undefined && subs.length > 0 && !subs.some((word) => own.has(word))) {
      findings.aliases.push({ program: name, sub: subs[0], text });
    }
    // A package manager's subcommand that runs the command after it (`npm exec -- git push`, `uv run git push`).
    for (const spelling of [{ words: named, known: named.slice(0, knownCount) }, ...spellings]) {
      const length = runnerSubcommandLength(spelling.words);
      if (length === 0) continue;
      if (depth >= MAX_DEPTH) break;
      const known = spelling.known.length;
      if (known <= length && open) {
        uncertain.push(
          `${JSON.stringify(text)}: \`${
            spelling.words.slice(0, length).join(" ")
          }\` runs a command with words only known when it runs`,
        );
      }
      for (let i = length; i < spelling.words.length; i++) {
        const inner = await expand(spelling.words.slice(i), Math.max(0, known - i), text, depth + 1, findings);
        out.push(...inner.map((candidate) => ({ ...candidate, strictOnly: true })));
      }
      // A command line given as one word (`npm exec -c 'git push'`, `bun exec 'curl x'`).
      for (const word of spelling.words.slice(length, known)) {
        if (!/[\s;&|()`$<>]/.test(word)) continue;
        const inner = await analyzeBash(word);
        if (!inner.understood) uncertain.push(`${JSON.stringify(word)} (run by ${name}) is not fully understood`);
        for (const found of inner.commands) {
          out.push(...(await candidates(found, depth + 1, findings)).map((c) => ({ ...c, strictOnly: true })));
        }
      }
    }
  }
  if (depth >= MAX_DEPTH) {
    uncertain.push(`${JSON.stringify(text)} nests wrappers too deeply to see what it runs`);
    return out;
  }
  const runner = knownCount > 0 && COMMAND_RUNNERS.has(name);
  const finds = knownCount > 0 && (name === "find" || name === "fd");
  if (runner && open) {
    uncertain.push(`${JSON.stringify(text)}: \`${name}\` runs a command with words only known when it runs`);
  }
  if (runner || finds) {
    // xargs and parallel add words from a stream to the command they run (`echo push | xargs git` is `git push`).
    const streamed = STREAM_RUNNERS.has(name);
    for (let i = 1; i < named.length; i++) {
      if (finds && !FIND_EXEC.has(named[i - 1]) && named[i - 1] !== "-x" && named[i - 1] !== "-X") continue;
      const inner = await expand(named.slice(i), Math.max(0, knownCount - i), text, depth + 1, findings);
      out.push(...(streamed ? inner.map((candidate) => ({ ...candidate, open: true })) : inner));
    }
    if (streamed && knownCount === named.length && named.slice(1).every((word) => word.startsWith("-"))) {
      uncertain.push(`${JSON.stringify(text)}: \`${name}\` runs the commands a stream names`);
    }
  }
  // A pager, editor or client runs the shell commands of its own commands (`vim -c '!git push'`, `less +'!git push'`,
  // `psql -c '\\! git push'`, what is typed or configured), which the rules cannot see.
  // Under another of its names too (`vim.basic`, `editor`).
  if (knownCount > 0 && listedName(name, (listed) => COMMAND_RUNNERS.get(listed) === RUNS_SHELL_ESCAPES)) {
    uncertain.push(`${JSON.stringify(text)}: \`${name}\` runs the shell commands its own commands name`);
  }
  // A shell that reads its commands from standard input (`echo 'git push' | bash`, `bash <<< 'git push'`,
  // `. /dev/stdin`): what it runs is not on the line the rules judge.
  if (knownCount > 0 && readsCommandsFromStdin(name, named.slice(1, knownCount), knownCount === named.length)) {
    uncertain.push(`${JSON.stringify(text)}: \`${name}\` runs commands it reads from its input`);
  } else if (knownCount > 0 && knownCount === named.length && startsShell(named)) {
    // So does a runner that starts a shell when given no command (`unshare <<< 'git push'`, `fakeroot < f`).
    uncertain.push(`${JSON.stringify(text)}: \`${name}\` starts a shell that runs the commands it reads`);
  }
  // A wrapper's argument that is itself a command line (`bash -c 'git push'`, `eval "git push"`).
  if (runner || finds || (knownCount > 0 && SHELLS.has(name))) {
    for (const given of named.slice(1, knownCount)) {
      // env's split string glued to its option (`env -S'git push'`, `env --split-string='git push'`, `--sp=`).
      const glued = name === "env" ? /^(?:-[iv0]*S|--sp[a-z-]*=)/.exec(given) : null;
      const word = glued === null ? given : given.slice(glued[0].length);
      if (!/[\s;&|()`$<>]/.test(word)) continue;
      const inner = await analyzeBash(word);
      if (!inner.understood) uncertain.push(`${JSON.stringify(word)} (run by ${name}) is not fully understood`);
      for (const found of inner.commands) out.push(...await candidates(found, depth + 1, findings));
    }
  }
  // sed's `e COMMAND` runs the command its script names, `e` and `s///e` the pattern space; awk's `system` and pipes
  // run what the program computes: the first is matched as `bash -c`'s argument is, the others only the run knows.
  // Each word is read as a script or program (an operand read so only ever matches or asks more).
  const commandLines: string[] = [];
  const awk = knownCount > 0 && AWK_NAMES.has(name) ? awkPrograms(named.slice(1, knownCount)) : [];
  if (awk === undefined || awk.some(awkMayRunCommands)) {
    uncertain.push(`${JSON.stringify(text)}: the ${name} program may run commands`);
  }
  if (knownCount > 0 && name === "sed") {
    // A script read from a file is not on the line.
    if (named.slice(1, knownCount).some((word) => /^(-[^-]*f|--fi)/.test(word))) {
      uncertain.push(`${JSON.stringify(text)}: the sed script read from a file may run commands`);
    }
    for (const word of named.slice(1, knownCount)) {
      if (AWK_NAMES.has(name)) continue;
      for (const effect of readSedScript([word.replace(/^-[nEsrzu]*e/, "")]).effects) {
        if (effect.access !== "run") continue;
        if (effect.file === "") uncertain.push(`${JSON.stringify(text)}: the sed script runs what it reads`);
        else commandLines.push(effect.file);
      }
    }
  }
  // A program's option whose value is a command line it runs (`git rebase -x 'git push'`, `git -c
  // core.sshCommand='git push' fetch`, `tar --to-command=CMD`, `rsync -e CMD`, `sort --compress-program=CMD`): read
  // as `bash -c` reads its argument. Before, with deny ["git push"] and the sandbox, an automatic answer let
  // `git rebase -x 'git push' HEAD` and `git difftool -x 'git push'` push.
  for (
    const given of [...commandLines, ...(knownCount > 0 ? commandLineValues(name, named.slice(0, knownCount)) : [])]
  ) {
    const inner = await analyzeBash(given);
    if (!inner.understood) uncertain.push(`${JSON.stringify(given)} (run by ${name}) is not fully understood`);
    // For the deny and ask rules only: an allow rule for the line it runs does not let the program run.
    for (const found of inner.commands) {
      out.push(...(await candidates(found, depth + 1, findings)).map((c) => ({ ...c, strictOnly: true })));
    }
  }
  return out;
}

/** awk's options that take the next word (the separator, an assignment, a file, gawk's `-W` word). */
const AWK_VALUED = new Set(["-F", "-v", "-f", "-i", "-l", "-E", "-W", "-e"]);

/**
 * The program texts of awk's words: `-e`/`--source` values (gawk's), or else its first operand; `undefined` when a
 * program is read from a file (`-f`, `-E`, `-i`, `--file`, `--exec`, `--include`) or an extension loaded (`-l`).
 */
function awkPrograms(args: readonly string[]): string[] | undefined {
  const sources: string[] = [];
  let operand: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (/^(-[fEil]|--(fi|ex|inc|lo))/.test(word)) return undefined;
    if (word === "--") {
      operand ??= args[i + 1];
      break;
    }
    const source = /^(?:-e|--so(?:u(?:r(?:ce?)?)?)?=?)(.*)$/s.exec(word);
    if (source !== null && source[1] !== "") sources.push(source[1]);
    else if (source !== null || word === "--source") sources.push(args[++i] ?? "");
    else if (AWK_VALUED.has(word)) i++;
    else if (!word.startsWith("-") && operand === undefined) operand = word;
  }
  return sources.length > 0 ? sources : operand === undefined ? [] : [operand];
}

/**
 * The options whose value is a command line the program runs: git's `rebase --exec`/`-x`, `difftool --extcmd`/`-x`,
 * `filter-branch`'s filters, the remote programs of `fetch`, `clone -u` and `push`, `send-email`'s commands; tar's
 * programs (`--checkpoint-action=exec=CMD` too), rsync's remote shell and program, sort's compressor, ripgrep's
 * preprocessor, zip's test command. Long ones by any start of them, as getopt takes them.
 */
const COMMAND_LINE_OPTIONS: Readonly<Record<string, { short: string; long: readonly string[] }>> = {
  git: {
    short: "xu",
    long: [
      "exec",
      "extcmd",
      "tree-filter",
      "index-filter",
      "env-filter",
      "msg-filter",
      "commit-filter",
      "tag-name-filter",
      "parent-filter",
      "upload-pack",
      "receive-pack",
      "to-cmd",
      "cc-cmd",
      "header-cmd",
      "sendmail-cmd",
    ],
  },
  tar: {
    short: "IF",
    long: [
      "to-command",
      "use-compress-program",
      "checkpoint-action",
      "info-script",
      "new-volume-script",
      "rsh-command",
      "rmt-command",
    ],
  },
  rsync: { short: "e", long: ["rsh", "rsync-path"] },
  sort: { short: "", long: ["compress-program"] },
  rg: { short: "", long: ["pre"] },
  zip: { short: "", long: ["unzip-command"] },
};

/** git's configuration keys whose value is a command it runs (`credential.helper`'s after a `!`). */
const GIT_COMMAND_KEY =
  /^(core\.(sshcommand|pager|editor|fsmonitor|askpass)|sequence\.editor|diff\.external|diff\..+\.(textconv|command)|filter\..+\.(clean|smudge|process)|credential\.(.+\.)?helper|gpg\.(.+\.)?program|pager\..+|merge\..+\.driver|(merge|diff)tool\..+\.cmd|sendemail\..*cmd|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack)|interactive\.difffilter|web\.browser|browser\..+\.cmd|man\..+\.cmd)$/i;

/** The values of `name`'s options of {@linkcode COMMAND_LINE_OPTIONS} (and git's `-c KEY=CMD`) among `words`. */
function commandLineValues(name: string, words: readonly string[]): string[] {
  const options = COMMAND_LINE_OPTIONS[name];
  if (options === undefined) return [];
  const values: string[] = [];
  for (let i = 1; i < words.length; i++) {
    const word = words[i];
    if (word === "--") break;
    let value: string | undefined;
    if (name === "git" && word.startsWith("-c") && !word.startsWith("--")) {
      const setting = /^([^=]+)=([\s\S]*)$/.exec((word === "-c" ? words[++i] : word.slice(2)) ?? "");
      if (setting !== null && GIT_COMMAND_KEY.test(setting[1])) value = setting[2].replace(/^\s*!/, "");
    } else if (word === "-TT" && name === "zip") {
      value = words[++i];
    } else if (word.startsWith("--")) {
      const [given, ...inline] = word.slice(2).split("=");
      if (given.length < 2 || !options.long.some((long) => long.startsWith(given))) continue;
      value = inline.length > 0 ? inline.join("=") : words[++i];
    } else if (/^-[^-]/.test(word)) {
      const at = [...word.slice(1)].findIndex((letter) => options.short.includes(letter));
      if (at < 0) continue;
      value = at + 2 < word.length ? word.slice(at + 2) : words[++i];
    }
    // `--checkpoint-action=exec=CMD`.
    if (value !== undefined) values.push(value.replace(/^exec=/, ""));
  }
  return values;
}

/**
 * The subcommands of package managers and environment tools that run the command given after them (a program of
 * the system's, a package's, the project's): `npm exec git push` runs git push as `env git push` does, and so do
 * `git bisect run git push` and `git submodule foreach git push`.
 */
const RUNNER_SUBCOMMANDS: readonly (readonly string[])[] = [
  "git bisect run",
  "git submodule foreach",
  "npm exec",
  "pnpm exec",
  "pnpm dlx",
  "yarn exec",
  "yarn dlx",
  "bun x",
  "bun exec",
  "bun run",
  "uv run",
  "uv tool run",
  "poetry run",
  "pdm run",
  "pipenv run",
  "hatch run",
  "rye run",
  "conda run",
  "mamba run",
  "micromamba run",
  "pixi run",
  "pixi exec",
  "mise exec",
  "mise x",
  "asdf exec",
  "direnv exec",
  "devbox run",
  "nix develop",
  "nix shell",
  "nix run",
  "nix-shell",
].map((entry) => entry.split(" "));

/**
 * How many words of `words` name a subcommand that runs a command given after it, or 0; options may stand between
 * its words (`git submodule --quiet foreach git push`).
 */
function runnerSubcommandLength(words: readonly string[]): number {
  for (const entry of RUNNER_SUBCOMMANDS) {
    if (words[0] !== entry[0]) continue;
    let at = 1;
    for (const part of entry.slice(1)) {
      while (at < words.length && words[at] !== part && optionLike(words[at])) at++;
      if (words[at] !== part) {
        at = -1;
        break;
      }
      at++;
    }
    if (at > 0) return at;
  }
  return 0;
}

/**
 * The other word lists a command other than git (whose own are read above) may run as, for the deny and ask
 * rules: its subcommand after global options (`npm -s publish`, `docker -H h rm`, `cargo +nightly publish` are
 * `npm publish`, `docker rm`, `cargo publish`), and npm's abbreviations and aliases of it (`npm publ`, `npm i`).
 */
function otherSpellings(named: string[], knownCount: number, open: boolean, text: string): Candidate[] {
  const name = named[0];
  const spellings = [0, ...afterGlobalOptions(named, knownCount)].map((at) => ({
    words: at === 0 ? named : [name, ...named.slice(at)],
    knownCount: at === 0 ? knownCount : knownCount - at + 1,
  }));
  const out: Candidate[] = [];
  for (const spelling of spellings) {
    const variants = [spelling];
    if (name === "npm" && spelling.knownCount > 1) {
      for (const command of npmCommandsNamed(spelling.words[1])) {
        variants.push({ words: [name, command, ...spelling.words.slice(2)], knownCount: spelling.knownCount });
      }
    }
    for (const variant of variants) {
      if (variant === spellings[0]) continue;
      out.push({
        words: variant.words,
        known: variant.words.slice(0, variant.knownCount),
        open,
        text,
        strictOnly: true,
      });
    }
  }
  return out;
}

/**
 * Applies the command rules of `rules` to `command`. Needs no permissions.
 *
 * @example
 * ```ts
 * import { judgeCommandRules, PolicyRules } from "@toolfence/policy";
 * const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { deny: ["git push"] } } }], "/w");
 * const verdict = await judgeCommandRules("timeout 5 env GIT_DIR=x git -C . push", rules);
 * console.log(verdict.rule?.decision); // "deny"
 * ```
 */
export async function judgeCommandRules(command: string, rules: PolicyRules): Promise<CommandRulesVerdict> {
  return judgeAnalyzedCommandRules(rules, await analyzeBash(command));
}

/**
 * {@linkcode judgeCommandRules} on a line the caller has analysed already (the
 * line is parsed once for all judges).
 */
export async function judgeAnalyzedCommandRules(
  rules: PolicyRules,
  analysis: BashAnalysis,
): Promise<CommandRulesVerdict> {
  const empty: CommandRulesVerdict = { matches: [], uncertain: [], allowEntries: [] };
  if (rules.commandRules.length === 0) return empty;
  const uncertain: string[] = [];
  const strict = rules.commandRules.some((rule) => rule.decision !== "allow");
  if (!analysis.understood && strict) {
    uncertain.push(`the command line is not fully understood (${analysis.problems.join("; ")})`);
  }
  const matches: CommandRuleMatch[] = [];
  const allowEntries = new Set<string>();
  const decided: CommandRule[] = [];
  const shadows: CommandRule[] = [];
  const findings: Findings = { uncertain, aliases: [] };
  const rulesFor = (program: string) =>
    rules.commandRules.filter((rule) =>
      rule.decision !== "allow" && rule.enforce && (rule.pattern === program || rule.pattern.startsWith(`${program} `))
    );
  for (const found of analysis.commands) {
    if (found.kind !== "command") continue;
    const own: CommandRuleMatch[] = [];
    for (const candidate of await candidates(found, 0, findings)) {
      for (const rule of rules.matchCommand(candidate.words).matches) {
        if (candidate.strictOnly && rule.decision === "allow") continue;
        own.push({ rule, words: candidate.words, text: candidate.text });
      }
      if (candidate.open && strict) {
        const could = rules.mayMatchCommand(candidate.known).filter((rule) => rule.enforce);
        if (could.length > 0) {
          uncertain.push(
            `${JSON.stringify(candidate.text)} has words only known when it runs, and could match the ${
              describeRule(could[0])
            }`,
          );
        }
      }
    }
    matches.push(...own);
    // Overrides act within one simple command; the line takes the strictest of its commands.
    const outcome = PolicyRules.resolve(own.map((match) => match.rule));
    if (outcome.rule) decided.push(outcome.rule);
    if (outcome.shadow) shadows.push(outcome.shadow);
    // An allow rule in force extends the allowlist for the command exactly as written.
    const direct = found.words.length > 0 && found.words.every((word) => word.value !== undefined);
    if (direct && outcome.rule?.decision === "allow") {
      const words = found.words.map((word) => word.value!);
      if (!outcome.rule.glob) allowEntries.add(outcome.rule.pattern);
      else if (words.every((w) => w !== "" && !/\s/.test(w))) {
        // An exact entry of the allowlist is taken to run no project code (`=node --version` prints a version);
        // the words a glob rule matched may be any command (`npm run test:*` runs the project's script), so one
        // that runs project code is marked as such, and still needs the sandbox or a person.
        allowEntries.add(`${runsProjectCode(words) ? "sandbox: " : ""}= ${words.join(" ")}`);
      }
    }
  }
  // A subcommand that is not the program's own may be an alias of a denied one in its configuration.
  for (const { program, sub, text } of findings.aliases) {
    const programRules = rulesFor(program);
    if (programRules.length === 0) continue;
    uncertain.push(
      `${JSON.stringify(text)}: \`${program} ${sub}\` is not a ${program} command, so it may be an alias, and could ` +
        `be the ${describeRule(programRules[0])}`,
    );
  }
  const strongest = (list: CommandRule[]) =>
    list.reduce<CommandRule | undefined>(
      (best, rule) => best === undefined || STRENGTH[rule.decision] > STRENGTH[best.decision] ? rule : best,
      undefined,
    );
  const rule = strongest(decided);
  const shadowAll = strongest([...decided, ...shadows]);
  const shadow = shadowAll && (rule === undefined || STRENGTH[shadowAll.decision] > STRENGTH[rule.decision])
    ? shadowAll
    : undefined;
  const entries = rule === undefined || rule.decision === "allow" ? [...allowEntries] : [];
  return {
    ...(rule ? { rule } : {}),
    ...(shadow ? { shadow } : {}),
    matches,
    uncertain: strict ? [...new Set(uncertain)] : [],
    allowEntries: entries,
  };
}
