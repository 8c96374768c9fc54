import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { checkCommand, type CommandCheck } from "../../../policy/shell/check_command.ts";
import { flagProblem } from "../../../policy/shell/_flag_rules.ts";
import type { PathOperand } from "../../../policy/shell/_path_operands.ts";
import type { BashWord } from "../../../policy/shell/_tree.ts";

// The sandbox is taken as working here: these tests are about flags.
const SANDBOX = { available: true };

async function verdict(command: string, workspaceRoot?: string): Promise<CommandCheck> {
  return await checkCommand(command, { sandbox: SANDBOX, ...(workspaceRoot ? { workspaceRoot } : {}) });
}

async function allows(command: string, workspaceRoot?: string): Promise<void> {
  const result = await verdict(command, workspaceRoot);
  assert.equal(result.verdict, "allow", `${JSON.stringify(command)} asked: ${result.reasons.join(" | ")}`);
}

/** Asserts the command asks and a reason names `named` (default: nothing particular). */
async function asks(command: string, named?: string, workspaceRoot?: string): Promise<void> {
  const result = await verdict(command, workspaceRoot);
  assert.equal(result.verdict, "ask", `${JSON.stringify(command)} was allowed`);
  if (named !== undefined) {
    assert.ok(
      result.reasons.some((reason) => reason.includes(named)),
      `${JSON.stringify(command)}: no reason names ${JSON.stringify(named)}: ${result.reasons.join(" | ")}`,
    );
  }
}

/** Every way getopt, clap, nopt and argparse let a long option and its value be written. */
function spellings(option: string, value: string): string[] {
  const forms = [`${option}=${value}`, `${option} ${value}`];
  // Unique prefixes (git, npm and GNU getopt accept them); at least 3 letters after `--`.
  for (let end = option.length - 1; end >= 5; end--) forms.push(`${option.slice(0, end)}=${value}`);
  return forms;
}

describe("flag rules: the gaps of issue 12", () => {
  test("each listed gap asks, naming the flag", { timeout: 60_000 }, async () => {
    const cases: [string, string][] = [
      ["npm test -C /tmp/other", "`-C`"],
      ["npm test -C../other", "`-C`"],
      ["npm test --logs-dir=/abs", "`--logs-dir`"],
      ["npm run test --logs-dir /abs", "`--logs-dir`"],
      ["pytest --log-file=/abs/log", "`--log-file`"],
      ["python -m pytest --log-file /abs/log", "`--log-file`"],
      ["cargo test -- --logfile /abs", "`--logfile`"],
      ["cargo test -- --logfile=/abs", "`--logfile`"],
      ["deno test --junit-path=/abs/j.xml", "`--junit-path`"],
      ["deno test --coverage=/abs", "`--coverage`"],
      ["deno test --junit-path=/abs --coverage=/abs", "`--junit-path`"],
      // pytest reads the arguments of `@FILE` in place of any word starting with `@`, an option's value too.
      ["pytest @args.txt", "`@args.txt` makes pytest read its arguments from a file"],
      ["pytest -k @args.txt", "`@args.txt`"],
      ["python3 -m pytest -- '@a'", "`'@a'`"],
      ["go test -test.cpuprofile=/abs ./...", "`-test.cpuprofile`"],
      ["go test -cpuprofile /abs ./...", "`-cpuprofile`"],
      ["go test ./... -args -test.cpuprofile=/abs", "`-test.cpuprofile=/abs`"],
      ["go test ./... -args -test.trace=../t.out", "`-test.trace=../t.out`"],
      ["go test ./... -args -test.testlogfile=/abs", "`-test.testlogfile=/abs`"],
      ["go test -test.coverprofile=/abs/c.out ./...", "`-test.coverprofile`"],
      ["go test -coverprofile ../c.out ./...", "`-coverprofile`"],
      ["go test -o /usr/local/bin/x.test -c .", "`-o`"],
      ["go test ./... -args -test.cpuprofile /abs", "`/abs`"],
      ["go test -test.outputdir=/abs ./...", "`-test.outputdir`"],
      ["deno test --config=/abs/deno.json", "`--config`"],
      ["deno test -c /abs/deno.json", "`-c`"],
      ["deno test --import-map=/abs/map.json", "`--import-map`"],
      ["deno test https://example.com/x_test.ts", "URL"],
      ["deno test npm:evil", "scheme"],
      ["deno test jsr:@evil/x", "scheme"],
      ["git diff --ext-diff", "`--ext-diff`"],
      ["git log -p --textconv", "`--textconv`"],
      ["git log -p --textc", "`--textc`"],
      ["git show --show-signature", "`--show-signature`"],
      ["git log --format=%GS", "signatures"],
      ["git log '--pretty=format:%G?'", "signatures"],
      ["git diff -Oorderfile", "`-O`"],
      ["git for-each-ref --sort=signature:grade", "signatures"],
      ["git for-each-ref '--format=%(signature:key)'", "signatures"],
    ];
    for (const [command, named] of cases) await asks(command, named);
  });

  test("diff -l starts pr, which the allowlist does not hold: it asks", { timeout: 60_000 }, async () => {
    // Before, `diff -l a b` ran /usr/bin/pr without asking (strace showed the exec), sandbox or not.
    const folder = await mkdtemp(join(tmpdir(), "toolfence-diff-l-"));
    try {
      await writeFile(join(folder, "a"), "a\n");
      await writeFile(join(folder, "b"), "b\n");
      for (const line of ["diff -l a b", "diff -ul a b", "diff --paginate a b", "diff --pag -u a b", "diff a b -l"]) {
        await asks(line, "pr", folder);
      }
      for (const line of ["diff -u a b", "diff -- -l a", "diff -q a b"]) await allows(line, folder);
      // What it does: pr's page header (the date and the command) comes before the diff.
      const run = spawnSync("diff", ["-l", "a", "b"], { cwd: folder, encoding: "utf8" });
      assert.match(run.stdout, /diff -l a b\s+Page 1/, run.stderr);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("abbreviations and both value spellings of dangerous long options ask", { timeout: 60_000 }, async () => {
    const cases: [string, string, string][] = [
      ["git diff", "--output", "f"],
      ["git log", "--ext-diff", ""],
      ["git log", "--textconv", ""],
      ["git log", "--show-signature", ""],
      ["git log", "--open-files-in-pager", "vi"],
      ["npm test", "--prefix", "/tmp/other"],
      ["npm test", "--script-shell", "/tmp/x"],
      ["npm test", "--userconfig", "/tmp/rc"],
      ["npm test", "--node-options", "--require=/tmp/x.js"],
      ["pytest", "--basetemp", "/tmp/x"],
      ["pytest", "--rootdir", "/tmp/x"],
      ["pytest", "--confcutdir", "/"],
      ["pytest", "--override-ini", "addopts=-p x"],
      ["cargo test", "--manifest-path", "/tmp/Cargo.toml"],
      ["cargo test", "--manifest-path", "../other/Cargo.toml"],
      ["cargo test", "--target-dir", "/tmp/t"],
      ["cargo test", "--config", "x=1"],
      ["deno test", "--import-map", "m.json"],
      ["deno test", "--v8-flags", "--prof"],
      ["deno test", "--preload", "/tmp/x.ts"],
      ["sort", "--output", "f"],
      ["sed", "--in-place", "x"],
    ];
    for (const [program, option, value] of cases) {
      for (const form of value === "" ? [option] : spellings(option, value)) {
        await asks(`${program} ${form} x`);
        // Options after operands are options too (getopt permutes, clap and nopt read them anywhere).
        await asks(`${program} x ${form}`);
      }
    }
  });

  test("short options ask in clusters and with attached values", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "npm test -sC /tmp",
        "pytest -xp evil",
        "pytest -vpevil",
        "pytest -p evil.no:x",
        "pytest -qc/tmp/ini",
        "python -m pytest -x -o addopts=x",
        "deno test -Ac /tmp/deno.json",
        // clap reads `-Rc/x` as `-R -c/x` (optional values need `=`).
        "deno test -Rc/tmp/deno.json",
        "deno test -RWc=/tmp/deno.json",
        "deno test -R -Ec/tmp/x",
        "deno test -qc x",
        "cargo test -Zunstable-options",
        "cargo test -vC /tmp",
        "sort -uo out f",
        "sed -ni s/a/b/ f",
        "git branch -ad x",
        "git tag -ld x",
      ]
    ) {
      await asks(command);
    }
  });

  test("go's flags ask with one dash or two, and with their values in either place", { timeout: 60_000 }, async () => {
    for (const flag of ["exec", "toolexec", "o", "C", "coverprofile", "modfile", "overlay", "ldflags", "gcflags"]) {
      for (const form of [`-${flag}=/tmp/x`, `-${flag} /tmp/x`, `--${flag}=/tmp/x`, `--${flag} /tmp/x`]) {
        await asks(`go test ${form} ./...`, `-${flag}`);
        await asks(`go test ./... ${form}`, `-${flag}`);
      }
    }
    // A boolean-like flag does not take the next word: that word is a package and judged.
    await asks("go test -buildvcs /tmp/other", "outside the workspace");
    await asks("go test ../other/...", "`..`");
    await asks("go test example.com/evil/pkg", "another module");
  });

  test("words after the boundaries are judged for the program that receives them", { timeout: 60_000 }, async () => {
    await asks("npm test -- --outputFile=/tmp/x", "passed on to the test script");
    await asks("npm run test -- --config ../other.js", "`..`");
    await asks("npm test -- -o/tmp/x");
    await asks("npm test -- --reporter=x,/tmp/out");
    await asks("deno test -A -- ~/secrets", "only known when the command runs");
    await asks("deno test -A -- '~/secrets'", "home folder");
    await asks("cargo test -- --format=json --logfile /tmp/l");
    await asks("go test ./... -args -outfile=/tmp/x");
    await asks("npm test -- $X", "could expand into an option");
    await asks("npm test -- $(ls)");
  });

  test("words that may expand into options ask", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "deno test $FLAGS",
        "deno test *",
        "npm test $X",
        "pytest $ARGS",
        "cargo test -- $X",
        "go test $P",
        "git branch $X",
        "git remote $X",
        "sed -n $S f",
        "test $X",
      ]
    ) {
      await asks(command, "could expand into an option");
    }
  });

  test("operands known only at run time ask where they are judged as paths", { timeout: 60_000 }, async () => {
    // `x$P` could be `x/../../elsewhere`.
    for (const command of ['deno test "x$P"', 'pytest "tests$P"', 'go test "./$P"', 'npm test "a$P"']) {
      await asks(command, "only known when the command runs");
    }
  });

  test("objects' own property names are not options", { timeout: 60_000 }, async () => {
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      await asks(`npm test --${name}`, `--${name}`);
      await asks(`deno test --${name}=x`, `--${name}`);
      await asks(`go test -${name} ./...`, `-${name}`);
    }
  });

  test("everyday test-runner lines run", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "deno test",
        "deno test -A",
        "deno test -A --no-check --filter 'parses x' tests/parser_test.ts",
        "deno test --allow-read=. --allow-write=/tmp tests/",
        "deno test -A --coverage=cov --junit-path=report.xml",
        "deno test -A --parallel --fail-fast --reporter=dot",
        "deno test -A --unstable-kv -- --extra arg",
        "deno test --help",
        "npm test",
        "npm test --silent",
        "npm test -- --watch=false",
        "npm run test -- tests/unit",
        "npm test -- -t 'a name'",
        "pytest",
        "pytest -x -vv --tb=short -k 'a and not b' tests/test_a.py::test_x",
        "pytest -q --maxfail=1 --durations=5 -rA",
        "pytest --junitxml=reports/junit.xml --log-file=logs/test.log",
        "python -m pytest -q tests",
        "python3 -m pytest --lf -x",
        "pytest --version",
        "cargo test",
        "cargo test --release -p core --features serde -- --nocapture --test-threads=1",
        "cargo test parse_ -- --exact --logfile target/log.txt",
        "cargo test --all-targets --locked -q",
        "go test ./...",
        "go test -run 'TestA|TestB' -count=1 -v -race ./pkg/...",
        "go test -cover -coverpkg=./... -timeout 30s .",
        "go test ./... -args -test.v -test.run X",
        "go test -coverprofile=coverage.out ./...",
        "go test -cpuprofile cpu.out -memprofile mem.out -bench . ./pkg",
        "go test -c -o bin/pkg.test ./pkg",
        "go test ./... -args -test.cpuprofile=cpu.out",
        "deno test -A --no-check=remote tests/",
        "deno test -A --watch",
        "pytest -p no:cacheprovider -W ignore::DeprecationWarning",
        "pytest --timeout=10 --reruns 2 --no-cov",
        "cargo test --manifest-path sub/Cargo.toml --target-dir target/alt",
      ]
    ) {
      await allows(command);
    }
  });

  test("paths inside the workspace root count as inside when it is known", { timeout: 60_000 }, async () => {
    await allows("deno test --coverage=/work/proj/cov", "/work/proj");
    await asks("deno test --coverage=/work/projother", "outside the workspace", "/work/proj");
    await asks("deno test --coverage=/work/proj/../x", "`..`", "/work/proj");
    await allows("pytest /work/proj/tests", "/work/proj");
    await asks("pytest /work/other/tests", "outside the workspace", "/work/proj");
  });
});

describe("flag rules: git's listing subcommands", () => {
  test("listing runs", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "git branch",
        "git branch -a",
        "git branch -vv",
        "git branch -r --sort=-committerdate",
        "git branch --show-current",
        "git branch --list 'feat/*'",
        "git branch -l 'feat/*'",
        "git branch --merged main",
        "git branch --contains HEAD~3",
        "git branch --format='%(refname:short)'",
        "git --no-pager branch -a",
        "git remote",
        "git remote -v",
        "git remote --verbose",
        "git remote show",
        "git remote show -n origin",
        "git remote get-url origin",
        "git remote get-url --push origin",
        "git stash list",
        "git stash list --oneline",
        "git tag",
        "git tag -l 'v1.*'",
        "git tag --list --sort=-v:refname",
        "git tag -n5",
        "git tag --contains HEAD",
        "git config --get user.name",
        "git config --get-all remote.origin.fetch",
        "git config --list",
        "git config -l --show-origin",
        "git config --get-regexp '^alias\\.'",
        "git config get user.email",
        "git config list --local",
        "git config user.name",
        "git config --global --type=bool core.bare",
        "git config --get x.y z",
        "git tag --no-column",
        "git --version",
        "git log -p --text",
        "git diff --text a b",
      ]
    ) {
      await allows(command);
    }
  });

  test("their adversarial twins ask", { timeout: 60_000 }, async () => {
    const cases: [string, string][] = [
      ["git branch foo", "create a branch"],
      ["git branch -d foo", "`-d`"],
      ["git branch -D foo", "`-D`"],
      ["git branch -m a b", "`-m`"],
      ["git branch -M b", "`-M`"],
      ["git branch -c a b", "`-c`"],
      ["git branch -f main HEAD~1", "`-f`"],
      ["git branch --delete foo", "`--delete`"],
      ["git branch --del foo", "`--del`"],
      ["git branch --set-upstream-to=origin/x", "`--set-upstream-to`"],
      ["git branch -u origin/x", "`-u`"],
      ["git branch --unset-upstream", "`--unset-upstream`"],
      ["git branch --edit-description", "`--edit-description`"],
      ["git branch --track x origin/x", "`--track`"],
      ["git branch -a newbranch", "create a branch"],
      ["git branch --contains HEAD newbranch", "create a branch"],
      ["git branch --format='%(signature)'", "signatures"],
      ["git branch --sort=signature:grade", "signatures"],
      ["git tag -l --sort signature", "signatures"],
      ["git branch --li 'x'", "`--li`"],
      ["git remote show origin", "network"],
      ["git remote add evil https://x", "`git remote add`"],
      ["git remote remove origin", "`git remote remove`"],
      ["git remote set-url origin x", "`git remote set-url`"],
      ["git remote update", "`git remote update`"],
      ["git remote prune origin", "`git remote prune`"],
      ["git remote -v add x y", "`git remote add`"],
      ["git stash", "not on the allowlist"],
      ["git stash pop", "not on the allowlist"],
      ["git stash list -p", "`-p`"],
      ["git stash list --format=%GS", "signatures"],
      ["git stash list --ext-diff", "`--ext-diff`"],
      ["git tag v1", "create a tag"],
      ["git tag -a v1 -m x", "`-a`"],
      ["git tag -d v1", "`-d`"],
      ["git tag -s v1", "`-s`"],
      ["git tag -v v1", "`-v`"],
      ["git tag --verify v1", "`--verify`"],
      ["git tag -f v1", "`-f`"],
      ["git tag --contains HEAD newtag", "create a tag"],
      ["git config user.name x", "may change the configuration"],
      ["git config user.name x y", "may change the configuration"],
      ["git config", "may change the configuration"],
      ["git config --unset user.name", "`--unset`"],
      ["git config --add x.y z", "`--add`"],
      ["git config --edit", "`--edit`"],
      ["git config -e", "`-e`"],
      ["git config --replace-all x y", "`--replace-all`"],
      ["git config --rename-section a b", "`--rename-section`"],
      ["git config set user.name x", "`git config set` changes the configuration"],
      ["git config -f /tmp/cfg --list", "`-f`"],
      ["git config edit --list", "`git config edit`"],
      ["git config set --list x", "`git config set`"],
      ["git config unset --get x", "`git config unset`"],
      // git config stops reading options at its first operand: these set x.y (fuzzer, seed 20261207), and
      // `core.fsmonitor` names a program git then runs.
      ["git config x.y z --list", "`--list` comes after `git config`'s first operand `x.y`"],
      ["git config core.fsmonitor rm --list", "`--list` comes after `git config`'s first operand"],
      ["git config x.y --get", "`--get` comes after"],
      ["git config x.y z -l", "`-l` comes after"],
      ["git config x.y z --get-regexp", "`--get-regexp` comes after"],
      ["git config x.y z --show-origin", "`--show-origin` comes after"],
      // A name bash expands into several words is a name and a value, which git config sets (fuzzer, seed
      // 20261210: `git config {a,b}.txt` wrote .git/config); `core.{editor,pager}` sets the editor git runs.
      ["git config {a,b}.txt", "`{a,b}.txt` may expand to a name and a value"],
      ["git config core.{editor,pager}", "`core.{editor,pager}` may expand to a name and a value"],
      ["git config a.tx?", "`a.tx?` may expand"],
      // `--column` makes git tag and git branch run `git column` (fuzzer, seed 20261207).
      ["git tag --column", "`--column`"],
      ["git branch --column=always", "`--column`"],
      ["git -c core.pager=sh branch", "`git -c` is not on the allowlist"],
      ["git -C /tmp/other branch", "`git -C` is not on the allowlist"],
    ];
    for (const [command, named] of cases) await asks(command, named);
  });

  test("with `git` itself allowlisted, global options must be known to be harmless", { timeout: 60_000 }, async () => {
    const judge = (command: string) => checkCommand(command, { allowlist: ["git"], sandbox: SANDBOX });
    for (const command of ["git --no-pager branch", "git -P log", "git --literal-pathspecs tag -l", "git --version"]) {
      assert.equal((await judge(command)).verdict, "allow", command);
    }
    const cases: [string, string][] = [
      ["git -C /tmp/other branch", "`-C`"],
      ["git -C/tmp/other branch", "`-C/tmp/other`"],
      ["git -c core.pager=sh branch", "`-c`"],
      ["git --git-dir=/tmp/x/.git tag", "`--git-dir=/tmp/x/.git`"],
      ["git --work-tree=/tmp tag", "`--work-tree=/tmp`"],
      ["git --exec-path=/tmp log", "`--exec-path=/tmp`"],
      ["git --namespace=x branch", "`--namespace=x`"],
      ["git --no-pager -c x=y log", "`-c`"],
      ["git -p log", "`-p`"],
    ];
    for (const [command, named] of cases) {
      const result = await judge(command);
      assert.equal(result.verdict, "ask", command);
      assert.ok(result.reasons.some((reason) => reason.includes(named)), `${command}: ${result.reasons.join(" | ")}`);
    }
  });
});

describe("flag rules: sed, test and cd", () => {
  test("sed with only printing scripts runs", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "sed -n '1,20p' f",
        "sed -n 10p f",
        "sed -n '/start/,/end/p' f",
        "sed 's/a/b/g' f",
        "sed -E 's/(a)+/\\1/' f",
        "sed -n -e '$=' f",
        "sed '/^#/d' f g",
        "cat f | sed 's/x/y/'",
      ]
    ) {
      await allows(command);
    }
  });

  test("sed that writes or runs asks", { timeout: 60_000 }, async () => {
    const cases: [string, string][] = [
      ["git stash show --ext-diff", "`--ext-diff`"],
      ["git stash show --output=x", "`--output=x`"],
      ["sed -i s/a/b/ f", "`-i`"],
      ["sed -i.bak s/a/b/ f", "`-i.bak`"],
      ["sed s/a/b/ -i f", "`-i`"],
      ["sed --in-place s/a/b/ f", "`--in-place`"],
      ["sed --in s/a/b/ f", "`--in`"],
      ["sed -n 'w out' f", "w command"],
      ["sed 'W out' f", "W command"],
      ["sed 's/a/b/w out' f", "e or w flag"],
      ["sed 's/a/b/e' f", "e or w flag"],
      ["sed 's/a/b/gw out' f", "e or w flag"],
      ["sed '1e id' f", "e command"],
      ["sed -e p -e 'e id' f", "e command"],
      ["sed -n -- 'w out' f", "w command"],
      ["sed -f prog.sed f", "`-f`"],
      ["sed --file=prog.sed f", "`--file=prog.sed`"],
      ["sed -i -n 's/x/y/w /dev/stdout' f", "`-i`"],
    ];
    for (const [command, named] of cases) await asks(command, named);
  });

  test("test and [ run with their arguments; -v and -R ask", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "test -f x && echo y",
        "[ -f x ] && echo y",
        'test -n "$X"',
        "[ a = b ] || ls",
        '[ "$(uname)" = Linux ]',
        '[ ! "$X" -eq 1 ]',
        'test -z "$(git status --porcelain)"',
        '[ "$A" != "$B" ]',
      ]
    ) {
      await allows(command);
    }
    for (
      const command of [
        "test -v 'a[$(rm x)]'",
        "[ -v 'a[$(rm x)]' ]",
        "[ ! -v x ]",
        "test -R ref",
        "test $X",
        'test "$X" y',
        '[ "$X" "a[$(rm x)]" ]',
        "[ $X ]",
        // Unquoted, `$X` may split into `-v 'a[$(id)]'` and change the form.
        "[ $X = y ]",
        '[ "$X" "$Y" = z ]',
        '[ ! "$X" "$Y" ]',
      ]
    ) {
      await asks(command);
    }
  });

  test("cd into a relative folder runs; outside, home and dynamic ask", { timeout: 60_000 }, async () => {
    for (const command of ["cd src && ls", "cd src/lib && git status", "cd ./a && cd b && cat f", "(cd a; ls)"]) {
      await allows(command);
    }
    await allows("cd /work/proj/src && ls", "/work/proj");
    const cases: [string, string][] = [
      ["cd", "home folder"],
      ["cd && ls", "home folder"],
      ["cd -", "previous folder"],
      ["cd ~", "`~`"],
      ["cd ~/x", "`~/x`"],
      ["cd ..", "`..`"],
      ["cd a/../..", "`..`"],
      ["cd /etc && ls", "outside the workspace"],
      ["cd $HOME", "`$HOME`"],
      ["cd $(echo /)", "`$(echo /)`"],
      ["cd -P /", "option of `cd`"],
      ["cd -- /tmp", "option of `cd`"],
      ["cd a b", "more than one argument"],
      ["cd ''", "names no folder"],
      ["cd s*", "only known when the command runs"],
    ];
    for (const [command, named] of cases) await asks(command, named);
    await asks("cd /work/other && ls", "outside the workspace", "/work/proj");
  });
});

describe("flag rules: version and help queries", () => {
  test("exact queries of common tools run", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "node --version",
        "node -v",
        "python3 --version",
        "python3 -V",
        "deno --version",
        "npm --help",
        "git version",
        "git stash show -p",
      ]
    ) {
      await allows(command);
    }
  });

  test("anything longer asks", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "node --version x.js",
        "node --version -e 'x'",
        "node -e 1 --version",
        "python --version -c 'import os'",
        "npm --version && npm install",
        "go version x",
        "cargo --version --list",
      ]
    ) {
      await asks(command);
    }
  });

  test("words known only at run time never complete an exact entry (fuzzer finding)", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "python3 --version *",
        "python3 -V $[1]",
        "python3 -V $x",
        "node --version $((1))",
        "node -v $[1]",
        'node --version "$(echo a)"',
        "node --version ?",
        "deno --version {a,b}",
      ]
    ) {
      const check = await checkCommand(command);
      assert.equal(check.verdict, "ask", command);
      assert.match(check.reasons.join("; "), /allows exactly those words|only known when the command runs/, command);
    }
  });

  test("queries of programs the project can choose need the sandbox", { timeout: 60_000 }, async () => {
    for (const command of ["yarn --version", "pnpm --version", "cargo --version", "go version", "php --version"]) {
      await allows(command);
      const asked = await checkCommand(command, { sandbox: { available: false, reason: "no bwrap" } });
      assert.equal(asked.verdict, "ask", command);
      assert.ok(asked.reasons.some((reason) => reason.includes("sandbox is unavailable: no bwrap")), command);
    }
  });
});

describe("flag rules: awk", () => {
  test("programs that could run commands ask, indirect calls included", { timeout: 60_000 }, async () => {
    const judge = (command: string) => checkCommand(command, { allowlist: ["awk", "gawk", "mawk"], sandbox: SANDBOX });
    for (
      const command of [
        'awk \'BEGIN{f="sys" "tem"; @f("id")}\'',
        "gawk '@include \"x.awk\"' f",
        "gawk '@load \"x\"' f",
        "gawk -W include=x.awk f",
        "mawk -W exec x.awk",
        "awk -i x.awk f",
        "awk '{ \"id\" | getline x }'",
      ]
    ) {
      assert.equal((await judge(command)).verdict, "ask", command);
    }
    assert.equal((await judge("awk -F: '{print $1}' f")).verdict, "allow");
  });
});

describe("flag rules: the files the argument languages open", { timeout: 30_000 }, () => {
  const word = (value: string): BashWord => ({ text: `'${value}'`, value, mayBeOption: value.startsWith("-") });
  test("readers record every file on the context's pathOperands, for the path rules", { timeout: 30_000 }, () => {
    const cases: [string, string[], [string | undefined, string][]][] = [
      ["sed", ["-n", "r /srv/x", "a.txt"], [["a.txt", "read"], ["/srv/x", "read"]]],
      ["jq", ["--rawfile", "t", "/srv/x", ".", "a.json"], [["/srv/x", "read"], ["a.json", "read"]]],
      ["awk", ["{print}", "a.txt", "n=1"], [["a.txt", "read"]]],
      ["find", ["src", "-newer", "/srv/x"], [["src", "read"], ["/srv/x", "read"]]],
    ];
    for (const [name, args, expected] of cases) {
      const pathOperands: PathOperand[] = [];
      assert.equal(flagProblem(name, args.map(word), { pathOperands }), undefined, `${name} ${args.join(" ")}`);
      assert.deepEqual(pathOperands.map((file) => [file.value, file.access]), expected, `${name} ${args.join(" ")}`);
    }
  });
  test("without a collector, a file outside the workspace asks in the reader itself", { timeout: 30_000 }, () => {
    assert.match(flagProblem("sed", ["-n", "r /srv/x"].map(word)) ?? "", /\/srv\/x/);
    assert.match(flagProblem("jq", [".", "../x.json"].map(word)) ?? "", /`\.\.`/);
    assert.equal(flagProblem("jq", [".name", "package.json"].map(word)), undefined);
    assert.equal(flagProblem("awk", ["{print $1}", "f"].map(word)), undefined);
  });
});

describe("flag rules: options that hand a program a list of files", () => {
  // tar and the checksum tools are not on the default list; people add them.
  const allowlist = [
    "sort",
    "wc",
    "du",
    "file",
    "find",
    "tar",
    "md5sum",
    "sha256sum",
    "b2sum",
    "cksum",
    "git log",
    "printf",
  ];
  const judge = (command: string) => checkCommand(command, { allowlist, sandbox: SANDBOX });
  const LIST = "opens the files a list names";

  test("every spelling asks, whatever gives the list and wherever the option stands", { timeout: 60_000 }, async () => {
    const cases: [string, string[]][] = [
      ["sort", [...spellings("--files0-from", "L"), "--files0=L", "--fil=L"]],
      ["wc", [...spellings("--files0-from", "L"), "--files0 L", "--f=L"]],
      ["du", [...spellings("--files0-from", "L"), "--files0=L"]],
      ["file", ["-f L", "-fL", "-bf L", "-bfL", ...spellings("--files-from", "L"), "--files L"]],
      ["tar", ["-T L", "-tf a.tar -T L", "-tvT L", ...spellings("--files-from", "L")]],
      ["md5sum", ["-c L", "-bc L", "--check L", "--ch L", "--c L"]],
      ["sha256sum", ["-c L", "--check L"]],
      ["b2sum", ["-c L", "--check L"]],
      ["cksum", ["-c L", "--check L"]],
    ];
    for (const [program, options] of cases) {
      for (const option of options) {
        for (const list of ["-", "list.txt", "<(printf '/etc/shadow\\0')", "/dev/stdin"]) {
          const spelled = option.replace(/L$/, list);
          for (const line of [`${program} ${spelled}`, `${program} a ${spelled}`, `${program} -- ${spelled}`]) {
            const result = await judge(line);
            assert.equal(result.verdict, "ask", `${line} was allowed`);
            // `--files0-from=<(...)` is one word known only at run time, which asks before its option is read.
            assert.ok(
              result.reasons.some((reason) => reason.includes(LIST) || reason.includes("could expand into an option")),
              `${line}: ${result.reasons.join(" | ")}`,
            );
          }
        }
      }
    }
  });

  test("find's -files0-from, git's --pathspec-from-file and tar's old-style T ask", { timeout: 60_000 }, async () => {
    for (
      const line of [
        "find -files0-from -",
        "find . -files0-from a.txt",
        "find -L -files0-from - -name x",
        "find -files0-from <(printf '/etc\\0') -type f",
        "tar tTf - a.tar",
        "tar tvfT a.tar list",
        "git log --pathspec-from-file=-",
        "git log --pathspec-from-file list",
        "git log --pathspec-from=list",
      ]
    ) {
      const result = await judge(line);
      assert.equal(result.verdict, "ask", `${line} was allowed`);
      assert.match(result.reasons.join(" "), /from a list|opens the files a list names/, line);
    }
  });

  test("the same programs without those options run", { timeout: 60_000 }, async () => {
    for (
      const line of [
        "sort -u f",
        "sort -t: -k2 f",
        "sort --field-separator=: f",
        "wc -l f",
        "du -sh .",
        "du -X patterns .",
        "file f",
        "file -b --mime-type f",
        "find . -name '*.ts'",
        "tar -tf a.tar",
        "md5sum f",
        "sha256sum --tag f",
        "cksum f",
        "git log --oneline -- f",
      ]
    ) {
      const result = await judge(line);
      assert.equal(result.verdict, "allow", `${line}: ${result.reasons.join(" | ")}`);
    }
  });
});

describe("flag rules: xxd, read as vim's xxd reads its arguments", () => {
  test("a word after the first operand is the output file, whatever it looks like", { timeout: 60_000 }, async () => {
    for (
      const [line, named] of [
        ["xxd a.txt -x", "`-x` is xxd's output file"],
        ["xxd a.txt --", "`--` is xxd's output file"],
        ["xxd -- a.txt -name", "`-name` is xxd's output file"],
        ["xxd --- a.txt -y", "`-y` is xxd's output file"],
        ["xxd -l 4 a.txt -evil", "`-evil` is xxd's output file"],
        ["xxd -cols 8 a.txt -r", "`-r` is xxd's output file"],
        ["xxd - out", "`out` is xxd's output file"],
        ["xxd a.txt - extra", "`-` is xxd's output file"],
        ["xxd a.txt out", "`out` is xxd's output file"],
      ]
    ) {
      await asks(line, named);
    }
  });

  test("-r asks in every spelling xxd takes: any word that starts with -r or --r, or an r in a cluster", {
    timeout: 60_000,
  }, async () => {
    for (
      const option of ["-r", "--revert", "-revert", "--r", "--rev", "-rp", "-r -p", "-p -r", "-pr", "-ur", "-ipr"]
    ) {
      await asks(`xxd ${option} p.hex`, "turns a dump back into bytes");
    }
  });

  test("dumps to standard output run, with options whose values look like options", { timeout: 60_000 }, async () => {
    for (
      const line of [
        "xxd f",
        "xxd -l 64 f",
        "xxd -c 8 -g 2 f",
        "xxd -cols 8 -len 16 f",
        "xxd -c8 -s 4 f",
        "xxd -ps f",
        "xxd -postscript f",
        "xxd -i -n name f",
        "xxd -u f -",
        "xxd -- f",
        "xxd -l -r f",
        "xxd -",
        "xxd",
      ]
    ) {
      await allows(line);
    }
  });

  test("the output file is judged as a file written, the input file as one read", { timeout: 30_000 }, () => {
    const word = (value: string): BashWord => ({ text: value, value, mayBeOption: value.startsWith("-") });
    for (
      const [args, expected] of [
        [["---", "-in", "-out"], [["-in", "read"], ["-out", "write"]]],
        [["-s", "4", "in", "-"], [["in", "read"]]],
        [["-", "out"], [["out", "write"]]],
      ] as [string[], [string, string][]][]
    ) {
      const pathOperands: PathOperand[] = [];
      flagProblem("xxd", args.map(word), { pathOperands });
      assert.deepEqual(pathOperands.map((file) => [file.value, file.access]), expected, args.join(" "));
    }
  });
});

describe("flag rules: date", () => {
  test("an operand that is not a +FORMAT sets the clock, so it asks", { timeout: 60_000 }, async () => {
    for (
      const line of [
        "date 010203042030",
        "date 01020304",
        "date 0102030420.59",
        "date -u 010203042030",
        "date 010203042030 -u",
        "date -- 010203042030",
        "date -I 0102",
        "date --date=now 0102",
        "date -",
        "date now",
        "date 0102 +%s",
        "date +%s 0102",
      ]
    ) {
      await asks(line, "is not known to be a +FORMAT");
    }
    await asks("date -s 2020-01-01", "sets the system clock");
    for (const option of ["--se=now", "--s now", "-us now", "-Rs now", "-snow"]) {
      await asks(`date ${option}`, "sets the system clock");
    }
    await asks('date "$T"');
  });

  test("formats and the values of -d, -f and -r run", { timeout: 60_000 }, async () => {
    for (
      const line of [
        "date",
        "date +%s",
        "date -u +%Y-%m-%dT%H:%M:%SZ",
        "date -- +%s",
        "date -d yesterday +%F",
        "date -d 0102",
        "date --date 0102 +%F",
        "date --date=@0",
        "date -r f +%s",
        "date --reference f",
        "date -R",
        "date --iso-8601=seconds",
        "date -Iseconds",
        "date -uIs",
      ]
    ) {
      await allows(line);
    }
  });
});

describe("flag rules: file", () => {
  test("-z and -Z, which run decompressors found on PATH, ask in every spelling", { timeout: 60_000 }, async () => {
    for (
      const option of [
        "-z",
        "-Z",
        "-bz",
        "-zb",
        "-iZ",
        "--uncompress",
        "--uncompress-noreport",
        "--uncompress-n",
        "--uncomp",
        "--unc",
      ]
    ) {
      for (const line of [`file ${option} x.lz4`, `file x.lz4 ${option}`, `file -L ${option} x.lz4`]) {
        await asks(line, "makes file run decompression programs");
      }
    }
  });

  test("the installed file runs the decompressor it finds on PATH with -z", { timeout: 30_000 }, async (t) => {
    if (spawnSync("file", ["--version"]).status !== 0) return t.skip("file is not installed");
    const folder = await mkdtemp(join(tmpdir(), "toolfence-file-z-"));
    try {
      await mkdir(join(folder, "bin"));
      await writeFile(join(folder, "bin", "lz4"), `#!/bin/sh\ntouch '${folder}/ran'\n`, { mode: 0o755 });
      // An LZ4 frame's magic number, then anything.
      await writeFile(join(folder, "x.lz4"), new Uint8Array([0x04, 0x22, 0x4d, 0x18, 0x61, 0x62, 0x63, 0x64]));
      for (const option of ["-z", "--uncompress-n", "-bZ"]) {
        await rm(join(folder, "ran"), { force: true });
        spawnSync("file", [option, "x.lz4"], {
          cwd: folder,
          env: { ...process.env, PATH: `${join(folder, "bin")}:${process.env.PATH}` },
        });
        assert.ok(existsSync(join(folder, "ran")), `file ${option} did not run lz4`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("reading the magic of files runs", { timeout: 60_000 }, async () => {
    for (const line of ["file f", "file -b f", "file --mime-type -b f", "file -L f", "file -i f a"]) await allows(line);
  });
});

describe("tail", () => {
  test("following by name asks in every spelling: a name that appears later may be a link anywhere", {
    timeout: 60_000,
  }, async () => {
    for (
      const line of [
        "tail -F n",
        "tail -qF n",
        "tail --follow=name n",
        "tail --fo=n n",
        "tail --retry -f n",
        "tail --re n",
      ]
    ) {
      await asks(line, "by name");
    }
  });

  test("reading and following the file opened run", { timeout: 60_000 }, async () => {
    for (
      const line of [
        "tail f",
        "tail -n 20 f",
        "tail -f f",
        "tail --follow f",
        "tail --follow=descriptor f",
        "tail -c5 f",
      ]
    ) await allows(line);
  });
});
