// The official MCP conformance suite (@modelcontextprotocol/conformance, its
// server scenarios) against serveHttp with toolfence's own test tools
// (tests/fixtures/conformance_tools.ts). Scenarios that do not apply are
// listed, with reasons, in tests/fixtures/conformance-baseline.yml; the suite
// exits non-zero when any other fails, or when a listed one passes.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { exited } from "../_exited.ts";
import { IS_DENO } from "../_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

function run(args: string[], cwd: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

test("the conformance suite passes every scenario that applies", {
  timeout: 60_000,
  skip: !IS_DENO && "runs under Deno",
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), "toolfence-conformance-"));
  const server = spawn(process.execPath, ["run", "-A", join(ROOT, "tests/fixtures/conformance_server.ts"), dir], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const serverExit = exited(server);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      server.stdout.on("data", (chunk) => {
        out += chunk;
        const line = out.split("\n").find((l) => l.startsWith("http://"));
        if (line) resolve(line.trim());
      });
      server.on("close", (code) => reject(new Error(`the fixture server exited with ${code}`)));
    });
    const { code, output } = await run(
      [
        "run",
        "-A",
        "npm:@modelcontextprotocol/conformance@0.1.16",
        "server",
        "--url",
        url,
        "--expected-failures",
        join(ROOT, "tests/fixtures/conformance-baseline.yml"),
      ],
      dir,
      240_000,
    );
    const summary = output.slice(output.indexOf("=== SUMMARY ==="));
    assert.equal(code, 0, summary);
    assert.match(summary, /✓ tools-call-elicitation/);
    assert.match(summary, /✓ dns-rebinding-protection/);
  } finally {
    server.kill("SIGTERM");
    await serverExit;
    await rm(dir, { recursive: true, force: true });
  }
});
