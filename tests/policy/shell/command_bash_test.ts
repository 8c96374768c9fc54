/**
 * Differential tests: every command line checkCommand allows is run by real
 * bash inside bubblewrap, and must run no program outside the allowlist and
 * change no file. The command lines are generated from fragments that attack
 * the checker (substitutions, operators, quotes, redirections, here-documents,
 * options that write) with a fixed seed, so failures reproduce.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../../policy/shell/allowlist.ts";
import { seededRandom } from "./_random.ts";
import { DIFFERENTIAL_DENO_ONLY } from "../../_runtime.ts";

const sandboxed = spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-all", "/bin/true"]).status === 0;
const skip = DIFFERENTIAL_DENO_ONLY || (sandboxed ? false : "needs bubblewrap");

let root = "";
before(async () => {
  root = await mkdtemp(join(tmpdir(), "toolfence-bash-"));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Run {
  stderr: string;
  changed: boolean;
}

async function snapshot(work: string): Promise<string> {
  const names = (await readdir(work)).filter((name) => name !== ".git").sort();
  const entries = [];
  for (const name of names) {
    const info = await stat(join(work, name));
    entries.push([name, info.mtimeMs, info.size]);
  }
  return JSON.stringify(entries);
}

/** Runs `command` with bash in a fresh folder, in a sandbox where only `root` is writable. */
async function runInBash(command: string, path: string, gitRepo = false): Promise<Run> {
  const work = join(root, "work");
  await rm(work, { recursive: true, force: true });
  await mkdir(work);
  await writeFile(join(work, "f"), "hello a\n");
  await writeFile(join(work, "x"), "rm\n");
  if (gitRepo) spawnSync("git", ["init", "-q", work]);
  const before = await snapshot(work);
  const result = spawnSync(
    "bwrap",
    [
      ...["--ro-bind", "/", "/", "--bind", root, root, "--dev", "/dev", "--tmpfs", "/tmp"],
      ...["--unshare-all", "--die-with-parent", "--chdir", work],
      ...["/usr/bin/env", "-i", `PATH=${path}`, "HOME=/nonexistent", "/bin/bash", "-c", command],
    ],
    { encoding: "utf8", timeout: 5000, input: "" },
  );
  return { stderr: result.stderr ?? "", changed: before !== await snapshot(work) };
}

describe("allowed commands, run by bash", { skip }, () => {
  const allowlist = ["git status", "ls", "echo", "cat", "head"];
  const stubs = ["ls", "cat", "head", "git", "rm", "id", "touch", "sh", "bash", "env", "xargs", "sed", "tee", "x", "f"];

  async function makeStubs(): Promise<{ bin: string; log: string }> {
    const bin = join(root, "bin");
    const log = join(root, "log");
    await mkdir(bin, { recursive: true });
    for (const name of stubs) {
      await writeFile(
        join(bin, name),
        `#!/bin/bash\nargs="$*"\necho "${name} \${args//$'\\n'/\\\\n}" >> ${log}\necho out-${name}\n`,
      );
      await chmod(join(bin, name), 0o755);
    }
    return { bin, log };
  }

  const programs = ["ls", "cat", "head", "echo", "git status", "echo $(ls)", 'echo "$(cat f)"', "echo '$(rm x)'"];
  const shapes = [
    "ls 2>&1",
    "ls >/dev/null",
    "cat <<EOF\nhi $(ls)\nEOF\n",
    "cat <<'EOF'\n$(rm x)\nEOF\n",
    "cat <<< hi",
    "echo ${y:-a}",
    "(ls)",
    "{ ls; }",
    "! ls",
    "[[ -f f ]]",
    "echo $((1+2))",
    "l\\s",
    '"e"cho x',
    "echo {a,b}",
    "cat <(ls)",
    "echo ~",
    "ls -- -la",
    "echo $'\\x72m'",
    "ls #c",
  ];
  const attacks = [
    "rm x",
    "$(rm x)",
    "`rm x`",
    "> g",
    "; rm x",
    "& rm x",
    "\nrm x",
    "| sh",
    "FOO=1",
    "$IFS",
    "${x:=y}",
    "${!x}",
    "<(rm x)",
    ">(rm x)",
    "'",
    '"',
    "\\",
    "$(",
    "<<EOF",
    "\n",
    "{",
    "}",
    "(",
    ")",
    "2>g",
    "&>g",
    ">&g",
    "3>g",
    "<f",
    "<>g",
    "$'\\x72m'",
    "e\\val x",
    "${x@P}",
    "a=1",
    '"$(rm x)"',
    '"`rm x`"',
    "#",
    "\\\n",
    "$((x))",
    "{fd}>/dev/null",
    "|&",
    "!",
    "time",
    "2>/dev/null rm",
    "EOF",
  ];
  const joins = [" ; ", " && ", " || ", " | ", ";", "|", "&&", " |& ", "\n", " & "];

  test("run no program outside the allowlist and write no file", { timeout: 240_000 }, async () => {
    const { bin, log } = await makeStubs();
    const next = seededRandom(20240601);
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)];
    let allowed = 0;
    const violations: string[] = [];
    const lines = 1500;
    for (let n = 0; n < lines; n++) {
      const parts: string[] = [];
      const count = 1 + Math.floor(next() * 4);
      for (let i = 0; i < count; i++) {
        let part = pick(next() < 0.5 ? programs : shapes);
        if (next() < 0.4) {
          const at = Math.floor(next() * (part.length + 1));
          part = `${part.slice(0, at)}${next() < 0.5 ? " " : ""}${pick(attacks)}${part.slice(at)}`;
        }
        parts.push(part);
        if (i < count - 1) parts.push(pick(joins));
      }
      const command = parts.join("");
      if ((await checkCommand(command, { allowlist })).verdict !== "allow") continue;
      allowed++;
      await rm(log, { force: true });
      const run = await runInBash(command, bin);
      const ran = (await readFile(log, "utf8").catch(() => "")).split("\n").filter((line) => line !== "");
      const outside = ran.filter((line) => !/^(ls|cat|head)( |$)|^git status( |$)/.test(line));
      if (outside.length > 0 || run.changed || /Read-only file system/.test(run.stderr)) {
        violations.push(`${JSON.stringify(command)} ran ${JSON.stringify(outside)} changed=${run.changed}`);
      }
    }
    assert.deepEqual(violations, []);
    // The generator must exercise the allowed side, or the test proves nothing.
    assert.ok(allowed > lines / 7.5, `only ${allowed} of ${lines} generated commands were allowed`);
  });
});

describe("allowlisted commands with flag rules, run by bash", { skip }, () => {
  const allowlist = [...DEFAULT_COMMAND_ALLOWLIST, "sed", "awk", "tee", "tar -tf", "test", "git"];
  const commands = [
    "find .",
    "find . -name f",
    "sort f",
    "uniq f",
    "git diff",
    "git log -1",
    "git status",
    "rg hello",
    "grep hello f",
    "sed -n p f",
    "sed s/a/b/ f",
    "awk '{print}' f",
    "tee",
    "tree",
    "file f",
    "date",
    "printf x",
    "tail f",
    "du .",
    "git show",
    "tar -tf t.tar",
    "test -f f",
  ];
  const options = [
    "-delete",
    "-exec touch g ;",
    "-exec touch g \\;",
    "-fprint g",
    "-execdir touch g {} +",
    "--output=g",
    "--output g",
    "-o g",
    "-og",
    "--out=g",
    "--pre=touch",
    "--pre touch",
    "-p",
    "-i",
    "-i.bak",
    "--in-place",
    "'w g'",
    "'s/a/b/w g'",
    "'1e touch g'",
    "-e 'w g'",
    "'{print > \"g\"}'",
    "'BEGIN{system(\"touch g\")}'",
    "g",
    "f g",
    "-v X",
    "-c core.pager=touch",
    "--compile",
    "-R",
    "-xf",
    "--to-command=touch",
    "*",
    "$(echo --output=g)",
    '"--output=g"',
    "-uo g",
    "--exec-path=.",
    "--",
    "-e",
  ];

  test("write no file", { timeout: 240_000 }, async () => {
    const next = seededRandom(7);
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)];
    let allowed = 0;
    const violations: string[] = [];
    const lines = 400;
    for (let n = 0; n < lines; n++) {
      let command = pick(commands);
      for (let i = Math.floor(next() * 3); i > 0; i--) command += ` ${pick(options)}`;
      if ((await checkCommand(command, { allowlist })).verdict !== "allow") continue;
      allowed++;
      const run = await runInBash(command, "/usr/bin:/bin", true);
      if (run.changed || /Read-only file system/.test(run.stderr)) {
        violations.push(`${JSON.stringify(command)}: ${run.stderr.slice(0, 200)}`);
      }
    }
    assert.deepEqual(violations, []);
    assert.ok(allowed > lines / 4, `only ${allowed} of ${lines} generated commands were allowed`);
  });
});
