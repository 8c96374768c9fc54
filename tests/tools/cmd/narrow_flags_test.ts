import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";

const here = path.dirname(fileURLToPath(import.meta.url));

function denoRun(flags: string[], args: string[]): Promise<{ listed: string[]; result: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    execFile(
      "deno",
      ["run", "--no-prompt", ...flags, path.join(here, "_narrow_bash.ts"), ...args],
      (error, stdout, stderr) => error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

test("bash works under exactly the Deno flags it documents, and says which flag is missing", async () => {
  const workspace = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-narrow-")));
  const temp = await realpath(tmpdir());
  try {
    const fs = [`--allow-read=${workspace},${temp}`, `--allow-write=${workspace},${temp}`];
    const ok = await denoRun([...fs, "--allow-run=bash,bwrap", "--allow-env"], [workspace, "echo narrow"]);
    assert.equal(ok.result.status, "success", JSON.stringify(ok.result));
    const output = ok.result.output as { stdout: string; sandboxed: boolean };
    assert.equal(output.stdout, "narrow\n");
    assert.equal(output.sandboxed, (await bubblewrapStatus()).path !== undefined);
    assert.ok(ok.listed.includes("bash"));
    const noRun = await denoRun([...fs, "--allow-env"], [workspace, "echo narrow"]);
    assert.equal(noRun.result.errorCode, "fence_denied", JSON.stringify(noRun.result));
    assert.match(String(noRun.result.error), /--allow-run/);
    assert.ok(!noRun.listed.includes("bash"), "without --allow-run the shell tools are not listed");
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
});
