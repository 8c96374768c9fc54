/**
 * The default shell-command allowlist and token-prefix matching against it.
 *
 * An entry is a sequence of words separated by spaces. A command matches an
 * entry when its first words are exactly the entry's words, so `git diff`
 * matches `git diff --cached` but not `git difftool`, and `ls` matches `ls -la`
 * but not `lsblk`. Two markers change an entry:
 *
 * - `=` before the words: the command must have exactly these words
 *   (`=node --version` allows `node --version` and nothing longer);
 * - `sandbox:` before the words: the command runs code the project controls,
 *   so it runs without asking only inside a working OS sandbox
 *   (`sandbox: make test`). Commands on {@linkcode PROJECT_CODE_COMMANDS} need
 *   the sandbox whichever entry allowed them.
 *
 * @module
 */

import { gitSubcommandWords } from "./_flag_rules_git.ts";
import { listedName } from "./_program_family.ts";

/**
 * The entries of {@linkcode DEFAULT_COMMAND_ALLOWLIST} that list, read,
 * search and print files, and nothing else as the command checker allows
 * them (the options with which some could write make it ask): a line of
 * these alone runs with the workspace read-only (`isReadOnlyLine`). Git,
 * the test runners and the toolchains' checks are not among them: they keep
 * indexes and caches in the workspace.
 *
 * @example
 * ```ts
 * import { READER_COMMANDS } from "@toolfence/policy";
 * console.log(READER_COMMANDS.includes("grep")); // true
 * ```
 */
export const READER_COMMANDS: readonly string[] = Object.freeze([
  // Listing and reading files.
  "ls",
  "pwd",
  "cat",
  "head",
  "tail",
  "wc",
  "echo",
  "printf",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "find",
  "file",
  "stat",
  "du",
  "df",
  "tree",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "diff",
  "cmp",
  "cut",
  "sort",
  "uniq",
  "tr",
  "nl",
  "column",
  "od",
  "hexdump",
  "tac",
  "rev",
  "paste",
  "comm",
  "fold",
  // Their programs and options are judged (awk: no system, getline, | or >; jq: no env or files; xxd: no output file).
  "awk",
  "jq",
  "xxd",
  "true",
  "false",
  "whoami",
  "uname",
  "date",
  "which",
  // Their arguments are only tested (`-v` and `-R` ask: they evaluate subscripts).
  "test",
  "[",
  // Prints, unless its script or options write files or run commands (judged).
  "sed",
]);

/**
 * Commands that only read: they run without asking when nothing else in the
 * command line needs asking. Nothing here writes files or reaches the network by
 * default; the flags with which some of them could write or run other programs
 * (`git diff --output`, `find -delete`, `rg --pre`, ...) are judged separately by
 * the command checker. Test runners are included because running the project's
 * tests is what an agent does most, and they run inside the OS sandbox.
 *
 * Deliberately absent: anything that runs another command (`env`, `xargs`,
 * `nohup`, `time`, `sh`, `bash`, `eval`, `exec`, `sudo`), anything that writes
 * (`tee`, `touch`, `mkdir`; `sed -i` and `sed 'w f'` are judged), pagers
 * (`less` runs `!` commands) and network clients (`curl`, `wget`,
 * `git fetch`). Test runners and git need a working sandbox (see
 * {@linkcode PROJECT_CODE_COMMANDS}).
 *
 * @example
 * ```ts
 * import { DEFAULT_COMMAND_ALLOWLIST } from "@toolfence/policy";
 * console.log(DEFAULT_COMMAND_ALLOWLIST.includes("git status")); // true
 * ```
 */
export const DEFAULT_COMMAND_ALLOWLIST: readonly string[] = Object.freeze([
  ...READER_COMMANDS,
  // Git, read-only subcommands, with and without the pager switched off. Listing
  // subcommands accept only their listing options (judged).
  "git status",
  "git log",
  "git diff",
  "git show",
  "git blame",
  "git rev-parse",
  "git ls-files",
  "git --no-pager status",
  "git --no-pager log",
  "git --no-pager diff",
  "git --no-pager show",
  "git --no-pager blame",
  "git branch",
  "git tag",
  "git remote",
  "git stash list",
  "git config",
  "git --no-pager branch",
  "git --no-pager tag",
  "git --no-pager stash list",
  "git stash show",
  "git describe",
  "git grep",
  "git ls-tree",
  "git cat-file",
  "git rev-list",
  "git merge-base",
  "git show-ref",
  "git for-each-ref",
  "git shortlog",
  "git --no-pager shortlog",
  // Deno's own checks: lint may run the project's lint plugins and fmt --check reads the files deno.json names
  // (so both need the sandbox); fmt --check writes nothing.
  "deno lint",
  "deno fmt --check",
  "deno check",
  "npm ls",
  "npm list",
  // Version and help queries of common tools, exactly.
  ...versionQueries(
    "node deno npm bun python python3 pip pip3 uv git java javac gcc g++ clang make cmake tsc ruby gem perl docker",
  ),
  "=java -version",
  ...["=python -V", "=python3 -V", "=pip -V", "=pip3 -V", "=deno -V", "=uv -V", "=ruby -v", "=perl -v", "=tsc -v"],
  ...["=make -v", "=docker -v", "=bun -v", "=git version"],
  // These start a program the project chooses (.yarnrc.yml's yarnPath and
  // packageManager, rust-toolchain.toml's toolchain, go.mod's toolchain, a
  // php.ini in the current folder), so they need the sandbox.
  ...versionQueries("yarn pnpm cargo rustc rustup php").map((entry) => `sandbox: ${entry}`),
  "sandbox: =go version",
  ...["=yarn -v", "=pnpm -v", "=cargo -V", "=rustc -V", "=php -v"].map((entry) => `sandbox: ${entry}`),
  "=node -v",
  "=npm -v",
  // Test runners.
  "deno test",
  "npm test",
  "npm run test",
  "pytest",
  "python -m pytest",
  "python3 -m pytest",
  "cargo test",
  "go test",
]);

function versionQueries(programs: string): string[] {
  return programs.split(" ").flatMap((program) => [`=${program} --version`, `=${program} --help`]);
}

/**
 * Commands that run code the project controls (its tests, scripts, build files,
 * or programs its repository configuration names), so that without a working
 * OS sandbox they ask even when allowlisted. Matched like allowlist entries
 * against the command's words (git's harmless global options such as
 * `--no-pager` skipped); the first matching entry decides, and an entry that
 * starts with `!` runs no project code. Commands allowed by an exact (`=`)
 * entry only print a version or help and run no project code.
 *
 * @example
 * ```ts
 * import { PROJECT_CODE_COMMANDS } from "@toolfence/policy";
 * console.log(PROJECT_CODE_COMMANDS.includes("deno test")); // true
 * ```
 */
export const PROJECT_CODE_COMMANDS: readonly string[] = Object.freeze([
  // git runs the programs its configuration and attributes name: core.fsmonitor on
  // anything that reads the index, diff.external and textconv filters on diffs and
  // blame, gpg.program with log.showSignature (also on `git stash list`), and the
  // transport of a promisor remote (remote.*.uploadpack, core.sshCommand, a
  // credential helper) on anything that reads an object missing from a partial
  // clone: `git branch -v`, `git tag -n`, and plain `git branch` or `git tag` when
  // branch.sort or tag.sort sorts by a date. Listing remotes and configuration
  // runs none, but reads outside the workspace where no sandbox hides it: the
  // user's ~/.gitconfig (`git config --list`) and the configuration of a
  // repository above the workspace, which git finds when the workspace has none
  // (`git remote -v`, with the credentials a remote's URL carries).
  "!git --version",
  "git",
  "deno test",
  "deno bench",
  "deno run",
  "deno task",
  "deno eval",
  "deno serve",
  "deno repl",
  "deno check",
  "deno lint",
  // Formats or checks the files the project's deno.json names (`fmt.include`,
  // workspace members), which may lie outside the workspace, and prints them.
  "deno fmt",
  "deno compile",
  "deno install",
  "npm",
  "yarn",
  "pnpm",
  "bun",
  "node",
  "tsc",
  "jest",
  "vitest",
  "mocha",
  "pytest",
  "py.test",
  "python",
  "python3",
  "pip",
  "pip3",
  "uv",
  "tox",
  "nox",
  "cargo",
  "rustc",
  "go",
  "make",
  "cmake",
  "ninja",
  // make under its other builds' names, and the drivers of the tests and builds a project describes (perl's t/*.t,
  // CTestTestfile.cmake, CPack's scripts, debian/rules, Makefile.PL): with an allow rule for gmake and the sandbox
  // off, `gmake` ran the workspace's Makefile, which printed a file outside.
  "gmake",
  "bmake",
  "bsdmake",
  "pmake",
  "remake",
  "make-first-existing-target",
  "prove",
  "ctest",
  "cpack",
  "cpan",
  "dpkg-buildpackage",
  "debuild",
  "mvnDebug",
  "gradle",
  "mvn",
  "bundle",
  "rake",
  "ruby",
  "perl",
  "php",
  "composer",
  "dotnet",
  // Runners of packages and interpreters of scripts the project holds.
  "npx",
  "pnpx",
  "bunx",
  "uvx",
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "fish",
  "lua",
  "luajit",
  // Other interpreters and runners of source files: each runs the script, file or expression it is given.
  "tclsh",
  "wish",
  "java",
  "jshell",
  "jrunscript",
  "jjs",
  "pypy",
  "pypy3",
  "irb",
  "guile",
  "racket",
  "sbcl",
  "clisp",
  "ocaml",
  "ghci",
  "runghc",
  "runhaskell",
  "scala",
  "groovy",
  "kotlin",
  "swift",
  "dart",
  "elixir",
  "iex",
  "erl",
  "escript",
  "julia",
  "Rscript",
  "R",
  "pwsh",
  "osascript",
  "ts-node",
  "tsx",
  // The same, for numeric, query and logic languages whose expressions reach the system (`octave --eval
  // 'system(...)'`, PARI's `system`, mongosh's `require("child_process")`), and the other Python and Ruby shells.
  ...("octave octave-cli gp mongosh mongo mit-scheme scheme chez csi gsi swipl gforth qjs gjs rhino tcc ipython " +
    "bpython ptpython pry").split(" "),
  // Tools whose configuration or plugins are code the project holds, run whenever they run: infrastructure tools
  // start the providers a folder names (`terraform validate` ran a provider binary from `terraform.d/plugins/`),
  // playbooks, Vagrantfiles and compose files run commands and mount host folders; linters, bundlers, test and
  // documentation tools load JavaScript or Python configuration and plugins (eslint.config.js, conf.py, mypy and
  // pylint plugins, .rubocop.yml's `require`); task runners and build systems run their files' commands.
  ...("terraform tofu terragrunt pulumi cdk cdktf ansible ansible-playbook vagrant packer docker-compose " +
    "podman-compose eslint prettier stylelint webpack webpack-cli vite rollup babel nyc c8 playwright cypress karma " +
    "ava next nuxt astro ng turbo nx lerna tsup parcel mypy pylint sphinx-build mkdocs jupyter hatch pdm poetry " +
    "pipenv conda rye pre-commit lefthook invoke fab scons waf meson rubocop rails rspec just task bazel bazelisk " +
    "buck2 pants sbt lein mix rebar3 cabal stack dune zig ant earthly nix nix-shell nix-build devbox mise asdf " +
    "direnv").split(" "),
  "docker compose",
  "docker build",
  "docker buildx",
  // Runs every program of the folder it is given.
  "run-parts",
  // Compilers, assemblers and document processors whose sources name more files to take in, anywhere: C's
  // `#include "/outside/secret"` (printed by `gcc -E`, quoted in the error of `gcc -c`), an assembler's `.incbin`,
  // roff's `.so` (`groff t.ms` prints the file, safe mode or not), TeX's `\input`, XSLT's `document()`, an XML
  // entity, jsonnet's `importstr`, protobuf's and Sass's imports. What they read is only known when they run.
  ...("gcc g++ cc c++ cpp clang clang++ clang-cpp gfortran as gas nasm yasm javac kotlinc swiftc ghc nim dmd ldc2 " +
    "gdc fpc groff nroff troff gtroff soelim tbl eqn pic refer tex latex pdflatex xelatex lualatex luatex pdftex " +
    "xetex latexmk context bibtex biber pandoc asciidoctor asciidoc xsltproc xmllint jsonnet cue dhall protoc sass " +
    "sassc lessc").split(" "),
  // Documentation generators, linters, formatters and database tools that import the project's modules or load
  // the configuration the folder they run in holds, which is code or options: `pydoc3 mod` imports mod.py,
  // `ctags -R` reads `.ctags.d/*.ctags` (`-o/outside/file` writes there), flake8's local plugins, JavaScript,
  // TypeScript and PHP configuration files, doclets, plugins and migration scripts.
  ...("pydoc pydoc3 pdoc ctags ctags-universal exuberant-ctags uctags gtags javadoc rustdoc doxygen typedoc jsdoc " +
    "flake8 coverage markdownlint markdownlint-cli2 cspell commitlint lint-staged svelte-check vue-tsc knip " +
    "jscodeshift babel-node php-cs-fixer phpstan psalm phpunit pest golangci-lint tflint cppcheck dprint alembic " +
    "prisma drizzle-kit sequelize knex typeorm").split(" "),
]);

/** An allowlist entry, read. */
export interface AllowlistEntry {
  /** The words the command must start with. */
  words: string[];
  /** Whether the command must have exactly these words. */
  exact: boolean;
  /** Whether the entry is marked as running project code (`sandbox:`). */
  sandbox: boolean;
}

/**
 * Reads an allowlist entry: its words and its `=` and `sandbox:` markers.
 * Surrounding and repeated whitespace is ignored, so that entries typed by a
 * person still match.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { parseAllowlistEntry } from "@toolfence/policy";
 * parseAllowlistEntry("sandbox: make test"); // { words: ["make", "test"], exact: false, sandbox: true }
 * parseAllowlistEntry("=node --version"); // { words: ["node", "--version"], exact: true, sandbox: false }
 * ```
 */
export function parseAllowlistEntry(entry: string): AllowlistEntry {
  let rest = entry.trim();
  const sandbox = rest.startsWith("sandbox:");
  if (sandbox) rest = rest.slice("sandbox:".length).trim();
  const exact = rest.startsWith("=");
  if (exact) rest = rest.slice(1).trim();
  return { words: rest.split(/\s+/).filter((word) => word !== ""), exact, sandbox };
}

/**
 * Whether a command (its words, command name first) runs code the project
 * controls, by {@linkcode PROJECT_CODE_COMMANDS}.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { runsProjectCode } from "@toolfence/policy";
 * runsProjectCode(["npm", "test"]); // true
 * runsProjectCode(["ls", "-la"]); // false
 * ```
 */
export function runsProjectCode(words: readonly string[], list: readonly string[] = PROJECT_CODE_COMMANDS): boolean {
  if (words[0]?.includes("/")) return true;
  // An interpreter under another of its names (`python3.11`, `perl5.36.0`, `nodejs`) runs code as it does.
  const program = words[0] === undefined
    ? undefined
    : listedName(words[0], (name) =>
      list.some((entry) => parseAllowlistEntry(entry.replace(/^!/, "")).words[0] === name));
  const named = program === undefined ? words : [program, ...words.slice(1)];
  const normalised = named[0] === "git" ? ["git", ...gitSubcommandWords(named.slice(1))] : named;
  for (const entry of list) {
    const negated = entry.startsWith("!");
    const { words: expected } = parseAllowlistEntry(negated ? entry.slice(1) : entry);
    if (expected.length === 0 || expected.length > normalised.length) continue;
    if (expected.every((word, index) => normalised[index] === word)) return !negated;
  }
  return false;
}

/**
 * Finds the allowlist entry a command's words start with.
 *
 * Matching is by whole words: every word of the entry must equal the word at
 * the same position of the command; an exact (`=`) entry also needs as many
 * words as the command has. An empty entry never matches.
 *
 * @param words The words of one simple command, command name first, after quote
 *   removal (`"l"s` is `ls`).
 * @param allowlist The entries to match against.
 * @returns The first matching entry, or `undefined` when none matches.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { matchesAllowlist } from "@toolfence/policy";
 * matchesAllowlist(["git", "diff", "--cached"], ["git diff"]); // "git diff"
 * matchesAllowlist(["git", "difftool"], ["git diff"]); // undefined
 * ```
 */
export function matchesAllowlist(
  words: readonly string[],
  allowlist: readonly string[],
): string | undefined {
  for (const entry of allowlist) {
    const { words: expected, exact } = parseAllowlistEntry(entry);
    if (expected.length === 0 || expected.length > words.length) continue;
    if (exact && expected.length !== words.length) continue;
    if (expected.every((word, index) => words[index] === word)) return entry;
  }
  return undefined;
}
