// The audit log: a record per call and per decision, secrets redacted in
// arguments and outputs (1,000 calls full of them), rotation by size, and a
// killed server's log readable up to its last complete line.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import * as v from "valibot";
import { tool } from "../../../core/tool.ts";
import { ToolBox } from "../../../toolbox.ts";
import { Session } from "../../../policy/session.ts";
import { AuditLog, type AuditRecord } from "../../../policy/audit/audit_log.ts";
import { REDACTED, Redactor } from "../../../policy/audit/redact.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { seededRandom } from "../shell/_random.ts";
import { exited } from "../../_exited.ts";
import { DENO, DENO_PROCESS_ONLY } from "../../_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

let dir: string;
before(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-audit-")));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const next = seededRandom(1616);
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
function chars(n: number, from = ALNUM): string {
  let out = "";
  for (let i = 0; i < n; i++) out += from[Math.floor(next() * from.length)];
  return out;
}

// One fresh secret of each shape.
function secrets(envValue: string, named: string): string[] {
  return [
    `AKIA${chars(16, UPPER)}`,
    `ghp_${chars(36)}`,
    `github_pat_${chars(40)}`,
    `sk-ant-${chars(40)}`,
    `sk-proj-${chars(32)}`,
    `xoxb-${chars(12)}-${chars(12)}`,
    `AIza${chars(35)}`,
    `sk_live_${chars(24)}`,
    `npm_${chars(36)}`,
    `glpat-${chars(20)}`,
    `eyJ${chars(20)}.eyJ${chars(30)}.${chars(40)}`,
    `-----BEGIN RSA PRIVATE KEY-----\n${chars(64)}\n${chars(64)}\n-----END RSA PRIVATE KEY-----`,
    envValue,
    named,
  ];
}

describe("redaction", () => {
  test("each shape, an environment value and a configured name are replaced", { timeout: 60_000 }, () => {
    const env = { DEPLOY_KEY: "plain-looking-deploy-value-42", PATH: "/usr/bin:/bin", HOME: "/home/me" };
    const redactor = new Redactor({ env, names: ["internal-codename-zebra"] });
    for (const secret of secrets(env.DEPLOY_KEY, "internal-codename-zebra")) {
      const text = redactor.redact(`before ${secret} after`);
      assert.ok(!text.includes(secret), text);
      assert.ok(text.startsWith("before ") && text.includes(REDACTED), text);
    }
    assert.equal(redactor.redact("ls /home/me/project"), "ls /home/me/project", "harmless variables stay");
    assert.deepEqual(redactor.redactValue({ [`k${env.DEPLOY_KEY}`]: [env.DEPLOY_KEY] }), {
      [`k${REDACTED}`]: [REDACTED],
    });
  });
});

describe("the audit log of calls", () => {
  test(
    "1,000 calls with secrets in their arguments and outputs leave none in the log",
    { timeout: 60_000 },
    async () => {
      const envValue = `env-secret-${chars(24)}`;
      process.env.TOOLFENCE_TEST_PLANTED = envValue;
      const named = `codename-${chars(16)}`;
      const file = join(dir, "calls.jsonl");
      const redactor = new Redactor({ names: [named] }); // the real process environment
      const audit = new AuditLog({ file, redactor, maxBytes: 64 * 1024 * 1024 });
      const planted: string[] = [];
      const box = new ToolBox().register(
        tool({
          name: "echo_secret",
          description: "Echoes its text and adds a secret of its own.",
          input: v.object({ text: v.string(), n: v.number() }),
          readOnly: true,
          run: ({ text, n }) => {
            const own = secrets(envValue, named)[n % 14];
            planted.push(own);
            return { echoed: text, own, nested: [{ deep: `x ${own} y` }] };
          },
        }),
      );
      audit.attach(box);
      const session = new Session({ workspace: dir, onDecision: (s, e) => audit.decision(s, e) });
      try {
        for (let i = 0; i < 1_000; i++) {
          const all = secrets(envValue, named);
          const secret = all[i % all.length];
          planted.push(secret);
          const result = await box.call(session, "echo_secret", { text: `call ${i}: ${secret} end`, n: i });
          assert.equal(result.status, "success");
        }
      } finally {
        await session.close();
        audit.close();
        delete process.env.TOOLFENCE_TEST_PLANTED;
      }
      const text = await readFile(file, "utf8");
      const lines = text.trimEnd().split("\n");
      assert.equal(lines.length, 1_000);
      const records = lines.map((line) => JSON.parse(line) as AuditRecord);
      assert.ok(records.every((r) => r.type === "call" && r.tool === "echo_secret" && r.status === "success"));
      assert.match(String((records[7].arguments as { text: string }).text), /^call 7: \[REDACTED\] end$/);
      const found = planted.filter((secret) =>
        text.includes(secret) || secret.split("\n").some((part) => part.length > 12 && text.includes(part))
      );
      assert.deepEqual(found, [], "secrets in the log");
    },
  );

  test("policy decisions are recorded with their rule, layer and who answered", { timeout: 60_000 }, async () => {
    const layer = parsePolicyFile(
      join(dir, "toolfence.json"),
      '{ "commands": { "deny": ["git push"], "ask": [{ "pattern": "ls -la", "enforce": false }] }, ' +
        '"paths": { "deny": ["**/.env"] } }',
      "project",
    );
    const rules = PolicyRules.fromLayers([layer], dir);
    const records: AuditRecord[] = [];
    const audit = new AuditLog({ onRecord: (r) => records.push(r), redactor: new Redactor({ env: {} }) });
    const box = new ToolBox().withDefaults("fs", "cmd");
    audit.attach(box);
    await writeFile(join(dir, ".env"), "A=1\n");
    const session = new Session({
      workspace: dir,
      rules,
      autoConfirm: true,
      onDecision: (s, e) => audit.decision(s, e),
    });
    try {
      await box.call(session, "bash", { command: "env git push" });
      await box.call(session, "read_file", { path: ".env" });
      await box.call(session, "bash", { command: "echo hi" });
      // (Not a git command: while the policy hides paths, every git command needs a person, which no rule shadows.)
      await box.call(session, "bash", { command: "ls -la" });
    } finally {
      await session.close();
    }
    const decisions = records.filter((r) => r.type === "decision");
    const push = decisions.find((r) => r.subject === "env git push")!;
    assert.equal(push.decision, "deny");
    assert.equal(push.answeredBy, "rule");
    assert.deepEqual(
      { pattern: (push.rule as { pattern: string }).pattern, layer: (push.rule as { layer: string }).layer },
      { pattern: "git push", layer: "project" },
    );
    assert.equal(typeof push.callId === "string" || push.callId === undefined, true);
    const env = decisions.find((r) => r.kind === "path")!;
    assert.equal(env.decision, "deny");
    const echo = decisions.find((r) => r.subject === "echo hi")!;
    assert.equal(echo.decision, "allow");
    assert.equal(echo.answeredBy, "rule");
    // Shadow mode: the ask rule is not enforced; what it would have done is recorded.
    const shadowed = decisions.find((r) => String(r.subject).startsWith("ls -la"))!;
    assert.equal((shadowed.shadow as { decision: string; pattern: string }).decision, "ask");
    assert.equal((shadowed.shadow as { pattern: string }).pattern, "ls -la");
    const calls = records.filter((r) => r.type === "call").slice(0, 3);
    assert.deepEqual(
      calls.map((r) => [r.tool, r.status]),
      [["bash", "skipped"], ["read_file", "skipped"], ["bash", "success"]],
      // The calls' errors, should one fail (a CI run saw `echo hi` end in an error, and nothing said which).
      JSON.stringify(calls.map((r) => [r.tool, r.status, r.errorCode, r.error])),
    );
    assert.equal(calls[0].errorCode, "permission_denied");
  });

  test("the log rotates by size and keeps the newest files", { timeout: 60_000 }, async () => {
    const file = join(dir, "rotating.jsonl");
    const audit = new AuditLog({ file, maxBytes: 2_000, keep: 2, redactor: new Redactor({ env: {} }) });
    for (let i = 0; i < 200; i++) audit.record({ type: "decision", n: i, padding: "x".repeat(50) });
    audit.close();
    const names = (await readdir(dir)).filter((n) => n.startsWith("rotating.jsonl")).sort();
    assert.deepEqual(names, ["rotating.jsonl", "rotating.jsonl.1", "rotating.jsonl.2"]);
    for (const name of names) {
      const text = await readFile(join(dir, name), "utf8");
      assert.ok(Buffer.byteLength(text) <= 2_000, name);
      for (const line of text.trimEnd().split("\n")) JSON.parse(line);
    }
    const last = (await readFile(file, "utf8")).trimEnd().split("\n").at(-1)!;
    assert.equal(JSON.parse(last).n, 199);
  });

  test("a record past a line's bound reaches the file and the callback (a fleet's store) made to fit", {
    timeout: 60_000,
  }, async () => {
    // Before, the callback got the whole record: a call's arguments of megabytes went whole into a fleet's store,
    // where every record stays; and arguments of 200,000 names, or one long name, were not cut in the file either.
    const file = join(dir, "bounded.jsonl");
    const given: AuditRecord[] = [];
    const audit = new AuditLog({ file, redactor: new Redactor({ env: {} }), onRecord: (r) => given.push(r) });
    const names = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`name${i}`, i]));
    audit.record({ type: "call", tool: "write_file", arguments: { content: "x".repeat(2_000_000) } });
    audit.record({ type: "call", tool: "t", arguments: names });
    audit.record({ type: "call", tool: "t", arguments: { ["k".repeat(1_000_000)]: 1 } });
    audit.record({ type: "call", tool: "t", arguments: { deep: Array(100).fill(Array(100).fill("y".repeat(900))) } });
    audit.close();
    const lines = (await readFile(file, "utf8")).trimEnd().split("\n");
    assert.equal(lines.length, 4);
    assert.equal(given.length, 4);
    for (const [n, line] of lines.entries()) {
      assert.ok(Buffer.byteLength(line) <= 256 * 1024, `line ${n}: ${Buffer.byteLength(line)} bytes`);
      assert.deepEqual(given[n], JSON.parse(line));
      assert.equal(given[n].type, "call");
    }
  });
});

function run(args: string[], stdin = ""): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(DENO, ["run", "-A", join(ROOT, "main.ts"), ...args], { cwd: dir });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

test(
  "a killed server's log is readable up to its last complete line, by toolfence audit",
  { timeout: 60_000, skip: DENO_PROCESS_ONLY },
  async () => {
    const file = join(dir, "killed.jsonl");
    const child = spawn(DENO, [
      "run",
      "-A",
      join(ROOT, "main.ts"),
      "serve",
      "--workspace",
      dir,
      "--groups",
      "system",
      "--audit",
      file,
      "--managed-config",
      join(dir, "none.json"),
    ], { cwd: dir, stdio: ["pipe", "pipe", "pipe"] });
    const childExit = exited(child);
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    let answered = 0;
    child.stdout.on(
      "data",
      (d: Buffer) => (answered += d.toString().split("\n").filter((l) => l.includes('"result"')).length),
    );
    send({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    for (let i = 1; i <= 400; i++) {
      send({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "datetime", arguments: {} } });
    }
    const deadline = Date.now() + 60_000;
    while (answered < 50 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.kill("SIGKILL");
    await childExit;
    const text = await readFile(file, "utf8");
    const complete = text.slice(0, text.lastIndexOf("\n") + 1).split("\n").filter(Boolean);
    assert.ok(complete.length >= 40, `only ${complete.length} records`);
    for (const line of complete) assert.equal(JSON.parse(line).type, "call");
    const read = await run(["audit", file, "--type", "call", "--tool", "datetime"]);
    assert.equal(read.code, 0, read.stderr);
    assert.equal(read.stdout.trimEnd().split("\n").length, complete.length);
    // A torn last line (as a kill mid-write would leave) is skipped and counted, the rest still read.
    await writeFile(file, `${complete.join("\n")}\n{"time":"2026`);
    const torn = await run(["audit", file]);
    assert.equal(torn.code, 0);
    assert.equal(torn.stdout.trimEnd().split("\n").length, complete.length);
    assert.match(torn.stderr, /1 incomplete or unreadable line\(s\) skipped/);
  },
);

describe("AuditLog: a log in a folder commands may write", () => {
  test("never opens, rotates or removes through a link at its name or in place of its folder", {
    timeout: 60_000,
  }, async () => {
    const base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-audit-link-")));
    try {
      const logs = join(base, "W", "logs");
      const outside = join(base, "outside");
      await mkdir(logs, { recursive: true });
      await mkdir(outside);
      // A command of an earlier session made the log's name a link to a file outside.
      await writeFile(join(outside, "profile"), "kept\n");
      await symlink(join(outside, "profile"), join(logs, "audit.jsonl"));
      assert.throws(() => new AuditLog({ file: join(logs, "audit.jsonl") }));
      assert.equal(await readFile(join(outside, "profile"), "utf8"), "kept\n");
      await rm(join(logs, "audit.jsonl"));
      // Once open, a command makes the folder a link out: rotating never opens or moves files there.
      const log = new AuditLog({ file: join(logs, "audit.jsonl"), maxBytes: 100 });
      try {
        await rename(logs, logs + ".away");
        await symlink(outside, logs);
        await writeFile(join(outside, "audit.jsonl"), "theirs\n");
        for (let i = 0; i < 3; i++) {
          try {
            log.record({ type: "call", tool: "t", text: "x".repeat(60) });
          } catch {
            // refused: the folder is not the one the log was opened in
          }
        }
      } finally {
        log.close();
      }
      assert.deepEqual((await readdir(outside)).sort(), ["audit.jsonl", "profile"]);
      assert.equal(await readFile(join(outside, "audit.jsonl"), "utf8"), "theirs\n");
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});
