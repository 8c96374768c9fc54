/**
 * Generators for the languages inside arguments, shared by the grammar
 * fuzzer (`_grammar.ts`, whose lines run in the oracle's sandbox) and the
 * readers' own tests (which run them against the installed programs): GNU sed
 * scripts, awk programs, jq filters, find expressions and git invocations,
 * each from its grammar or option table, with the files they name drawn from
 * a list the caller gives (the oracle adds paths that reach outside the
 * workspace).
 *
 * @module
 */
import fc from "fast-check";
import { GIT_OPTIONS } from "../../policy/shell/_git_options.ts";

type Arb = fc.Arbitrary<string>;

/**
 * GNU sed scripts as `-e` pieces: commands with every address form, `!`,
 * blocks, labels, texts, `s` and `y` with their flags, and the file commands
 * naming one of `files`; glued by every separator, so that some do not
 * compile. The first piece defines the labels the jumps name.
 */
export function sedScript(files: readonly string[]): fc.Arbitrary<string[]> {
  const address = fc.constantFrom(
    "",
    "",
    "1",
    "$",
    "/a/",
    "/a/I",
    "\\,a,",
    "\\;x;",
    "/[/]/",
    "0~3",
    "2,+3",
    "1,~4",
    "0,/b/",
    "/a/,/b/",
    "3,$",
    "/x/ M",
  );
  const bang = fc.constantFrom("", "", "!", " ! ");
  const label = fc.constantFrom("a", "end", "x1", "a;b", "a}", "a#c");
  const command = fc.oneof(
    fc.constantFrom("p", "d", "D", "n", "N", "P", "h", "H", "g", "G", "x", "=", "F", "z", "l", "l 5", "q", "q 3", "Q"),
    fc.constantFrom("L 2", "s/a/b/", "s|a|b|g", "s/a/b/ 2 p", "s/a/b/I", "s,[,],x,", "y/ab/cd/", "y,a\\,,b;,"),
    fc.constantFrom("s/a/b/e", "s/a/b/gw out", "s/a/b/ w x;p", "s/x/y/pe", "e", "e touch x"),
    fc.tuple(fc.constantFrom("b", "t", "T"), fc.constantFrom("", " "), label).map((parts) => parts.join("")),
    fc.tuple(fc.constantFrom("r", "R", "w", "W"), fc.constantFrom("", " "), fc.constantFrom(...files)).map((parts) =>
      parts.join("")
    ),
    fc.tuple(fc.constantFrom("a", "i", "c"), fc.constantFrom(" ", "\\\n", "\\", "  "), fc.constantFrom("t e x", "t\\"))
      .map(
        (parts) => parts.join(""),
      ),
  );
  // Labels, comments and `v` take no address.
  const bare = fc.oneof(
    fc.constantFrom("v", "v 4.2", "#c", "#"),
    label.map((name) => `:${name}`),
    label.map((name) => `: ${name}`),
  );
  const separator = fc.constantFrom(";", "\n", ";", "\n", " ; ", " ", "\t", "");
  const addressed = fc.tuple(address, bang, command).map((parts) => parts.join(""));
  const commands = fc.array(
    fc.tuple(fc.oneof({ weight: 5, arbitrary: addressed }, bare), separator).map((parts) => parts.join("")),
    {
      minLength: 1,
      maxLength: 4,
    },
  );
  // A block around some commands; the labels every generated jump may name (a jump to a missing one is refused).
  const piece = fc.tuple(commands, fc.option(fc.tuple(address, commands, separator), { freq: 3 })).map(
    ([head, block]) => head.join("") + (block === null ? "" : `${block[0]}{${block[1].join("")}}${block[2]}`),
  );
  return fc.array(piece, { minLength: 1, maxLength: 2 }).map((pieces) => [":a\n:end\n:x1", ...pieces]);
}

/** Shell-quotes a word for a generated line: single quotes, `'` written as `'\''`. */
function quoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** `sed [options] -e PIECE... FILE...` and `sed [options] 'SCRIPT' FILE...`. */
export function sedLine(files: readonly string[]): Arb {
  const options = fc.subarray(["-n", "-s", "-E", "-z", "--posix", "--sandbox", "-u", "--debug"], { maxLength: 2 });
  const inputs = fc.array(fc.constantFrom(...files), { maxLength: 2 });
  return fc.tuple(options, sedScript(files), fc.boolean(), inputs).map(([opts, pieces, asOperand, operands]) => {
    const script = asOperand ? [quoted(pieces.join("\n"))] : pieces.flatMap((piece) => ["-e", quoted(piece)]);
    return ["sed", ...opts, ...script, ...operands].join(" ");
  });
}

/**
 * awk statements: printing, arithmetic and regexes that look like the risky
 * forms (`(a > b)`, `/a|b/`, strings naming `system`), and the risky forms
 * themselves, reading or writing one of `files`.
 */
export function awkStatement(files: readonly string[]): Arb {
  const file = fc.constantFrom(...files).map((name) => JSON.stringify(name));
  return fc.oneof(
    fc.constantFrom(
      "print 1",
      "print (1 > 2)",
      "x = 4 / 2 / 1",
      'if ("a" ~ /b|c/) n++',
      'print "system(1) | getline"',
      "getline",
      "close(x)",
      'y = length("ab")',
      "print $1, NR",
      'system("true")',
      'print 1 | "cat"',
      '"true" | getline v',
      "ARGC = 1",
      'print 1 > "/dev/null"',
    ),
    file.map((name) => `print "x" > ${name}`),
    file.map((name) => `printf("%s", 1) >> ${name}`),
    file.map((name) => `getline v < ${name}`),
    file.map((name) => `ARGV[1] = ${name}; ARGC = 2`),
  );
}

/** awk programs: a few statements in BEGIN, in a main rule, or in both. */
export function awkProgram(files: readonly string[]): Arb {
  const statements = fc.array(awkStatement(files), { minLength: 1, maxLength: 3 }).map((parts) => parts.join("; "));
  return fc.tuple(fc.constantFrom("BEGIN", "", "NR == 1", "/a/"), statements).map(([pattern, body]) =>
    `${pattern} { ${body} }`
  );
}

/** `awk [-F x] [-v n=1] 'PROGRAM' [FILE | var=value]...`. */
export function awkLine(files: readonly string[]): Arb {
  const options = fc.subarray(["-F:", "-v n=1", "-f prog.awk", "--"], { maxLength: 2 });
  const operands = fc.array(fc.oneof(fc.constantFrom(...files), fc.constant("n=2")), { maxLength: 2 });
  return fc.tuple(fc.constantFrom("awk", "gawk", "mawk"), options, awkProgram(files), operands).map(
    ([name, opts, program, rest]) => [name, ...opts, quoted(program), ...rest].join(" "),
  );
}

/** `jq [options] 'FILTER' [FILE]...`, with `--rawfile`/`--slurpfile` naming one of `files`. */
export function jqLine(files: readonly string[]): Arb {
  const file = fc.constantFrom(...files);
  const option = fc.oneof(
    fc.constantFrom("-r", "-c", "-n", "-s", "-e", "-S", "-nr", "--arg a b", "--argjson j 1", "--tab", "--indent 1"),
    fc.constantFrom("-f prog.jq", "-L .", "--args", "--seq"),
    file.map((name) => `--rawfile t ${name}`),
    file.map((name) => `--slurpfile s ${name}`),
  );
  const filter = fc.constantFrom(
    ".",
    ".a",
    "keys",
    ".[]?",
    "input_filename",
    "$__loc__",
    "[inputs]",
    "env.HOME",
    "$ENV | keys",
    '"\\(env)"',
    'import "x" as x; .',
    "$t",
    ".env",
  );
  return fc.tuple(fc.array(option, { maxLength: 2 }), filter, fc.array(file, { maxLength: 2 })).map(
    ([opts, text, inputs]) => ["jq", ...opts, quoted(text), ...inputs].join(" "),
  );
}

/** `find [-H|-L] START... EXPRESSION`: primaries whose values look like the risky ones, and the risky ones. */
export function findLine(files: readonly string[]): Arb {
  const file = fc.constantFrom(...files);
  const value = fc.constantFrom("a.txt", "-delete", "-exec", "'*.txt'", "';'", "-fprint", "1", "f");
  const primary = fc.oneof(
    fc.constantFrom("-print", "-true", "-false", "-prune", "-empty", "!", "-o", "-a", "-not", "-quit", "-ls"),
    fc.tuple(fc.constantFrom("-name", "-path", "-iname", "-regex", "-type", "-maxdepth"), value).map((parts) =>
      parts.join(" ")
    ),
    file.map((name) => `-newer ${name}`),
    file.map((name) => `-samefile ${name}`),
    fc.constantFrom("-newermt 2020-01-01", "-delete", "-exec rm {} \\;", "-execdir rm {} +", "-fprint out.txt"),
    fc.constantFrom("-fls out.txt", "-fprintf out.txt %p", "-ok rm {} \\;"),
  );
  return fc.tuple(
    fc.subarray(["-L", "-H", "-P"], { maxLength: 1 }),
    fc.array(fc.oneof(fc.constantFrom(".", "sub"), file), { minLength: 0, maxLength: 2 }),
    fc.array(primary, { minLength: 1, maxLength: 4 }),
  ).map(([options, starts, primaries]) => ["find", ...options, ...starts, ...primaries].join(" "));
}

/**
 * git invocations: global options (`-C`, `-c`, `--git-dir`, ...), then a
 * listing subcommand with words drawn from the installed git's option table
 * (`_git_options.ts`), values that look like options, and names; or a
 * reading subcommand with options that name files.
 */
export function gitLine(files: readonly string[]): Arb {
  const file = fc.constantFrom(...files);
  const global = fc.oneof(
    fc.constantFrom("", "", "", "--no-pager", "-P", "-c core.pager=cat", "--git-dir=.git", "--work-tree=."),
    file.map((name) => `-C ${name}`),
  );
  const tableWord = (sub: string) =>
    fc.oneof(
      fc.constantFrom(...Object.keys(GIT_OPTIONS[sub].long).map((name) => `--${name}`)),
      fc.constantFrom(...Object.keys(GIT_OPTIONS[sub].short).map((name) => `-${name}`)),
      fc.constantFrom("NAME", "HEAD", "--list", "-l", "'%(refname)'", "--sort=refname"),
    );
  const listing = fc.constantFrom("branch", "tag").chain((sub) =>
    fc.array(tableWord(sub), { minLength: 0, maxLength: 3 }).map((words) => [sub, ...words].join(" "))
  );
  const reading = fc.oneof(
    fc.constantFrom("cat-file -p HEAD:a.txt", "cat-file --filters HEAD:a.txt", "show HEAD:a.txt", "log -1 --stat"),
    file.map((name) => `blame --contents ${name} a.txt`),
    file.map((name) => `diff --no-index a.txt ${name}`),
    file.map((name) => `grep -f ${name} HEAD`),
    file.map((name) => `ls-files --exclude-from=${name} -o`),
    file.map((name) => `log -- ${name}`),
  );
  return fc.tuple(global, fc.oneof(listing, reading)).map(([options, rest]) =>
    ["git", options, rest].filter((part) => part !== "").join(" ")
  );
}

/**
 * Files an argument language may name in the oracle's sandbox: workspace
 * files, and the secret planted outside the workspace (`/srv/outside`,
 * reached absolutely, by `..` from the workspace `/tmp/ws`, from the home
 * folder, and through a glob).
 */
export const ORACLE_LANGUAGE_FILES: readonly string[] = [
  "a.txt",
  "b.txt",
  "data.json",
  "sub/c.txt",
  "/srv/outside/secret",
  "../../srv/outside/secret",
  "~/../../srv/outside/secret",
  '"$HOME/../../srv/outside/secret"',
  "/srv/outside/*",
  "/srv/outside",
];

/** One command line in one of the argument languages, naming {@linkcode ORACLE_LANGUAGE_FILES}. */
export const languageCommand: Arb = fc.oneof(
  sedLine(ORACLE_LANGUAGE_FILES),
  awkLine(ORACLE_LANGUAGE_FILES),
  jqLine(ORACLE_LANGUAGE_FILES),
  findLine(ORACLE_LANGUAGE_FILES),
  gitLine(ORACLE_LANGUAGE_FILES),
);
