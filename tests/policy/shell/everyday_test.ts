// Lines agents type every day run without asking; each has adversarial twins that must ask.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCommand } from "../../../policy/shell/check_command.ts";

let workspace = "";

before(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), "toolfence-everyday-")));
  await mkdir(join(workspace, "src"));
  await writeFile(join(workspace, "f"), "a:b\nc:d\n");
  await writeFile(join(workspace, "package.json"), '{"name":"demo"}\n');
  await writeFile(join(workspace, "src", "a.ts"), "export const a = 1;\n");
});

after(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/** Everyday lines that run no project code: they run with the sandbox and without it. */
const EVERYDAY = [
  "wc -l < f",
  "awk '{print $1}' f",
  "awk -F: '{print $2}' f",
  "jq .name package.json",
  "jq -r '.name' package.json",
  "od -c f",
  "sort f",
  "sort -u f | head -n 3",
  "head -n 5 f",
  "tail -n 2 f",
  "tr a b < f",
  "tr -d '\\n' < f",
  "cut -d: -f1 f",
  "xxd f",
  "hexdump -C f",
  "cat f | wc -l",
  "grep -rn TODO src",
  "grep -rn '/api/' src",
  "rg -n export src",
  "sed -n '1,2p' f",
  "nl f",
  "tac f",
  "paste f f",
  "cat src/*.ts",
  "diff <(sort f) <(sort f)",
  "sort -u f",
  "wc -l f",
  "du -sh .",
  "file f",
  "xxd -l 64 f",
  "date +%s",
  "jq .a package.json",
  "[ -f f ] && test -d src",
  "[[ -f f && -d src ]] && [[ -t 1 ]]",
];

/** Everyday lines that run project code (git, deno, npm): they run with the sandbox. */
const EVERYDAY_PROJECT = [
  "git shortlog -sn",
  "git log -p",
  "git log --oneline -n 5",
  "deno lint",
  "deno check",
  // deno.json's `fmt.include` may name files outside the workspace, which the check prints.
  "deno fmt --check",
  "npm ls",
];

/** Twins: one change away from an everyday line, each must ask. */
const TWINS = [
  "wc -l < /etc/passwd",
  "wc -l < ~/.bashrc",
  "wc -l < $HOME/x",
  "awk '{print $1}' /etc/passwd",
  "awk '{system(\"id\")}' f",
  "awk '{getline x < \"/etc/passwd\"; print x}' f",
  "awk '{print | \"sh\"}' f",
  "awk '{print > \"out\"}' f",
  "awk -f prog.awk f",
  "jq .name ../package.json",
  "jq env",
  "jq -n '$ENV.HOME'",
  "jq input_filename f",
  "jq --rawfile a /etc/passwd -n '$a'",
  "jq --slurpfile a /etc/passwd -n '$a'",
  "jq -f prog.jq f",
  "jq --from-file prog.jq f",
  "jq -rf prog.jq f",
  "od -c /etc/shadow",
  "xxd f out",
  "xxd {f,out}",
  "xxd f.t?t",
  "xxd -r f",
  "hexdump -C ~/.ssh/id_rsa",
  "sort -o f f",
  "sort --files0-from=/etc/passwd",
  "printf '/etc/shadow\\0' | sort --files0-from=-",
  "sort --files0-from <(printf '/etc/passwd\\0')",
  "wc --files0-from=-",
  "du --files0-from=-",
  "printf .env | file -f -",
  "find -files0-from -",
  "find . -files0-from f",
  "xxd f -x",
  "xxd --revert f -evil",
  "xxd --r f",
  "date 010203042030",
  "file -z f",
  "file --uncompress f",
  "jq -n '$ ENV'",
  "jq -n '$#c\nENV.X'",
  "head -n 5 /proc/self/environ",
  "tr a b < ../f",
  "cut -d: -f1 /etc/passwd",
  "deno fmt",
  "deno fmt --check /etc",
  "deno lint ../other",
  "git shortlog -sn -- ../x",
  "sed -n '1p' ~/x",
  "cat src/../../x",
  "cat .*/x",
  // test's operands are files when bash names them with a tilde.
  "[ -r ~/.ssh/id_rsa ]",
  "test -e ~root/.bashrc",
  // and so are those of the `[[ ]]` file tests.
  "[[ -e /etc/shadow ]] && echo yes",
  "[[ f -nt /etc/passwd ]]",
  "[[ ! -s ../x ]]",
];

describe("everyday lines", { timeout: 120_000 }, () => {
  test("run without asking, with the sandbox and without it", { timeout: 120_000 }, async () => {
    for (const line of EVERYDAY) {
      for (const sandbox of [{ available: true }, { available: false }]) {
        const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
        assert.equal(check.verdict, "allow", `${line} (sandbox ${sandbox.available}): ${check.reasons.join(" | ")}`);
      }
    }
  });

  test("that run project code run inside the sandbox, and ask without it", { timeout: 120_000 }, async () => {
    for (const line of EVERYDAY_PROJECT) {
      const sandboxed = await checkCommand(line, { sandbox: { available: true }, workspaceRoot: workspace });
      assert.equal(sandboxed.verdict, "allow", `${line}: ${sandboxed.reasons.join(" | ")}`);
      const bare = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
      assert.equal(bare.verdict, "ask", line);
    }
  });

  test("their adversarial twins ask, with the sandbox and without it", { timeout: 120_000 }, async () => {
    for (const line of TWINS) {
      for (const sandbox of [{ available: true }, { available: false }]) {
        const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
        assert.notEqual(check.verdict, "allow", `${line} (sandbox ${sandbox.available})`);
        assert.ok(check.reasons.length > 0, line);
      }
    }
  });
});
