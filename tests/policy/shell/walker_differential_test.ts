// A differential test of the walk against real bash: command lines are built
// from templates (the constructs where tree-sitter-bash and bash can disagree:
// `[`, `[[`, `=~`, `${...}` in double quotes, comments, here-documents,
// redirections, arithmetic) and fills (ways to hide `touch pwned`). Every line
// checkCommand allows runs in bash inside bubblewrap, in an empty folder; no
// allowed line may create a file there. Against the analysis before
// policy/shell was split (commit 4340cad) it finds ten such lines.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { DIFFERENTIAL_DENO_ONLY } from "../../_runtime.ts";

const sandboxed = spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-all", "/bin/true"]).status === 0;
const skip = DIFFERENTIAL_DENO_ONLY || (sandboxed ? false : "needs bubblewrap");

// `touch` is not on it, and nothing on it writes a file.
const allowlist = ["ls", "echo", "cat", "[", "test", "true"];

const FAMILIES: { templates: string[]; fills: string[] }[] = [
  {
    // `[` is a command; `[[` has its own grammar.
    templates: [
      "[ @ ]",
      "[ a @ b ]",
      "test @",
      "[[ @ ]]",
      "[[ a =~ @ ]]",
      "[[ a == @ ]]",
      "[[ ( @ ) ]]",
      "[[ a && @ ]]",
    ],
    fills: [
      "-z a || touch pwned",
      "a && touch pwned",
      "a | touch pwned",
      "a > pwned",
      "a >pwned ]",
      "]] || touch pwned ]]",
      ") ]] || touch pwned ) ]]",
      "( ]] ) || touch pwned ]] )",
      "\\ ]] || touch pwned ]]",
      "<(touch pwned)",
      "x|touch pwned",
      "-eq -eq 'a[$(touch pwned)]'",
      "1 -eq 'a[$(touch pwned)]'",
      "-v 'a[$(touch pwned)]'",
      "a ]]\ntouch pwned\n[[ a",
      "a#]] || touch pwned",
    ],
  },
  {
    // Quoting: what bash reads as quotes, comments and words.
    templates: ['echo "${x:-@}"', 'echo "${x/a/@}"', "echo ${x:-@}", "cat <<EOF\n${x:-@}\nEOF", 'echo "a"@', "echo a@"],
    fills: [
      "'$(touch pwned)'",
      "$'$(touch pwned)'",
      "'`touch pwned`'",
      "\\$(touch pwned)",
      "'}$(touch pwned)",
      "${y:-'$(touch pwned)'}",
      "#; touch pwned",
      "#\ntouch pwned",
      "#|touch pwned",
      "#\\\ntouch pwned",
    ],
  },
  {
    // Here-documents, redirections and arithmetic.
    templates: ["cat <<E\n@\nE", "cat <<-E\n@\n\tE", "cat <<E | cat\n@\nE", "ls @", "{ ls; } @", "echo $(( @ ))"],
    fills: [
      "E\ntouch pwned",
      "\tE\ntouch pwned",
      "E\\\ntouch pwned",
      ">pwned",
      "&>pwned",
      ">|pwned",
      "2>&1>pwned",
      ">/dev/nul''l",
      ">/dev/null\\ x",
      "a[$(touch pwned)]",
      "$((a[$(touch pwned)]))",
    ],
  },
];

let root = "";
before(async () => {
  root = await mkdtemp(join(tmpdir(), "toolfence-walker-"));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Runs a line with bash in a fresh empty folder; returns what it created there. */
async function createdBy(line: string): Promise<string[]> {
  const work = await mkdtemp(join(root, "w"));
  spawnSync(
    "bwrap",
    [
      ...["--ro-bind", "/", "/", "--bind", work, work, "--dev", "/dev"],
      ...["--unshare-all", "--die-with-parent", "--chdir", work],
      ...["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "/bin/bash", "-c", line],
    ],
    { timeout: 5000, input: "" },
  );
  const created = await readdir(work);
  await rm(work, { recursive: true, force: true });
  return created;
}

describe("the walk against bash", { skip }, () => {
  test("the harness sees a line that creates a file", { timeout: 60_000 }, async () => {
    assert.deepEqual(await createdBy("[ -z a ] || touch pwned"), ["pwned"]);
    assert.deepEqual(await createdBy("[[ -eq -eq 'a[$(touch pwned)]' ]]"), ["pwned"]);
  });

  test("no allowed line creates a file", { timeout: 60_000 }, async () => {
    const bypasses: string[] = [];
    let allowed = 0;
    let total = 0;
    for (const { templates, fills } of FAMILIES) {
      for (const template of templates) {
        for (const fill of fills) {
          const line = template.replaceAll("@", fill);
          total++;
          if ((await checkCommand(line, { allowlist })).verdict !== "allow") continue;
          allowed++;
          if ((await createdBy(line)).length > 0) bypasses.push(line);
        }
      }
    }
    assert.deepEqual(bypasses, [], `allowed, and bash created a file: ${bypasses.map((b) => JSON.stringify(b))}`);
    // The families are built to attack: most lines ask, some run.
    assert.ok(total > 200 && allowed > 10 && allowed < total / 2, `${allowed} of ${total} allowed`);
  });
});
