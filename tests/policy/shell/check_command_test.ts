import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { checkCommand, type CommandCheck } from "../../../policy/shell/check_command.ts";
import { DENO_PROCESS_ONLY } from "../../_runtime.ts";

// The allowlist of issue 4's adversarial cases.
const ISSUE_ALLOWLIST = ["git status", "ls", "echo", "cat", "head"];

async function check(command: string, allowlist: readonly string[] = ISSUE_ALLOWLIST): Promise<CommandCheck> {
  return await checkCommand(command, { allowlist });
}

/** Asserts the command runs without asking. */
async function allows(command: string, allowlist?: readonly string[]): Promise<CommandCheck> {
  const result = await check(command, allowlist);
  assert.equal(result.verdict, "allow", `${JSON.stringify(command)} asked: ${result.reasons.join(" | ")}`);
  assert.deepEqual(result.reasons, []);
  assert.equal(result.parsed, true);
  return result;
}

/** Asserts the command asks and that some reason names each of `named`. */
async function asks(
  command: string,
  named: readonly string[],
  allowlist?: readonly string[],
): Promise<CommandCheck> {
  const result = await check(command, allowlist);
  assert.equal(result.verdict, "ask", `${JSON.stringify(command)} was allowed`);
  assert.ok(result.reasons.length > 0);
  for (const part of named) {
    assert.ok(
      result.reasons.some((reason) => reason.includes(part)),
      `${JSON.stringify(command)}: no reason names ${JSON.stringify(part)}: ${result.reasons.join(" | ")}`,
    );
  }
  return result;
}

describe("checkCommand: the adversarial cases of issue 4", () => {
  test("runs without asking", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "git status",
        "git status 2>&1 | head -5",
        "ls >/dev/null",
        "echo '$(id)'",
        "echo $(ls)",
      ]
    ) {
      await allows(command);
    }
  });

  test("asks, naming the offending part", { timeout: 60_000 }, async () => {
    const cases: [string, string[]][] = [
      ["git status && rm x", ["`rm` is not on the allowlist"]],
      ["git status; rm x", ["`rm` is not on the allowlist"]],
      ["git status | sh", ["`sh` runs the command it is given"]],
      ["git status & rm x", ["`&` runs `git status` in the background", "`rm`"]],
      ["ls\nrm x", ["a newline joins commands", "`rm`"]],
      ["git log $(rm -rf s)", ["`git log` is not on the allowlist", "`rm` is not on the allowlist"]],
      ["echo `ls`", ["``ls`` is a backquote substitution"]],
      ['echo "$(id)"', ["`id` is not on the allowlist"]],
      ["cat <(rm x)", ["`rm x`", "`rm` is not on the allowlist"]],
      ["echo >(rm x)", ["`rm` is not on the allowlist"]],
      ["echo x > f", ["`> f` writes to a file"]],
      ["echo x >> ~/.bashrc", ["`>> ~/.bashrc` writes to a file"]],
      ["ls 2> f", ["`2> f` writes to a file"]],
      ["ls &> f", ["`&> f` writes to a file"]],
      ["./ls", ["`./ls` names an executable by path"]],
      ["/tmp/ls", ["`/tmp/ls` names an executable by path"]],
      ["FOO=1 ls", ["`FOO=1` sets FOO"]],
      ['bash -c "rm x"', ["`bash` runs the command it is given"]],
      ["sh -c ls", ["`sh` runs the command it is given"]],
      ["eval ls", ["`eval` runs the command it is given"]],
      ["env rm x", ["`env` runs the command it is given"]],
      ["xargs rm", ["`xargs` runs the command it is given"]],
      ["gitk", ["`gitk` is not on the allowlist"]],
      ["git-evil", ["`git-evil` is not on the allowlist"]],
      ['echo "unbalanced', ["syntax error", '`"unbalanced`']],
    ];
    for (const [command, named] of cases) await asks(command, named);
  });

  test("one assignment with a redirection, which the grammar misreads, is not parsed and says so", {
    timeout: 60_000,
  }, async () => {
    // tree-sitter-bash reads `x=1 2>/dev/null` as a command with a missing name, and with more after it as an
    // error that swallows the next command's name: never judged as parsed, and the reason names the gap.
    for (
      const command of [
        "x=1 2>/dev/null",
        "x=$(rm -rf /) 2>/dev/null",
        ">f x=1",
        "x=1 >/dev/null; rm -rf /",
        "ls; x=$(id) 2>&1 && echo $x",
      ]
    ) {
      const result = await asks(command, ["does not read one assignment with a redirection"]);
      assert.equal(result.parsed, false, command);
      assert.ok(!result.reasons.some((r) => r.includes("for the command it prefixes")), result.reasons.join("; "));
    }
    // Two assignments with a redirection the grammar reads.
    assert.equal((await asks("x=1 y=2 2>/dev/null", ["`x=1` assigns the shell variable x"])).parsed, true);
  });

  test("an unbalanced quote is reported as not parsed", { timeout: 60_000 }, async () => {
    for (const command of ["echo 'x", 'ls "', "echo $(ls", "echo ${x"]) {
      const result = await asks(command, []);
      assert.equal(result.parsed, false, command);
    }
  });
});

describe("checkCommand: operators joining commands", () => {
  test("; && || | |& ( ) join allowed commands", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "ls; echo a",
        "ls && echo a || cat f",
        "ls | head -3 | cat",
        "ls |& head",
        "(ls; echo hi) | head",
        "{ ls; echo hi; } | head",
        "! ls",
        "ls;",
      ]
    ) {
      await allows(command);
    }
  });

  test("forbidden commands are found behind every operator", { timeout: 60_000 }, async () => {
    for (
      const command of ["ls;rm x", "ls|rm x", "ls||rm x", "ls&&rm x", "ls |& rm x", "(rm x)", "{ rm x; }", "! rm x"]
    ) {
      await asks(command, ["`rm` is not on the allowlist"]);
    }
  });

  test("& and newlines between commands ask, even between allowed ones", { timeout: 60_000 }, async () => {
    await asks("ls &", ["`&` runs `ls` in the background"]);
    await asks("ls & ls", ["`&` runs `ls` in the background"]);
    await asks("(ls) &", ["`&` runs `(ls)` in the background"]);
    await asks("echo $(ls &)", ["`&` in `$(ls &)`"]);
    await asks("ls\nls", ["a newline joins commands"]);
    await asks("ls |\nhead", ["a newline joins commands"]);
    await asks("echo $(ls\nls)", ["a newline joins commands"]);
  });

  test("leading and trailing newlines, comments and line continuations join nothing", { timeout: 60_000 }, async () => {
    for (const command of ["ls\n", "\nls\n", "ls # note", "# note\nls", "ls\n# note", "ls \\\n  -la"]) {
      await allows(command);
    }
  });

  test("a comment ends at its line even after a backslash", { timeout: 60_000 }, async () => {
    await asks("ls # a \\\nrm x", ["`rm` is not on the allowlist"]);
    await allows("ls # $(rm x) `rm x`");
  });

  test("syntax bash rejects is not allowed", { timeout: 60_000 }, async () => {
    for (const command of ["ls ;; ls", "ls | ! ls", ";ls", "ls &&", "| ls", "{ ls }", "ls )"]) {
      const result = await asks(command, []);
      assert.equal(result.parsed, false, command);
    }
  });

  test("an empty command line or one with only comments asks", { timeout: 60_000 }, async () => {
    for (const command of ["", "   ", "# only a comment"]) {
      await asks(command, ["contains no command"]);
    }
  });
});

describe("checkCommand: quoting and the command word", () => {
  test("quote removal shows the command bash runs", { timeout: 60_000 }, async () => {
    for (const command of ["l\\s", '"l"s', "'ls'", "\\ls", "$'ls'", "e'ch'o hi"]) await allows(command);
    await asks("r\\m x", ["`rm` is not on the allowlist"]);
    await asks('"r"m x', ["`rm` is not on the allowlist"]);
    await asks("$'\\x72m' x", ["`rm` is not on the allowlist"]);
    await asks("$'\\162m' x", ["`rm` is not on the allowlist"]);
  });

  test("single quotes and escapes keep substitutions literal", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "echo '$(rm x)'",
        "echo '`rm x`'",
        "echo \\`rm x\\`",
        'echo "\\$(rm x)"',
        "echo a\\;rm b",
        'echo "a;rm b"',
      ]
    ) {
      await allows(command);
    }
  });

  test("double quotes do not stop substitution", { timeout: 60_000 }, async () => {
    await asks('echo "$(rm x)"', ["`rm` is not on the allowlist"]);
    await asks('echo "`rm x`"', ["backquote substitution", "`rm`"]);
    await asks('echo "a$(rm x)b"', ["`rm` is not on the allowlist"]);
  });

  test("a command word computed at run time asks", { timeout: 60_000 }, async () => {
    await asks("$CMD x", ["the command name `$CMD` is only known when the command runs"]);
    await asks("${CMD} x", ["the command name `${CMD}`"]);
    await asks("$(echo rm) x", ["the command name `$(echo rm)`"]);
    await asks("`echo rm` x", ["the command name ``echo rm``", "backquote"]);
    await asks("*", ["the command name `*`"]);
    await asks("l? -la", ["the command name `l?`"]);
    assert.equal((await asks("{ls,rm} x", ["syntax error"])).parsed, false);
    await asks("~/bin/ls", ["the command name `~/bin/ls`"]);
    await asks("ls$IFS-la", ["the command name `ls$IFS-la`"]);
    await asks("cat${IFS}/etc/passwd", ["the command name `cat${IFS}/etc/passwd`"]);
    await asks('$"ls"', ["locale-translated"]);
  });

  test("expansions in arguments of commands without flag rules are fine", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "echo $HOME",
        "echo ${x:-a}",
        'echo "${@}" $1 $? $$',
        "echo {a,b} *.ts ~",
        "echo $IFS -la",
        "echo ${#x} ${x%.*} ${x,,}",
      ]
    ) {
      await allows(command);
    }
  });

  test("executables named by path ask", { timeout: 60_000 }, async () => {
    for (const command of ["./ls", "/bin/ls", "../ls", "bin/ls", "/usr/bin/git status"]) {
      await asks(command, ["names an executable by path"]);
    }
  });

  test("control characters ask", { timeout: 60_000 }, async () => {
    await asks("ls\rrm x", ["control character U+000d"]);
    await asks("ls\0rm", ["control character U+0000"]);
  });
});

describe("checkCommand: substitutions and expansions", () => {
  test("every command substitution is judged, however deep", { timeout: 60_000 }, async () => {
    await allows("echo $(echo $(echo $(cat f)))");
    await asks("echo $(ls $(echo $(rm x)))", ["`rm` is not on the allowlist"]);
    await asks("ls $(rm x 2>/dev/null)", ["`rm` is not on the allowlist"]);
    await asks("echo $(cat <<< x; rm y)", ["`rm` is not on the allowlist"]);
  });

  test("parameter expansions with substitutions inside are judged", { timeout: 60_000 }, async () => {
    await asks("echo ${x:-$(rm a)}", ["`rm` is not on the allowlist"]);
    await asks('echo "${x:-"a$(rm b)"}"', ["`rm` is not on the allowlist"]);
    await asks("echo ${x/$(rm y)/z}", ["`rm` is not on the allowlist"]);
    await allows("echo ${x:-$(ls)}");
  });

  test("expansions that assign, redirect or evaluate code ask", { timeout: 60_000 }, async () => {
    await asks("echo ${x:=a}", ["`${x:=a}` assigns a default value"]);
    await asks("echo ${!x}", ["`${!x}` is an indirect expansion"]);
    await asks("echo ${x@P}", ["@P transformation"]);
    await asks("echo ${a[$i]}", ["evaluates the array subscript `$i`"]);
    await asks("echo ${a[$(rm y)]}", ["`rm` is not on the allowlist", "array subscript"]);
    await asks("echo ${x:$y}", []);
    await allows("echo ${x@Q} ${a[1]} ${a[@]} ${x:1:2}");
  });

  test("arithmetic asks unless it is numbers only", { timeout: 60_000 }, async () => {
    await allows("echo $((1+2*3))");
    await asks("echo $((1+$(rm a)))", ["`rm` is not on the allowlist", "does arithmetic on `$(rm a)`"]);
    await asks("echo $((x))", ["does arithmetic on `x`"]);
    await asks("echo $(( $(cat f) ))", ["does arithmetic on `$(cat f)`"]);
    // The parser reads `36#$(rm a)` as one number; bash runs the command to get its digits.
    await asks("echo $((36#$(rm a)))", ["`rm` is not on the allowlist", "does arithmetic on `36#$(rm a)`"]);
    await asks("echo $[36#$(rm a)]", ["`rm` is not on the allowlist"]);
    await asks("(( 36#$(rm a) ))", ["`rm` is not on the allowlist"]);
    await asks("echo ${x[36#$(rm a)]}", ["`rm` is not on the allowlist", "array subscript"]);
    await asks("echo ${x:36#$(rm a)}", ["`rm` is not on the allowlist", "substring offset"]);
    await asks("echo $((16#${x}))", ["does arithmetic on `16#${x}`"]);
    await allows("echo $((16#ff + 2#101)) 36#$(ls)");
    await asks("((x++))", ["assigns a variable"]);
    await asks("echo $((x=5))", ["assigns a variable"]);
  });

  test("process substitution is judged like a command substitution", { timeout: 60_000 }, async () => {
    await allows("cat <(ls) <(echo a)");
    await asks("cat <(rm x)", ["`rm` is not on the allowlist"]);
    await asks("echo >(rm x)", ["`rm` is not on the allowlist"]);
    await asks("ls > >(cat)", ["`> >(cat)` writes to a file"]);
  });

  test("the [[ ]] test command is judged", { timeout: 60_000 }, async () => {
    await allows("[[ -f x ]] && ls");
    await allows('[[ $x == a* && "a" =~ ^a(b|c)$ ]]');
    await asks("[[ $(rm a) ]]", ["`rm` is not on the allowlist"]);
    await asks("[[ x =~ $(rm a) ]]", ["`rm` is not on the allowlist"]);
    // bash evaluates array subscripts in the operands of -eq, so a file's
    // content would run as code.
    await asks("[[ $(cat f) -eq 0 ]]", ["compares arithmetically"]);
    await asks("[[ -v x ]]", ["tests a variable by name"]);
    await asks("[ -v x ]", ["tests a variable by name"], [...ISSUE_ALLOWLIST, "["]);
    await allows("[[ 1 -eq 1 ]]");
  });
});

describe("checkCommand: redirections", () => {
  test("/dev/null and descriptor copies are fine", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "ls >/dev/null",
        "ls 1>/dev/null 2>/dev/null",
        "ls >/dev/null 2>&1",
        "ls 2>&1 >/dev/null",
        'ls >"/dev/null"',
        "ls >>/dev/null",
        "ls &>/dev/null",
        "ls &>>/dev/null",
        "ls >| /dev/null",
        "ls >& /dev/null",
        "ls 1>&2",
        "ls >&2",
        "ls 2>&-",
        "ls <&0",
        "ls < /dev/null",
      ]
    ) {
      await allows(command);
    }
  });

  test("any other target asks", { timeout: 60_000 }, async () => {
    await asks("ls >/dev/nul", ["`>/dev/nul` writes to a file"]);
    await asks("ls > /dev/null/../../tmp/x", ["writes to a file"]);
    await asks("ls 3>f", ["`3>f` writes to a file"]);
    await asks("ls >&f", ["`>&f` redirects to a file"]);
    await asks("ls >|f", ["`>|f` writes to a file"]);
    await asks("ls > $F", ["`> $F` writes to a file"]);
    await asks(">f", ["`>f` writes to a file"]);
    await asks("{ ls; } > f", ["`> f` writes to a file"]);
    await asks("(ls) 2>f", ["`2>f` writes to a file"]);
  });

  test("input redirection from a workspace file runs; from elsewhere it asks", { timeout: 60_000 }, async () => {
    // The file is judged like every path of the line; bash's /dev/tcp/host/port connections ask.
    await allows("cat < f");
    await allows("echo $(<f)");
    await asks("cat < /dev/tcp/10.0.0.1/80", ["`< /dev/tcp/10.0.0.1/80`", "network connection"]);
    await asks("cat < /etc/passwd", ["`< /etc/passwd`", "outside the workspace"]);
    await asks("echo $(</etc/passwd)", ["`< /etc/passwd`"]);
    // A process substitution is a pipe from a command judged on its own.
    await allows("cat < <(ls)");
    await asks("cat < <(cat /etc/passwd)", ["`/etc/passwd`"]);
  });

  test("a read-write redirection is not parsed", { timeout: 60_000 }, async () => {
    const result = await asks("ls <>g", []);
    assert.equal(result.parsed, false);
  });

  test("a redirection in the middle of the arguments is a known misparse and asks", { timeout: 60_000 }, async () => {
    const result = await asks("echo a 2>/dev/null b", ["the parser read `b` as part of the redirection"]);
    assert.equal(result.parsed, false);
    await asks("echo a > /dev/null b c", ["`b c`"]);
  });

  test("a word after a closing redirection is an argument for bash, and asks", { timeout: 60_000 }, async () => {
    // The parser reads `3>&- x` as the redirection's destination; `>&-` takes none, so bash passes `x` to the command
    // (fuzzer, seed 20261205: `[ 2 | node --version 3>&- ]` ran `node --version ]`).
    for (
      const [line, word] of [
        ["cat 3>&- /srv/outside/secret", "/srv/outside/secret"],
        ["ls >&- /srv", "/srv"],
        ["cat 3<&- ../secret", "../secret"],
        ["[ 2 | node --version 3>&- ]; ls", "]"],
      ]
    ) {
      const result = await asks(line, [`the parser read \`${word}\` as part of the redirection`]);
      assert.equal(result.parsed, false, line);
    }
    await allows("echo hi 2>&-");
    await allows("echo hi 3>&- 2>&1");
  });

  test("{var}> stores a descriptor in a variable", { timeout: 60_000 }, async () => {
    await asks("ls {fd}>/dev/null", ["`{fd}>/dev/null` stores a file descriptor"]);
  });

  test("here-strings and here-documents feed allowed commands", { timeout: 60_000 }, async () => {
    await allows("cat <<< hi");
    await allows("cat <<EOF\nhello\nEOF\n");
    await allows("cat <<EOF | head -1\nhello $(ls) ${x:-a}\nEOF");
    await allows("cat <<'EOF'\n$(rm a) `rm b`\nEOF");
    await allows('cat <<"EOF"\n$(rm a)\nEOF');
    await allows("cat <<\\EOF\n$(rm a)\nEOF");
    await allows("cat <<-'EOF'\n\t$(rm a)\n\tEOF");
    await asks('cat <<< "$(rm x)"', ["`rm` is not on the allowlist"]);
    await asks("cat <<EOF\n$(rm a)\nEOF", ["`rm` is not on the allowlist"]);
    await asks("cat <<EOF\n`rm a`\nEOF", ["contains a backquote, which bash expands"]);
    await asks("cat <<EOF | rm x\nhi\nEOF", ["`rm` is not on the allowlist"]);
    await asks("cat <<EOF && rm x\nEOF", ["`rm` is not on the allowlist"]);
    await asks("cat <<EOF\nhi\nEOF\nrm x", ["a newline joins commands"]);
    await asks("cat <<'EOF' > f\nhi\nEOF", ["`> f` writes to a file"]);
  });

  test("here-documents whose end the parser misplaces are not parsed", { timeout: 60_000 }, async () => {
    let result = await asks("cat <<EOF\nhi $(ls)\nEO`rm x` F\n;echo {a,b}", ["the parser ends a here-document at"]);
    assert.equal(result.parsed, false);
    result = await asks("cat <<EOF\nEOF \n`id`\nEOF", ["but bash ends it only at `EOF`"]);
    assert.equal(result.parsed, false);
    result = await asks("cat <<A <<B\na\nA\nb\nB", []);
    assert.equal(result.parsed, false);
    result = await asks("cat <<EOF\nhi", []);
    assert.equal(result.parsed, false);
  });
});

describe("checkCommand: compound commands, assignments and functions", () => {
  test("commands inside compound commands are judged", { timeout: 60_000 }, async () => {
    await allows("if ls; then echo a; elif cat f; then ls; else echo b; fi");
    await allows("while ls; do echo a; done");
    await allows("until ls; do echo a; done");
    await allows("case $x in a|b) ls;; *) echo c;; esac");
    await asks("if true; then rm x; fi", ["`rm` is not on the allowlist"]);
    await asks("if rm x; then ls; fi", ["`rm` is not on the allowlist"]);
    await asks("while ls; do rm x; done", ["`rm` is not on the allowlist"]);
    await asks("case x in a) rm x;; esac", ["`rm` is not on the allowlist"]);
    await asks("case $(rm x) in a) ls;; esac", ["`rm` is not on the allowlist"]);
  });

  test("loops that assign a variable ask", { timeout: 60_000 }, async () => {
    await asks("for i in 1; do rm x; done", ["`rm` is not on the allowlist", "assigns the shell variable i"]);
    await asks("for PATH in /tmp; do ls; done", ["assigns the shell variable PATH"]);
    await asks("for ((i=0;i<3;i++)); do ls; done", ["evaluates arithmetic and assigns variables"]);
    await asks("select x in a; do ls; done", ["the select loop"]);
  });

  test("function definitions ask and their bodies are judged", { timeout: 60_000 }, async () => {
    await asks("f() { rm x; }; f", [
      "defines the function f",
      "`rm` is not on the allowlist",
      "`f` is not on the allowlist",
    ]);
    await asks("function ls { echo hi; }", ["defines the function ls"]);
  });

  test("assignments and declarations ask", { timeout: 60_000 }, async () => {
    await asks("x=1", ["`x=1` assigns the shell variable x"]);
    await asks("PATH=/tmp; ls", ["assigns the shell variable PATH"]);
    await asks("x=$(rm y)", ["`rm` is not on the allowlist", "assigns the shell variable x"]);
    await asks("a=(1 $(rm y))", ["`rm` is not on the allowlist"]);
    await asks("export A=b", ["changes the shell's variables"]);
    await asks("declare -i n", ["changes the shell's variables"]);
    await asks("unset PATH", ["changes the shell's variables"]);
    await asks("FOO=1 BAR=2 ls", ["`FOO=1` sets FOO", "`BAR=2` sets BAR"]);
  });

  test("wrappers that run other commands ask even when allowlisted", { timeout: 60_000 }, async () => {
    const allowlist = [
      ...ISSUE_ALLOWLIST,
      "env",
      "xargs",
      "time",
      "nohup",
      "command",
      "exec",
      "sudo",
      "less",
      "timeout",
    ];
    for (const name of ["env", "xargs", "time", "nohup", "command", "exec", "sudo", "less", "timeout"]) {
      await asks(`${name} ls`, [`\`${name}\``, "even when allowlisted"], allowlist);
    }
    await asks("coproc ls", ["`coproc` runs the command it is given"]);
  });
});

describe("checkCommand: flag rules of allowlisted commands", () => {
  const allowlist = [
    "git diff",
    "git log",
    "git show",
    "git --no-pager diff",
    "git",
    "find",
    "sed",
    "sort",
    "rg",
    "tee",
    "uniq",
    "printf",
    "date",
    "tree",
    "file",
    "awk",
    "tar -tf",
    "test",
    "split",
    "zip",
  ];

  test("harmless uses stay allowed", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "git diff --cached",
        "git diff HEAD~1 -- src/",
        "git diff src/*.ts",
        "git log --oneline -5 --output-indicator-new=+",
        "git --no-pager diff --stat",
        "find . -name '*.ts' -type f",
        "sed -n '1,5p' f",
        "sed -e 's/a/b/g' -e '/x/d' f",
        "sed -n ':a;N;$!ba;s/\\n/ /g;p' f",
        "sort -u -k2 f",
        "rg -n --pre-glob '*.gz' foo",
        "tee /dev/null",
        "uniq -c f",
        "sort f | uniq -c",
        'printf "%s\\n" a',
        "date +%s",
        "tree -L 2",
        "file f",
        "awk '{print $1}' f",
        "tar -tf a.tar",
        "test -f f",
        "split -l 100 f part-",
        "zip -q -r out.zip src",
      ]
    ) {
      await allows(command, allowlist);
    }
  });

  test("options that write files or run programs ask", { timeout: 60_000 }, async () => {
    const cases: [string, string][] = [
      ["git diff --output=f", "`--output=f` lets git write a file"],
      ["git diff --output f", "`--output` lets git write a file"],
      ["git log -p --output=/tmp/x", "`--output=/tmp/x`"],
      ["git show --output=f", "`--output=f`"],
      ["git --no-pager diff --output=x", "`--output=x`"],
      ["git diff $'--output=f'", "`$'--output=f'`"],
      ["git -c core.pager=sh log", "`-c` makes git read another configuration"],
      ["git --config-env=core.pager=X log", "`--config-env=core.pager=X`"],
      ["git --exec-path=/tmp status", "`--exec-path=/tmp`"],
      ["git -C /tmp/evil status", "`-C`"],
      ["git --git-dir=/tmp/evil status", "`--git-dir=/tmp/evil`"],
      ["git grep -O foo", "`-O`"],
      ["git grep --open-files-in-pager=vi foo", "`--open-files-in-pager=vi`"],
      ["find . -delete", "`-delete` makes find run commands, delete or write files"],
      ["find . -exec rm {} \\;", "`-exec`"],
      ["find . -execdir sh -c x \\;", "`-execdir`"],
      ["find . -ok rm {} \\;", "`-ok`"],
      ["find . -okdir rm {} \\;", "`-okdir`"],
      ["find . -fprint /tmp/x", "`-fprint`"],
      ["find . -fprintf /tmp/x %p", "`-fprintf`"],
      ["find . -fls /tmp/x", "`-fls`"],
      ["sed -i s/a/b/ f", "`-i` makes sed edit files in place"],
      ["sed -ni s/a/b/ f", "`-ni` makes sed edit files in place"],
      ["sed --in-place=.bak s/a/b/ f", "`--in-place=.bak`"],
      ["sed 's/a/b/w out' f", "with the e or w flag"],
      ["sed 's/a/b/e' f", "with the e or w flag"],
      ["sed '1e touch x' f", "uses the e command"],
      ["sed -n 'w out' f", "uses the w command"],
      ["sed -e p -e 'W out' f", "uses the W command"],
      ["sed -ne 'w out' -e p f", "uses the w command"],
      ["sed --expression='w out' f", "uses the w command"],
      ["sed -l 5 'w out' f", "uses the w command"],
      ["sed 'b;w out' f", "uses the w command"],
      ["sed -f script.sed f", "reads a sed script from a file"],
      ['sed "$S" f', "could expand into an option of sed"],
      ["sort -o out in", "`-o` makes sort write a file"],
      ["sort -uo out in", "`-uo`"],
      ["sort --out=f in", "`--out=f`"],
      ["sort --compress-program=sh in", "`--compress-program=sh`"],
      ["rg --pre=sh foo", "`--pre=sh` makes ripgrep run a program"],
      ["rg --pre sh foo", "`--pre`"],
      ["rg -z foo", "`-z` makes ripgrep run a program"],
      ["rg --search-zip foo", "`--search-zip`"],
      ["rg --hostname-bin=sh foo", "`--hostname-bin=sh`"],
      ["echo x | tee f", "`f` is a file tee writes"],
      ["uniq in out", "`out` is uniq's output file"],
      ["printf -v PATH /tmp", "`-v` assigns a shell variable"],
      ["date -s 2020-01-01", "`-s` sets the system clock"],
      ["date --set=now", "`--set=now`"],
      ["tree -o out", "`-o` makes tree write files"],
      ["tree -R -H x", "`-R`"],
      ["file -C -m magic", "`-C`"],
      ["awk 'BEGIN{system(\"rm x\")}'", "can run commands or write files"],
      ["awk '{print > \"f\"}' g", "can run commands or write files"],
      ["awk -f prog.awk f", "loads awk code from a file"],
      ["tar -tf a.tar -x", "`-x` makes tar write files or run a program"],
      ["tar -tf a.tar --to-command=sh", "`--to-command=sh`"],
      // Both ran `touch PWN` under an allow rule for the program, inside the sandbox and out of it.
      ["split --filter='touch PWN' f", "`--filter='touch PWN'` makes split run a shell command"],
      ["split --fil='touch PWN' f", "`--fil='touch PWN'`"],
      ["zip -q -T -TT 'touch PWN ;' out.zip f", "`-T` makes zip run a program"],
      ["zip --unzip-command='touch PWN ;' -T out.zip f", "`--unzip-command='touch PWN ;'`"],
      ["test -v 'a[$(rm x)]'", "evaluates array subscripts"],
    ];
    for (const [command, named] of cases) await asks(command, [named], allowlist);
  });

  test("test runners of the default allowlist run tests, not other programs", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "deno test -A",
        "npm test",
        "npm run test -- --watch",
        "pytest -q -k 'a or b'",
        "python -m pytest -x",
        "cargo test",
        "go test -run TestX -v ./...",
      ]
    ) {
      const result = await checkCommand(command);
      assert.equal(result.verdict, "allow", `${command}: ${result.reasons.join(" | ")}`);
    }
    const cases: [string, string][] = [
      ["pytest --basetemp=/home", "`--basetemp` in `--basetemp=/home` is not an option of pytest known to be harmless"],
      ["python -m pytest -p evil_plugin", "of `-p` loads a plugin"],
      ["python3 -m pytest --junitxml=/etc/x", "`/etc/x` of `--junitxml`"],
      ["go test -exec=rm ./...", "`-exec` in `-exec=rm` is not an option of go test"],
      ["go test --toolexec sh", "`--toolexec`"],
      ["cargo test --config 'target.x.runner=\"sh\"'", "`--config` is not an option of cargo test"],
      ["npm test --script-shell=/tmp/x", "`--script-shell` in `--script-shell=/tmp/x`"],
    ];
    for (const [command, named] of cases) {
      const result = await checkCommand(command);
      assert.equal(result.verdict, "ask", command);
      assert.ok(result.reasons.some((reason) => reason.includes(named)), `${command}: ${result.reasons.join(" | ")}`);
    }
  });

  test("arguments that could expand into options ask for commands with flag rules", { timeout: 60_000 }, async () => {
    // An agent can create a file named `--output=x` or `-delete` without asking.
    await asks("git diff *", ["`*` could expand into an option of git"], allowlist);
    await asks("git diff $X", ["`$X` could expand into an option of git"], allowlist);
    await asks('git diff "$X"', ['`"$X"`'], allowlist);
    await asks("git diff a$X", ["`a$X`"], allowlist);
    await asks("git diff $(cat f)", ["`$(cat f)`"], allowlist);
    await asks("find *", ["`*` could expand into an option of find"], allowlist);
    await asks("find . -name *.ts", ["`*.ts`"], allowlist);
    await asks("sort {-o,x}", ["could expand into an option of sort"], allowlist);
    await asks("uniq -c src/*.txt", ["may expand to several files"], allowlist);
    await allows("git diff src/*.ts", allowlist);
    await asks("git diff src/*.ts ~/x", ["`~/x`", "home folder"], allowlist);
    // Every argument of a command that opens files is judged as a path.
    await allows("cat *");
    await asks("cat * $X", ["`$X`", "only known when the command runs"]);
    await asks("cat $(ls)", ["`$(ls)`"]);
  });
});

describe("checkCommand: the explanation", () => {
  test("lists every simple command, outer before inner, with its judgement", { timeout: 60_000 }, async () => {
    const result = await allows("git status 2>&1 | head -5 && echo $(ls -la)");
    assert.deepEqual(
      result.commands.map(({ words, allowedBy, ok }) => ({ words, allowedBy, ok })),
      [
        { words: ["git", "status"], allowedBy: "git status", ok: true },
        { words: ["head", "-5"], allowedBy: "head", ok: true },
        { words: ["echo", "$(ls -la)"], allowedBy: "echo", ok: true },
        { words: ["ls", "-la"], allowedBy: "ls", ok: true },
      ],
    );
    assert.equal(result.commands[0].text, "git status 2>&1");
    assert.equal(result.commands[0].reason, "matches the allowlist entry `git status`");
  });

  test("each refused simple command carries its own reason", { timeout: 60_000 }, async () => {
    const result = await asks("ls; rm -rf x; echo `id`", []);
    const byName = Object.fromEntries(result.commands.map((found) => [found.words[0], found]));
    assert.equal(byName.ls.ok, true);
    assert.equal(byName.rm.ok, false);
    assert.equal(byName.rm.reason, "`rm` is not on the allowlist");
    assert.deepEqual(byName.rm.words, ["rm", "-rf", "x"]);
    assert.equal(byName.id.ok, false);
    assert.ok(result.reasons.includes("`rm -rf x`: `rm` is not on the allowlist"));
    assert.ok(result.reasons.includes("``id`` is a backquote substitution; use $(...) instead"));
  });

  test("words show quote removal; run-time words show as written", { timeout: 60_000 }, async () => {
    const result = await allows("echo \"a b\" 'c' $'d\\te' $HOME");
    assert.deepEqual(result.commands[0].words, ["echo", "a b", "c", "d\te", "$HOME"]);
  });

  test("is plain data that survives JSON", { timeout: 60_000 }, async () => {
    const result = await check("ls | rm x && echo $(cat <(ls)) > f");
    assert.deepEqual(JSON.parse(JSON.stringify(result)), result);
    assert.equal(result.command, "ls | rm x && echo $(cat <(ls)) > f");
  });

  test("uses the default allowlist when none is given", { timeout: 60_000 }, async () => {
    const allowed = await checkCommand("git --no-pager log -5 | grep fix | wc -l");
    assert.equal(allowed.verdict, "allow");
    const asked = await checkCommand("curl https://example.com");
    assert.equal(asked.verdict, "ask");
    assert.deepEqual(asked.reasons, ["`curl https://example.com`: `curl` is not on the allowlist"]);
  });
});

describe("checkCommand: limits", () => {
  test("very long commands ask without being parsed", { timeout: 60_000 }, async () => {
    const result = await asks(`echo ${"a".repeat(100_001)}`, ["commands over 100000 are not analysed"]);
    assert.equal(result.parsed, false);
  });

  test("a line nested past the walks' depth asks, and leaves the parser whole for every later line", {
    timeout: 60_000,
  }, async () => {
    // 150 `$(` with nothing inside: the syntax-error walk overflowed the stack inside a call into the parser's
    // WebAssembly, and every later parse of the process (another session's `echo hi`) failed with `memory access
    // out of bounds`, which the bash tool answered with command_start_failed.
    for (const n of [150, 200, 400, 2000]) {
      for (const line of [`echo ${"$(".repeat(n)}${")".repeat(n)}`, `echo ${'"$('.repeat(n)}${')"'.repeat(n)}`]) {
        const result = await check(line);
        assert.equal(result.verdict, "ask", `${line.slice(0, 40)}... was allowed`);
        assert.ok(result.reasons.some((reason) => /nests too deeply/.test(reason)), result.reasons.join(" | "));
        const after = await check("echo hi");
        assert.equal(after.verdict, "allow", `after ${n} deep: ${after.reasons.join(" | ")}`);
      }
    }
    // A long chain of commands is a deep tree too, and is walked as before up to the walker's own limit.
    assert.equal((await check(Array(150).fill("echo").join(" && "))).verdict, "allow");
  });

  test("deep nesting asks instead of overflowing the stack", { timeout: 60_000 }, async () => {
    // On a loaded machine the parse of these long lines can pass its time limit first: that asks too (fail closed),
    // for that reason.
    for (const line of [`echo ${"$(".repeat(400)}ls${")".repeat(400)}`, `${"ls && ".repeat(5000)}ls`]) {
      const result = await check(line);
      assert.equal(result.verdict, "ask", `${line.slice(0, 40)}... was allowed`);
      assert.ok(
        result.reasons.some((reason) => /nests too deeply|parsing the command took too long/.test(reason)),
        result.reasons.join(" | "),
      );
    }
  });
});

// Both start deno on the TypeScript sources with the repository's deno.json, which the npm build's Node run has not.

describe("checkCommand: permissions", { skip: DENO_PROCESS_ONLY }, () => {
  test("runs under deno run with no permission flags", { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-command-"));
    try {
      const module = fileURLToPath(new URL("../../../policy/shell/check_command.ts", import.meta.url));
      const script = join(dir, "check.ts");
      await writeFile(
        script,
        `import { checkCommand } from ${JSON.stringify(module)};
const a = await checkCommand("git status | head");
const b = await checkCommand("ls; rm x");
console.log(JSON.stringify([a.verdict, b.verdict]));`,
      );
      const config = fileURLToPath(new URL("../../../deno.json", import.meta.url));
      const result = spawnSync(process.execPath, ["run", "--no-prompt", "--config", config, script], {
        encoding: "utf8",
      });
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stdout.trim(), '["allow","ask"]');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("runs under Node (bundled), with Node's permission model closing the file system", {
    timeout: 60_000,
    skip: spawnSync("node", ["--version"]).status === 0 ? false : "needs node",
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-command-"));
    try {
      const module = fileURLToPath(new URL("../../../policy/shell/check_command.ts", import.meta.url));
      const entry = join(dir, "entry.ts");
      await writeFile(
        entry,
        `import { checkCommand } from ${JSON.stringify(module)};
const a = await checkCommand("git status | head", { sandbox: { available: true } });
const b = await checkCommand("ls; rm x");
// Node's permission model forbids starting bwrap: the probe fails, git asks.
const c = await checkCommand("git status");
console.log(JSON.stringify([a.verdict, b.verdict, b.reasons, c.verdict, c.sandbox.available]));
console.error(c.reasons.join(" | "));`,
      );
      const bundle = join(dir, "bundle.mjs");
      const config = fileURLToPath(new URL("../../../deno.json", import.meta.url));
      const bundled = spawnSync(
        process.execPath,
        ["bundle", "--quiet", "--platform", "node", "--config", config, "-o", bundle, entry],
        { encoding: "utf8" },
      );
      assert.equal(bundled.status, 0, bundled.stderr);
      const result = spawnSync(
        "node",
        ["--no-warnings", "--experimental-permission", `--allow-fs-read=${bundle}`, bundle],
        { encoding: "utf8" },
      );
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stdout.trim(), '["allow","ask",["`rm x`: `rm` is not on the allowlist"],"ask",false]');
      assert.match(result.stderr, /`git status`: runs code the project controls, and the OS sandbox is unavailable: ./);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("checkCommand: one analysis for every runtime", () => {
  // Why the differential tests run under Deno only (DIFFERENTIAL_DENO_ONLY): nothing in the analysis depends on
  // the runtime that loads it (the node: modules it imports are the API both runtimes give), so its agreement with
  // bash, sed and the oracle's sandbox is the same under Node.
  test("no module of policy/shell/ looks at which runtime runs it or uses Deno's own API", {
    timeout: 60_000,
  }, async () => {
    const folder = fileURLToPath(new URL("../../../policy/shell/", import.meta.url));
    const modules = (await readdir(folder)).filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts"));
    assert.ok(modules.length > 20, `found ${modules.join(", ")}`);
    for (const name of modules) {
      // The code alone: comments and the text of string literals say `Deno` without using it.
      const code = (await readFile(join(folder, name), "utf8"))
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/\/\/.*$/gm, "")
        .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""');
      const found = /\bDeno\b|\bBun\b|\bprocess\.(?:versions|release)\b/.exec(code);
      assert.equal(found, null, `${name} looks at the runtime: ${found?.[0]}`);
    }
  });
});
