/**
 * A bash grammar as fast-check arbitraries, for the differential fuzzer
 * (`_fuzz.ts`): command lines built from the shell's own productions (lists
 * and pipelines, every compound command, function definitions, `[[ ]]`,
 * `(( ))`, `coproc`, `[`/`test`, every expansion, every quoting form, every
 * redirection, here-documents and here-strings, comments, line continuations,
 * `!`, `time`, `&`, assignments before commands) around simple commands that
 * are mostly allowlisted programs with their real options, and arguments that
 * are mostly the fixture's files, including ones named like options (`-rf`,
 * `--output=x`, `-delete`).
 *
 * The weights lean toward lines the checker allows (allowlisted words with
 * small perturbations), since only allowed lines run in the sandbox and only
 * they can disagree. Everything is built with `map`/`tuple`/`oneof`, so
 * fast-check shrinks a failing line toward its smallest failing form.
 *
 * @module
 */
import fc from "fast-check";
import { languageCommand } from "./_languages.ts";

type Arb = fc.Arbitrary<string>;

const pick = (...values: string[]): Arb => fc.constantFrom(...values);
const weighted = (...entries: [number, Arb][]): Arb =>
  fc.oneof(...entries.map(([weight, arbitrary]) => ({ weight, arbitrary })));
/** A list of `count` items of `item` joined by `sep`, shrinking toward fewer. */
const joined = (item: Arb, sep: string, min: number, max: number): Arb =>
  fc.array(item, { minLength: min, maxLength: max }).map((items) => items.join(sep));

// The fixture's files (see _exec_trace.ts), and words that look like options.
// The last two reach the secret planted outside the workspace (`_exec_trace.ts`).
const FILES = [
  "a.txt",
  "b.txt",
  "sub",
  "sub/c.txt",
  ".",
  "list.txt",
  "env.sh",
  "packed.txt.gz",
  "nothere",
  "evil.txt",
  "/srv/outside/secret",
  "../../srv/outside/secret",
];
const FLAG_LIKE_FILES = ["-rf", "./-rf", "--output=x", "./--output=x", "-delete", "--", "-"];

/** A file argument written plainly, quoted in one of bash's ways, or produced by an expansion. */
const quotedFile: Arb = fc.tuple(pick(...FILES), fc.nat(9)).map(([file, how]) => {
  const half = Math.max(1, file.length >> 1);
  switch (how) {
    case 0:
      return `'${file}'`;
    case 1:
      return `"${file}"`;
    case 2:
      return `$'${file}'`;
    case 3:
      return `$"${file}"`;
    case 4:
      return `${file.slice(0, half)}\\${file.slice(half)}`;
    case 5:
      return `"${file.slice(0, half)}"'${file.slice(half)}'`;
    case 6:
      return `$'\\x${file.charCodeAt(0).toString(16)}'${file.slice(1)}`;
    default:
      return file;
  }
});

const GLOBS = ["*", "*.txt", "?.txt", "[ab].txt", "sub/*", "-*", "--*", ".*", "*/", "[!a]*", "*.gz", "**"];
const EXTGLOBS = ["@(a|b).txt", "+(a).txt", "!(a).txt", "*(x)a.txt", "?(a).txt", "@(-rf|a.txt)"];
const BRACES = ["{a,b}.txt", "{1..2}", "a{,.txt}", "{-rf,a.txt}", "{sub,.}", "{a..c}", "x{}", "{,}"];
const TILDES = ["~", "~/a.txt", "~+", "~-", "~root", "~+/a.txt", "~nobody"];
const PARAMETERS = [
  "$HOME",
  '"$HOME"',
  "${HOME}",
  "${x:-a.txt}",
  "${x-b.txt}",
  "${x:=a.txt}",
  "${x:+b.txt}",
  "${HOME:?}",
  "${#HOME}",
  "${!HOME}",
  "${!H*}",
  "${HOME/a/b}",
  "${HOME//t/x}",
  "${HOME#/}",
  "${HOME##*/}",
  "${HOME%s}",
  "${HOME%%/*}",
  "${HOME^^}",
  "${HOME,,}",
  "${HOME@Q}",
  "${HOME:0:2}",
  "${HOME: -2}",
  "$1",
  "$#",
  "$?",
  "$$",
  "$-",
  "$_",
  "$@",
  '"$@"',
  "$*",
  "${@:1}",
  "$PWD",
  "${PWD}/a.txt",
  "${x[0]}",
  "${x[@]}",
  "$RANDOM",
  "$LINENO",
  // Expansions that evaluate what a variable holds: prompt expansion runs `$(...)`, subscripts are arithmetic.
  "${x@P}",
  "${x@E}",
  "${x@A}",
  "${!x}",
  "${a[x]}",
  "$((x))",
  "$(<a.txt)",
];
const ARITHMETIC = ["$((1+2))", "$((x=1))", "$[1]", "$((RANDOM%2))", "$(( 2 > 1 ))", "$((0x10))", "$((x++))"];
const TEXT = [
  "hi",
  "beta",
  "'a b'",
  '"a b"',
  "$'a\\tb'",
  "$'a\\nb'",
  '$"hi"',
  "a\\ b",
  "'a\nb'",
  '"a\nb"',
  "x=y",
  "%s",
  // Quotes inside quotes: where a reader that ends a string too early or too late sees other commands.
  "$'\\''",
  "$'a\\'b'",
  '"a\\"b"',
  "'a'\\''b'",
  "$'\\x27'",
  "$'\\047'",
  '"\\$(rm a.txt)"',
  "'\\'",
  '"$(echo ")")"',
  "$'a\\\\'",
  // Reserved words and operators' look-alikes as plain arguments.
  "}",
  "{",
  "]]",
  "]",
  "then",
  "esac",
  "!",
  "function",
  "in",
  "do",
];

/** An argument word, mostly a file; `inner` is a whole command line for substitutions. */
function argWord(inner: Arb): Arb {
  return weighted(
    [8, pick(...FILES)],
    [3, quotedFile],
    [2, pick(...FLAG_LIKE_FILES)],
    [2, pick(...TEXT)],
    [2, pick(...GLOBS)],
    [1, pick(...EXTGLOBS)],
    [1, pick(...BRACES)],
    [1, pick(...TILDES)],
    [2, pick(...PARAMETERS)],
    [1, pick(...ARITHMETIC)],
    [1, pick("a#b", "a.txt#x", "#x", "a#$(rm a.txt)", "'#'", "\\#x")],
    [
      2,
      fc.tuple(
        pick(
          "$(%)",
          '"$(%)"',
          "`%`",
          '"`%`"',
          "${x:-$(%)}",
          '${x:-"$(%)"}',
          "${HOME/$(%)/}",
          "<(%)",
          ">(%)",
          "$(( $(%) ))",
          "a$(%)b",
          // `$((` is arithmetic unless it cannot be, then bash reads it as `$( (`.
          "$((%) )",
          "$( (%) )",
          "$(cat <<EOF\n$(%)\nEOF\n)",
        ),
        inner,
      )
        .map(([form, line]) => form.replace("%", line)),
    ],
  );
}

/** Options and arguments of one allowlisted program, as `[safe, risky]` option lists and argument makers. */
interface Program {
  /** The command words, e.g. `git log`. */
  name: string;
  /** Options it is normally run with. */
  flags: string[];
  /** Options that write, run programs, read from elsewhere, or are abbreviations of those. */
  risky: string[];
  /** Whether file arguments follow. */
  files: boolean;
}

// sed scripts and options that write, run or read scripts, in the spellings GNU sed accepts.
const SED_RISKY = [
  "-i s/a/b/",
  "--in-place s/a/b/",
  "--in-pl s/a/b/",
  "-ni 1p",
  "-n -i.bak 1p",
  "-sn 1p",
  "-n 'w out.txt'",
  "-n 'W out.txt'",
  "-n '1w out.txt'",
  "-n '1{w out.txt\n}'",
  "-n 'p;w out.txt'",
  "-n '$!{$!w out.txt\n}'",
  "-n '1e rm a.txt'",
  "'1 e rm a.txt'",
  "'s/a/b/e'",
  "'s/a/b/w out.txt'",
  "'s/a/b/gw out.txt'",
  "'s/a/b/3w out.txt'",
  "'s|a|b|w out.txt'",
  "'s/x/y/;w out.txt'",
  "'s/a\\/b/c/w out.txt'",
  "'y/a/b/;w out.txt'",
  "':a;w out.txt'",
  "'#n\n1p'",
  "-e 'w out.txt'",
  "--expression='w out.txt'",
  "--expression 1p -e 'e rm a.txt'",
  "-f env.sh",
  "--file=env.sh",
  '-n "$(echo 1p)"',
  "'r /etc/passwd'",
  "-z 1p",
  "-E -n '/(a)/p'",
  "--sandbox 'w out.txt'",
  "--debug 1p",
];

const GIT_RISKY = [
  "--output=out.txt",
  "--outp=x",
  "--ext-diff",
  "--ext-d",
  "--textconv",
  "--textc",
  "--show-signature",
  "--show-sig",
  "--exec=rm",
  "--no-index a.txt out.txt",
  "-O out.txt",
  "--contents=/etc/passwd",
];
const gitSub = (sub: string, flags: string[], risky: string[] = []): Program => ({
  name: `git ${sub}`,
  flags,
  risky: [...risky, ...GIT_RISKY],
  files: true,
});

const PROGRAMS: Program[] = [
  {
    name: "ls",
    flags: ["-la", "-l", "-a", "-R", "-1", "-d", "--color=never", "-A", "-h", "-S"],
    risky: [],
    files: true,
  },
  { name: "cat", flags: ["-n", "-v", "-A", "-s", "-E"], risky: [], files: true },
  { name: "head", flags: ["-n 1", "-n1", "-c 5", "-q", "-1"], risky: [], files: true },
  { name: "tail", flags: ["-n 1", "-n +2", "-c 3", "-q"], risky: ["-f", "--follow"], files: true },
  { name: "wc", flags: ["-l", "-c", "-w", "-m", "-lc"], risky: ["--files0-from=list.txt"], files: true },
  { name: "echo", flags: ["-n", "-e", "-E", "hi", "--"], risky: [], files: true },
  { name: "printf", flags: ["'%s\\n'", "%s", "'%b'", "-v x %s", "--"], risky: ["-v 'x[$(rm a.txt)]' 1"], files: true },
  {
    name: "grep",
    flags: ["beta", "-rn beta", "-i beta", "-l beta", "-c beta", "-E 'a|b'", "-F beta", "-v x", "-w beta", "-e beta"],
    risky: ["-f list.txt", "--include='*.txt' -r beta", "-Z beta", "-z beta", "-R beta", "--exclude-dir=sub -r x"],
    files: true,
  },
  { name: "egrep", flags: ["beta", "-n 'a|b'"], risky: [], files: true },
  { name: "fgrep", flags: ["beta", "-c beta"], risky: [], files: true },
  {
    name: "rg",
    flags: ["beta", "-n beta", "-i beta", "-l beta", "--files", "-g '*.txt' beta", "--hidden beta", "-c beta"],
    risky: [
      "-z beta",
      "--search-zip beta",
      "--pre=rm beta",
      "--pre rm beta",
      "--pr=sh beta",
      "--pre-glob '*' beta",
      "--hostname-bin=rm --hyperlink-format=default beta",
      "--ignore-file=/etc/passwd beta",
      "--type-add 'x:*.txt' -tx beta",
    ],
    files: true,
  },
  {
    name: "find",
    flags: [". -name '*.txt'", ". -type f", ". -maxdepth 1", "sub -print", ". -print0", ". -newer a.txt", ". -empty"],
    risky: [
      ". -delete",
      ". -exec rm {} +",
      ". -exec cat {} \\;",
      ". -execdir rm {} \\;",
      ". -ok rm {} \\;",
      ". -fprint out.txt",
      ". -fls out.txt",
      ". -fprintf out.txt %p",
      ". -fprint0 out.txt",
      ". -okdir rm {} \\;",
      ". -execdir rm {} +",
      "-files0-from list.txt",
      "-delete",
    ],
    files: false,
  },
  { name: "sed -n", flags: ["'1,20p'", "1p", "'$p'", "'/beta/p'", "-e 1p", "'1!p'"], risky: SED_RISKY, files: true },
  {
    name: "sed",
    flags: ["-n 1p", "-n '1,2p'", "-n -e '$p'", "-n '/a/{p;q}'"],
    risky: SED_RISKY,
    files: true,
  },
  {
    name: "sort",
    flags: ["-u", "-r", "-n", "-k1", "-t, -k2", "-f", "-c", "-m"],
    risky: ["-o out.txt", "--output=out.txt", "--out=x", "-uo x", "--compress-program=rm -S 1", "-T /tmp"],
    files: true,
  },
  { name: "uniq", flags: ["-c", "-d", "-u", "-i"], risky: ["a.txt out.txt"], files: true },
  { name: "tr", flags: ["a b", "-d a", "a-z A-Z", "-s ' '"], risky: [], files: false },
  { name: "cut", flags: ["-c1", "-d, -f1", "-f1", "-b1-2"], risky: [], files: true },
  { name: "nl", flags: ["-b a", "-n rz"], risky: [], files: true },
  { name: "column", flags: ["-t", "-s,"], risky: [], files: true },
  { name: "diff", flags: ["-u", "-q", "-r", "--brief"], risky: ["--to-file=a.txt", "--from-file=b.txt"], files: true },
  { name: "cmp", flags: ["-s", "-l"], risky: [], files: true },
  {
    name: "file",
    flags: ["-b", "-i", "-L"],
    risky: ["-C -m /dev/null", "-m x", "-C -m a.txt", "-Cm a.txt", "--compile -m b.txt"],
    files: true,
  },
  { name: "stat", flags: ["-c %s", "-L", "-t"], risky: [], files: true },
  { name: "du", flags: ["-sh", "-a", "-s"], risky: ["--files0-from=list.txt"], files: true },
  { name: "df", flags: ["-h", "."], risky: [], files: false },
  { name: "tree", flags: ["-L 1", "-a", "-d"], risky: ["-o out.txt", "--fromfile list.txt"], files: true },
  { name: "basename", flags: ["/x/y", "-a a/b c/d", "x.txt .txt"], risky: [], files: false },
  { name: "dirname", flags: ["/x/y", "a/b"], risky: [], files: false },
  { name: "realpath", flags: ["-e", "-m", "-s"], risky: [], files: true },
  { name: "readlink", flags: ["-f", "-e"], risky: [], files: true },
  {
    name: "date",
    flags: ["+%s", "-u", "-I", "-d @0", "-R"],
    risky: ["-f list.txt", "--file=list.txt", "-s 0"],
    files: false,
  },
  { name: "which", flags: ["ls", "-a ls", "git"], risky: [], files: false },
  { name: "uname", flags: ["-a", "-m", "-s"], risky: [], files: false },
  { name: "whoami", flags: [], risky: [], files: false },
  { name: "pwd", flags: ["-P", "-L"], risky: [], files: false },
  { name: "true", flags: [], risky: [], files: false },
  {
    name: "cd",
    flags: ["sub", ".", "sub/", "./sub"],
    risky: ["..", "/", "/tmp", "-", "~", "bin", '"$HOME"', "-P ..", "../.."],
    files: false,
  },
  {
    name: "node",
    flags: ["--version", "-v"],
    risky: ["--help", "-e 1", "-p 1", "env.sh", "--require ./env.sh"],
    files: false,
  },
  { name: "python3", flags: ["--version", "-V"], risky: ["-c 1", "env.sh", "-m http.server"], files: false },
  { name: "npm", flags: ["--version", "-v"], risky: ["ls", "run", "exec rm", "install"], files: false },
  { name: "deno", flags: ["--version", "-V"], risky: ["run env.sh", "eval 1", "fmt", "task"], files: false },
  {
    name: "git",
    flags: ["--version", "--help"],
    risky: ["help diff", "diff --help", "log --help", "-h"],
    files: false,
  },
  {
    name: "test",
    flags: ["-f a.txt", "-d sub", "-n x", "a = a", "-e nothere"],
    risky: ["-v 'x[$(rm a.txt)]'", "a '<' b"],
    files: false,
  },
  { name: "false", flags: [], risky: [], files: false },
  gitSub("status", ["-s", "--porcelain", "-uall", "--short", "-b", "--ignored", "-z"]),
  gitSub("log", ["-1", "--oneline", "-p -1", "--stat", "--format=%H", "-n1", "--graph -2", "--all"]),
  gitSub("diff", ["--cached", "--stat", "--name-only", "-U1", "--no-ext-diff", "HEAD", "--", "--check"]),
  gitSub("show", ["HEAD", "--stat", "HEAD:a.txt", "-s", "--name-only"]),
  gitSub("blame", ["a.txt", "-s a.txt", "-L1,1 a.txt"]),
  gitSub("rev-parse", ["--show-toplevel", "HEAD", "--git-dir", "--git-path hooks", "--abbrev-ref HEAD"]),
  gitSub("ls-files", ["-z", "-m", "-o", "--others", "-s"]),
  gitSub("branch", ["", "-a", "-v", "--list", "--show-current", "-r", "--no-color", "--contains HEAD"], [
    "-d x",
    "new",
    "-m x",
    "-D master",
    "-c x y",
    "-M y",
    "--edit-description",
    "-u origin/x",
    "--set-upstream-to=x",
    "-f x HEAD",
    "--track x",
    "--delete x",
    "--move y",
    "--copy y",
    "--cre x",
    "--list 'x*'",
    "--format=%(refname)",
    "--sort=-committerdate",
  ]),
  gitSub("tag", ["", "-l", "--list", "-n", "--sort=v:refname"], [
    "v1",
    "-d v1",
    "-a v1 -m m",
    "-s v1",
    "-v v1",
    "-f v1",
    "-F list.txt v1",
    "--edit v1",
    "--points-at HEAD",
  ]),
  gitSub("remote", ["", "-v", "get-url origin"], [
    "add x /tmp",
    "remove origin",
    "rename a b",
    "set-url origin /tmp",
    "prune origin",
    "update",
    "show origin",
    "set-head origin -a",
  ]),
  gitSub("stash list", ["", "--stat", "-p", "--format=%gd", "-1"], ["--ext-diff -p", "--textconv -p"]),
  gitSub("stash", ["list", "show"], ["", "push", "drop", "pop", "clear", "save x"]),
  gitSub(
    "config",
    ["--get user.name", "--list", "-l", "--get-regexp user", "--show-origin -l", "--type=bool --get x"],
    [
      "x.y z",
      "core.pager rm",
      "--add x.y z",
      "--unset x.y",
      "-e",
      "--edit",
      "--global x.y z",
      "--file=out.txt x.y z",
      "--rename-section a b",
      "--remove-section a",
      "--replace-all x.y z",
      "--unset-all x.y",
      "core.fsmonitor rm",
      "--get-urlmatch http.x https://x",
      "--default x --get y.z",
    ],
  ),
  {
    name: "git --no-pager",
    flags: ["log -1", "diff", "status", "show -s"],
    risky: ["log --ext-diff -p"],
    files: false,
  },
  { name: "git -C sub", flags: ["status", "log -1"], risky: ["diff --output=../out.txt"], files: false },
  { name: "git -c core.pager=cat", flags: ["log -1"], risky: [], files: false },
  { name: "git -c core.pager=rm", flags: ["log -1"], risky: [], files: false },
  { name: "git -c diff.external=rm", flags: ["diff"], risky: [], files: false },
  { name: "git --git-dir=.git", flags: ["status"], risky: [], files: false },
  {
    name: "deno test",
    flags: ["", "-A", "--allow-read", "--no-check", "--reporter=dot", "--filter x", "--doc", "--parallel"],
    risky: [
      "--junit-path=/tmp/j.xml",
      "--junit-path /tmp/j.xml",
      "--coverage=/tmp/cov",
      "--cov=/tmp/cov",
      "--config=/tmp/c.json",
      "-c /tmp/c.json",
      "--import-map=/tmp/m.json",
      "--env-file=/tmp/.env",
      "https://example.invalid/t.ts",
      "--junit-path=../j.xml",
      "--coverage=../cov",
    ],
    files: false,
  },
  {
    name: "npm test",
    flags: ["", "--silent", "--", "-- -x", "--if-present"],
    risky: ["-C /tmp", "--prefix=/tmp", "--prefix /tmp", "--logs-dir=/tmp/l", "--logs-d=/tmp/l", "--cache=/tmp/c"],
    files: false,
  },
  {
    name: "npm run test",
    flags: ["", "--silent"],
    risky: ["--prefix=/tmp", "-C /tmp", "--logs-dir=/tmp/l"],
    files: false,
  },
  {
    name: "pytest",
    flags: ["", "-q", "-x", "-k x", "--co", "-v"],
    risky: ["--log-file=/tmp/l", "-p x", "--rootdir=/tmp", "-c /tmp/i", "--basetemp=/tmp/b", "--junitxml=/tmp/j"],
    files: false,
  },
  { name: "python -m pytest", flags: ["", "-q"], risky: ["--log-file=/tmp/l"], files: false },
  { name: "python3 -m pytest", flags: ["", "-x"], risky: ["--junitxml=/tmp/j"], files: false },
  {
    name: "cargo test",
    flags: ["", "-q", "--lib", "-- --nocapture"],
    risky: ["-- --logfile /tmp/l", "--manifest-path /tmp/Cargo.toml", "--target-dir /tmp/t", "--config x=1"],
    files: false,
  },
  {
    name: "go test",
    flags: ["", "./...", "-v", "-run X", "-count=1"],
    risky: [
      "-test.cpuprofile=/tmp/p",
      "-cpuprofile /tmp/p",
      "-coverprofile=/tmp/c",
      "-o /tmp/b",
      "-exec rm",
      "-C /tmp",
    ],
    files: false,
  },
];

// Programs the allowlist does not have: the payload a misread line smuggles in.
const DENIED = [
  "rm a.txt",
  "rm -rf sub",
  "touch new",
  "sh -c 'rm a.txt'",
  "python -c 1",
  "curl x",
  "env ls",
  "xargs rm < list.txt",
  "./run.sh",
  "bin/ls",
  "eval 'rm a.txt'",
  "source env.sh",
  "exec rm a.txt",
  "command rm a.txt",
  "trap 'rm a.txt' EXIT",
  "tee out.txt < a.txt",
  "truncate -s 0 a.txt",
  "mkdir new",
];

/** A command name rewritten the ways bash reads back to the same word (or nearly). */
function perturbName(name: string): Arb {
  const [head, ...rest] = name.split(" ");
  const half = Math.max(1, head.length >> 1);
  const forms = [
    `'${head}'`,
    `"${head}"`,
    `\\${head}`,
    `${head.slice(0, half)}''${head.slice(half)}`,
    `${head.slice(0, half)}"${head.slice(half)}"`,
    `${head.slice(0, half)}\\${head.slice(half)}`,
    `$'${head}'`,
    `{${head},}`,
    `${head.slice(0, half)}[${head[half] ?? ""}]${head.slice(half + 1)}`,
    `${head.slice(0, half)}\\\n${head.slice(half)}`,
    `${head}\\\n`,
  ];
  return weighted([12, fc.constant(head)], [1, pick(...forms)]).map((word) => [word, ...rest].join(" "));
}

/**
 * An option word quoted in a way bash removes again (`-de''lete`, `"--output"=x`,
 * `-\delete`), so that a reader of the raw text sees another word.
 */
function perturbOption(option: string): Arb {
  const [head, ...rest] = option.split(" ");
  if (!head.startsWith("-") || head.length < 3) return fc.constant(option);
  const cut = Math.min(head.length - 1, 2 + (head.length >> 2));
  const forms = [
    `${head.slice(0, cut)}''${head.slice(cut)}`,
    `"${head}"`,
    `'${head}'`,
    `${head.slice(0, cut)}\\${head.slice(cut)}`,
    `${head.slice(0, cut)}"${head.slice(cut)}"`,
    `$'${head}'`,
  ];
  return weighted([10, fc.constant(head)], [1, pick(...forms)]).map((word) => [word, ...rest].join(" "));
}

/** One allowlisted program with options (mostly ones it is normally run with) and arguments. */
function allowlistedCommand(inner: Arb): Arb {
  return fc.constantFrom(...PROGRAMS).chain((program) => {
    const flag = program.flags.length === 0
      ? weighted([6, fc.constant("")], [1, pick(...program.risky, "--help", "--version")])
      : weighted(
        [10, pick(...program.flags)],
        [program.risky.length > 0 ? 2 : 0, pick(...program.risky, "--help").chain(perturbOption)],
        [1, pick("--version", "--help")],
      );
    const args = program.files
      ? joined(argWord(inner), " ", 0, 2)
      : weighted([6, fc.constant("")], [1, argWord(inner)]);
    return fc.tuple(perturbName(program.name), joined(flag, " ", 0, 2), args)
      .map((parts) => parts.filter((part) => part !== "").join(" "));
  });
}

const ASSIGNMENTS = [
  "x='$(rm a.txt)'",
  "x='a[$(rm a.txt)]'",
  "CDPATH=/",
  "x=1",
  "LC_ALL=C",
  "x=a.txt",
  "GIT_PAGER=cat",
  "PAGER=rm",
  "GIT_PAGER=rm",
  "GIT_EXTERNAL_DIFF=rm",
  "GIT_DIR=sub",
  "BASH_ENV=env.sh",
  "IFS=,",
  "PATH=bin",
  "x='y[$(rm a.txt)]'",
  "LD_PRELOAD=x",
  "a=(1 2)",
  "x+=1",
];

const REDIRECT_TARGETS = [
  "/dev/null",
  "/dev/null",
  "/dev/null",
  "out.txt",
  "a.txt",
  "/dev/stderr",
  "/dev/tcp/127.0.0.1/9",
];

/** A redirection of one of bash's kinds, mostly to `/dev/null` or between descriptors. */
function redirection(inner: Arb): Arb {
  const target = weighted([8, pick(...REDIRECT_TARGETS)], [1, argWord(inner)]);
  return weighted(
    [4, pick("2>&1", ">&2", "1>&2", "2>/dev/null", ">/dev/null", "&>/dev/null", "<a.txt", "< list.txt", "3>&-", "<&0")],
    [
      3,
      fc.tuple(
        pick("<", ">", ">>", ">|", "<>", "&>", "&>>", ">&", "<&", "2>", "2>>", "3>", "3<", "{fd}>", "{fd}<"),
        target,
      )
        .map(([op, file]) => `${op}${file}`),
    ],
    [1, fc.tuple(pick("<<<", "<<< "), argWord(inner)).map(([op, word]) => `${op}${word}`)],
  );
}

/** A simple command: assignments, a name, arguments and redirections. */
function simpleCommand(inner: Arb): Arb {
  const command = weighted([12, allowlistedCommand(inner)], [1, pick(...DENIED)]);
  return fc.tuple(
    weighted([8, fc.constant("")], [1, joined(pick(...ASSIGNMENTS), " ", 1, 2)]),
    // A redirection may come before the command name too.
    weighted([10, fc.constant("")], [1, redirection(inner)]),
    command,
    weighted([4, fc.constant("")], [2, joined(redirection(inner), " ", 1, 2)]),
  ).map((parts) => parts.filter((part) => part !== "").join(" "));
}

const TEST_UNARY = ["-f", "-d", "-e", "-r", "-s", "-n", "-z", "-x", "-L", "-v", "-t"];
const TEST_BINARY = ["=", "==", "!=", "-eq", "-ne", "-lt", "-gt", "-nt", "-ot", "-ef", "\\<", "\\>", "'<'", "'>'"];
const TEST_OPERANDS = [
  "$(cat evil.txt)",
  '"$(<evil.txt)"',
  "a.txt",
  "sub",
  "x",
  '"$x"',
  "1",
  "2",
  "''",
  "-rf",
  "'x[$(rm a.txt)]'",
  "x[1]",
];

/** `[ ... ]` and `test ...`, with operators, negation, `-a`/`-o`, parentheses, and the odd `<`, `>`, `||` inside. */
function testCommand(inner: Arb, command: Arb): Arb {
  const operand = weighted([6, pick(...TEST_OPERANDS)], [1, argWord(inner)]);
  const after = weighted([3, command], [1, inner]);
  const primary = weighted(
    [3, fc.tuple(pick(...TEST_UNARY), operand).map(([op, x]) => `${op} ${x}`)],
    [3, fc.tuple(operand, pick(...TEST_BINARY), operand).map(([a, op, b]) => `${a} ${op} ${b}`)],
    [1, operand],
  );
  const expression = weighted(
    [6, primary],
    [1, primary.map((p) => `! ${p}`)],
    [1, fc.tuple(primary, pick("-a", "-o"), primary).map(([a, op, b]) => `${a} ${op} ${b}`)],
    [1, primary.map((p) => `\\( ${p} \\)`)],
    // What tree-sitter once read as test operators and bash reads as operators and redirections.
    [
      4,
      fc.tuple(operand, pick(">", "<", ">>", "||", "&&", "|", ";", "&", "|&"), after).map(([a, op, b]) =>
        `${a} ${op} ${b}`
      ),
    ],
  );
  return fc.tuple(pick("[ % ]", "test %", "[ % ] && true", "! [ % ]"), expression)
    .map(([form, e]) => form.replace("%", e));
}

/** `[[ ... ]]`, with its own operators, `=~`, patterns, `&&`/`||` and parentheses. */
function doubleBracket(inner: Arb): Arb {
  const operand = weighted([6, pick(...TEST_OPERANDS, "a*", "@(a|b)", '"$(echo a)"')], [1, argWord(inner)]);
  const primary = weighted(
    [3, fc.tuple(pick(...TEST_UNARY), operand).map(([op, x]) => `${op} ${x}`)],
    [3, fc.tuple(operand, pick("==", "=", "!=", "=~", "<", ">", "-eq", "-lt"), operand).map((p) => p.join(" "))],
  );
  const expression = weighted(
    [5, primary],
    [1, fc.tuple(primary, pick("&&", "||"), primary).map((p) => p.join(" "))],
    [1, primary.map((p) => `! ( ${p} )`)],
  );
  return expression.map((e) => `[[ ${e} ]]`);
}

const ARITH_EXPRESSIONS = [
  "$(cat evil.txt)",
  "$(<evil.txt)",
  "$(head -n1 evil.txt)",
  "1",
  "x=1",
  "x++",
  "1 > 0",
  "x[1]=2",
  "2**3",
  "x ? 1 : 0",
  "x",
  "a[$(rm a.txt)]",
  "x, 1",
];

/** `(( ... ))`, `let`, `$[ ]` and arithmetic in `for (( ))`. */
function arithmetic(inner: Arb): Arb {
  const expression = weighted([6, pick(...ARITH_EXPRESSIONS)], [1, inner.map((line) => `$(${line})`)]);
  return fc.tuple(pick("(( % ))", "((%))", "let '%'", "echo $((%))", "echo $[%]"), expression)
    .map(([form, e]) => form.replace("%", e));
}

/** A here-document, with its delimiter quoted or not, `<<-` and tabs, and a body with expansions. */
function hereDocument(inner: Arb, command: Arb): Arb {
  const bodyLine = weighted(
    [4, pick("hi", "beta", "$HOME", "${x:-y}", "$((1+1))", "'$x'", '"q"', "EOF ", " EOF", "EO\\\nF", "\\$(x)")],
    [2, fc.tuple(pick("$(%)", "`%`", "${x:-$(%)}", "a$(%)b"), inner).map(([form, line]) => form.replace("%", line))],
  );
  return fc.tuple(
    command,
    pick("<<EOF", "<<'EOF'", '<<"EOF"', "<<E\\OF", "<<-EOF", "<< EOF", "<<E'O'F", "<<-'EOF'"),
    weighted([4, fc.constant("")], [1, fc.tuple(pick(" | ", " && ", "; ", " || "), inner).map((p) => p.join(""))]),
    joined(bodyLine, "\n", 0, 3),
    weighted([6, fc.constant("")], [1, fc.tuple(pick("\n"), inner).map((p) => p.join(""))]),
  ).map(([cmd, op, rest, body, after]) => {
    const tab = op.startsWith("<<-") ? "\t" : "";
    const lines = body === "" ? "" : body.split("\n").map((line) => tab + line).join("\n") + "\n";
    return `${cmd} ${op}${rest}\n${lines}${tab}EOF${after}`;
  });
}

/** A pipeline or list element with its compound commands, built from `line` (the whole grammar, recursively). */
function compound(line: Arb, command: Arb): Arb {
  const condition = weighted([3, command], [1, line]);
  const body = line;
  const word = weighted([3, pick(...FILES)], [1, argWord(line)]);
  return weighted(
    [2, body.map((b) => `{ ${b}; }`)],
    [1, body.map((b) => `{\n${b}\n}`)],
    [2, body.map((b) => `( ${b} )`)],
    [1, body.map((b) => `(${b})`)],
    [
      2,
      fc.tuple(condition, body, fc.option(body, { nil: undefined }))
        .map(([c, t, e]) => `if ${c}; then ${t};${e === undefined ? "" : ` else ${e};`} fi`),
    ],
    [1, fc.tuple(condition, body, body).map(([c, t, e]) => `if ${c}; then ${t}; elif false; then ${e}; fi`)],
    // Loops that end: the condition fails (while) or succeeds (until) on the first round.
    [1, fc.tuple(condition, body).map(([c, b]) => `while ${c} && false; do ${b}; done`)],
    [1, fc.tuple(condition, body).map(([c, b]) => `until ${c} || true; do ${b}; done`)],
    [1, body.map((b) => `while read -r f; do ${b}; done < list.txt`)],
    [2, fc.tuple(joined(word, " ", 0, 2), body).map(([w, b]) => `for f in ${w}; do ${b}; done`)],
    [1, body.map((b) => `for f; do ${b}; done`)],
    [1, body.map((b) => `for ((i=0; i<2; i++)); do ${b}; done`)],
    [1, fc.tuple(line, body).map(([l, b]) => `for (( i=$(${l}); i<1; i++ )); do ${b}; done`)],
    [
      2,
      fc.tuple(
        word,
        pick("*", "a*|b*", "x", "@(a|b)*", "[ab]*", "$(rm a.txt)", "(a.txt"),
        body,
        pick(";;", ";&", ";;&"),
        body,
      )
        .map(([w, p, a, sep, b]) => `case ${w} in ${p}) ${a} ${sep} *) ${b} ;; esac`),
    ],
    [1, body.map((b) => `select f in a b; do ${b}; break; done < /dev/null`)],
    [2, body.map((b) => `f() { ${b}; }; f`)],
    // A function named like an allowlisted program replaces it for the rest of the line.
    [
      2,
      fc.tuple(pick("ls", "cat", "git", "echo", "test", "[", "grep", "true", "cd"), body, command)
        .map(([name, b, c]) => `${name}() { ${b}; }; ${c}`),
    ],
    [1, fc.tuple(body, command).map(([b, c]) => `function ls { ${b}; }\n${c}`)],
    [1, body.map((b) => `function f { ${b}; }\nf a.txt`)],
    [1, body.map((b) => `function f() ( ${b} ); f`)],
    [1, body.map((b) => `f() { ${b}; } > /dev/null; f`)],
    [1, body.map((b) => `coproc ${b}`)],
    [1, body.map((b) => `coproc c { ${b}; }`)],
    [4, testCommand(line, command)],
    [2, doubleBracket(line)],
    [2, arithmetic(line)],
    // `((` opens arithmetic unless it cannot be, then bash reads two subshells.
    [1, body.map((b) => `((${b}) )`)],
    [1, body.map((b) => `( (${b}) )`)],
    [2, hereDocument(line, command)],
    // Two here-documents on one line: the bodies follow in order.
    [1, fc.tuple(command, line).map(([c, l]) => `${c} <<A; cat <<B\na\nA\n$(${l})\nB`)],
    [1, fc.tuple(command, line).map(([c, l]) => `${c} <<A <<B\nA\n${l}\nB`)],
  );
}

const SEPARATORS = [
  "; ",
  " && ",
  " || ",
  " | ",
  " |& ",
  " & ",
  "\n",
  ";\n",
  " &\n",
  " ;; ",
  "\n\n",
  " # c\n",
  ";#c\n",
  "\r\n",
  " \t",
  "\u00a0; ",
  " \\\n&& ",
  "|\\\n",
];

/** Inserts a line continuation (backslash-newline) at position `at` of `line`, wherever that falls. */
function continueLineAt(line: string, at: number): string {
  const cut = line.length === 0 ? 0 : at % (line.length + 1);
  return `${line.slice(0, cut)}\\\n${line.slice(cut)}`;
}

/**
 * Command lines from the grammar. Nesting is bounded by fast-check's depth
 * control, so lines stay a few hundred characters at most. Needs no
 * permissions.
 *
 * @example
 * ```ts
 * import fc from "fast-check";
 * import { bashLine } from "./_grammar.ts";
 * console.log(fc.sample(bashLine, { seed: 1, numRuns: 3 })); // three command lines
 * ```
 */
export const bashLine: Arb = fc.letrec<{ line: string; element: string }>((tie) => {
  const line = tie("line");
  const command = simpleCommand(line);
  return {
    element: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      { weight: 10, arbitrary: command },
      // The languages inside arguments: sed scripts, awk programs, jq filters, find expressions, git.
      { weight: 3, arbitrary: languageCommand },
      { weight: 4, arbitrary: compound(line, command) },
      // `[`/`test` on their own too: the construct tree-sitter and bash read most differently.
      { weight: 1, arbitrary: testCommand(line, command) },
      { weight: 1, arbitrary: fc.tuple(pick("! ", "time ", "time -p ", "! time "), line).map((p) => p.join("")) },
      { weight: 1, arbitrary: fc.tuple(line, pick(" &", " & wait")).map((p) => p.join("")) },
    ),
    line: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      { weight: 6, arbitrary: tie("element") },
      {
        weight: 3,
        arbitrary: fc.tuple(tie("element"), pick(...SEPARATORS), tie("element")).map(([a, sep, b]) => a + sep + b),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(tie("element"), pick(" # ", " #", "# x\n", " #$(rm a.txt)")).map(([a, c]) => a + c),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(pick("# c\n", "shopt -s extglob\n", "x=1\n", "set -f\n"), tie("element")).map((p) =>
          p.join("")
        ),
      },
      { weight: 1, arbitrary: fc.tuple(tie("element"), fc.nat()).map(([l, at]) => continueLineAt(l, at)) },
      { weight: 1, arbitrary: tie("element").map((l) => `${l}\\`) },
    ),
  };
}).line;
