// A denied file below a folder whose path is longer than PATH_MAX (4096 bytes): no program can name it by its
// absolute path, so the walk that finds the sandbox's masks could not list its folder, and skipped it. A command
// reaches it all the same, one relative `cd` at a time. Until 2026-12-06, with `**/.env` denied, the sandbox
// required and every question answered yes, `grep -ra SECRET .` in the bash tool printed DEEP-SECRET from such a
// `.env` (ripgrep and grep walk by relative names). Now the walk fails there, and the command is refused
// (`sandbox_unavailable`) rather than run with the file in view; the file tools never name it either.
// Likewise a name that is not UTF-8, which the runtime gets with U+FFFD for each bad byte and cannot name: a `.env`
// in a folder named `bad<0xff>` was printed by `grep -ra`, and a denied `<0xff>.key` made bubblewrap fail naming it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import { Session } from "../../../policy/session.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";

const SECRET = "DEEP-SECRET-4096-0123456789";
const skip = (await bubblewrapStatus()).path === undefined ? "needs bubblewrap" : false;
const box = new ToolBox().withDefaults("fs", "search", "cmd");
const SEGMENT = "d".repeat(200);
const LEVELS = 25;

let dir: string;
let rules: PolicyRules;

before(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-deny-deep-")));
  // Made one level at a time, as a command would: the whole path is past what mkdir -p may name.
  execFileSync("/bin/bash", [
    "-c",
    `cd "$1" && for i in $(seq ${LEVELS}); do mkdir ${SEGMENT} && cd ${SEGMENT} || exit 1; done; ` +
    `printf '%s\\n' "$2" > .env`,
    "sh",
    dir,
    SECRET,
  ]);
  await writeFile(join(dir, "notes.txt"), "visible\n");
  const text = '{ "paths": { "deny": ["**/.env"] } }';
  rules = PolicyRules.fromLayers([parsePolicyFile(join(dir, "toolfence.json"), text, "project")], dir);
});

after(async () => {
  // rm -r walks by relative names too.
  execFileSync("rm", ["-rf", dir]);
  await rm(dir, { recursive: true, force: true });
});

describe("a denied file past PATH_MAX", { skip }, () => {
  test("a sandboxed command that walks or goes down to it is refused, never shown it", {
    timeout: 90_000,
  }, async () => {
    const session = new Session({ workspace: dir, rules, autoConfirm: true, sandbox: "required" });
    try {
      const down = `for i in $(seq ${LEVELS}); do cd ${SEGMENT}; done`;
      for (
        const command of [
          "grep -ra DEEP . ; true",
          `${down}; cat "$(printf .e%s nv)"; true`,
          "cat notes.txt",
        ]
      ) {
        const result = await box.call(session, "bash", { command });
        const text = JSON.stringify(result);
        assert.ok(!text.includes(SECRET), `${command}: ${text}`);
        assert.equal(result.errorCode, "sandbox_unavailable", `${command}: ${text}`);
        assert.match(String(result.error), /PATH_MAX/, text);
      }
      for (
        const [name, args] of [
          ["grep", { pattern: "DEEP", skip_ignored: false }],
          ["glob", { pattern: "**/.env", skip_ignored: false }],
        ] as const
      ) {
        const result = await box.call(session, name, args);
        const text = JSON.stringify(result);
        assert.ok(!text.includes(SECRET), `${name}: ${text}`);
        assert.ok(!/"[^"]*\.env"/.test(JSON.stringify(result.output ?? null)), `${name}: ${text}`);
      }
    } finally {
      await session.close();
    }
  });

  test("without the deep folder, the same session's commands run", { timeout: 60_000 }, async () => {
    const shallow = await realpath(await mkdtemp(join(tmpdir(), "toolfence-deny-shallow-")));
    try {
      await writeFile(join(shallow, "notes.txt"), "visible\n");
      await writeFile(join(shallow, ".env"), `${SECRET}\n`);
      const session = new Session({ workspace: shallow, rules, autoConfirm: true, sandbox: "required" });
      try {
        const result = await box.call(session, "bash", { command: "grep -ra . . 2>/dev/null; true" });
        const text = JSON.stringify(result);
        assert.equal(result.status, "success", text);
        assert.match(text, /visible/, text);
        assert.ok(!text.includes(SECRET), text);
      } finally {
        await session.close();
      }
    } finally {
      await rm(shallow, { recursive: true, force: true });
    }
  });
});

describe("a denied path under a name that is not UTF-8", { skip }, () => {
  test("a sandboxed command is refused while one could hold or be a denied path; a plain such file is left", {
    timeout: 90_000,
  }, async () => {
    const odd = await realpath(await mkdtemp(join(tmpdir(), "toolfence-deny-bytes-")));
    try {
      const make = (script: string) => execFileSync("/bin/bash", ["-c", `cd "$1" && ${script}`, "bash", odd]);
      await writeFile(join(odd, "notes.txt"), "visible\n");
      const oddRules = PolicyRules.fromLayers(
        [parsePolicyFile(join(odd, "toolfence.json"), '{ "paths": { "deny": ["**/.env", "**/*.key"] } }', "project")],
        odd,
      );
      const session = new Session({ workspace: odd, rules: oddRules, autoConfirm: true, sandbox: "required" });
      try {
        // A plain file no rule names, whatever its name: commands run.
        make(`printf 'plain\\n' > $'plain\\xfe.txt'`);
        const plain = await box.call(session, "bash", { command: "cat notes.txt" });
        assert.equal(plain.status, "success", JSON.stringify(plain));
        for (
          const [script, undo] of [
            [`mkdir $'bad\\xff' && printf '%s\\n' "BYTES-SECRET-1" > $'bad\\xff/.env'`, `rm -r $'bad\\xff'`],
            [`printf '%s\\n' "BYTES-SECRET-2" > $'\\xff.key'`, `rm $'\\xff.key'`],
          ]
        ) {
          make(script);
          const result = await box.call(session, "bash", { command: "grep -ra BYTES . 2>&1; true" });
          const text = JSON.stringify(result);
          assert.ok(!text.includes("BYTES-SECRET"), text);
          assert.equal(result.errorCode, "sandbox_unavailable", text);
          assert.match(String(result.error), /not UTF-8/, text);
          assert.doesNotMatch(text, /\.key|\.env/, text);
          make(undo);
        }
      } finally {
        await session.close();
      }
    } finally {
      await rm(odd, { recursive: true, force: true });
    }
  });
});
