import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { entryPoints, ROOT } from "../scripts/public_api.ts";
import { IS_DENO } from "./_runtime.ts";

/** What an entry point needs to be imported; its module JSDoc names the same. */
const NEEDS: Record<string, string[]> = {
  // The AI SDK reads the host name when it loads.
  "@toolfence/adapters/ai-sdk": ["--allow-sys=hostname"],
  // The frameworks read their settings from the environment when they load.
  "@toolfence/adapters/openai-agents": ["--allow-env"],
  "@toolfence/adapters/google-adk": ["--allow-env", "--allow-sys=cpus"],
  "@toolfence/adapters/claude-agent": ["--allow-env", "--allow-sys=homedir"],
};

function importWith(file: string, flags: string[]): { status: number | null; stderr: string } {
  const code = `await import(${JSON.stringify(pathToFileURL(path.join(ROOT, file)).href)});`;
  // `deno run -` reads the module from stdin and, unlike `deno eval`, grants only the flags given.
  const out = spawnSync("deno", ["run", "--no-check", ...flags, "-"], {
    cwd: ROOT,
    input: code,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", DENO_NO_PROMPT: "1" },
  });
  return { status: out.status, stderr: out.stderr };
}

// The source repository, under Deno; the npm build has no deno.json to read.
const entries = IS_DENO ? await entryPoints() : new Map<string, string>();

describe("importing an entry point needs no permission its documentation does not name", {
  skip: IS_DENO ? false : "starts deno processes",
}, () => {
  for (const [entry, file] of entries) {
    const flags = NEEDS[entry] ?? [];
    test(`${entry} imports with ${flags.length ? flags.join(" ") : "no permission"}`, { timeout: 60_000 }, () => {
      const out = importWith(file, ["--no-prompt", ...flags]);
      assert.equal(out.status, 0, out.stderr);
    });
  }
  test("the AI SDK adapter does need what its documentation names", { timeout: 60_000 }, () => {
    const out = importWith("adapters/ai_sdk.ts", ["--no-prompt"]);
    assert.notEqual(out.status, 0, "imported without --allow-sys=hostname: drop it from NEEDS and the JSDoc");
  });
});
