// The user's policy file ($HOME/.config/toolfence/config.json) is read under
// exactly the flags `main.ts flags` prints: a rule in it holds for a call run
// with those flags, instead of the file being skipped for want of a grant.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { DENO, DENO_PROCESS_ONLY } from "./_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MAIN = join(ROOT, "main.ts");
const run = promisify(execFile);

describe("the user's policy file under the printed flags", { skip: DENO_PROCESS_ONLY }, () => {
  test("a deny rule of the user's policy file holds under the flags `flags` prints", { timeout: 180_000 }, async () => {
    const top = await realpath(await mkdtemp(join(tmpdir(), "toolfence-user-policy-")));
    const workspace = join(top, "work");
    const home = join(top, "home");
    try {
      await mkdir(workspace);
      // The session temp dir's parent is granted, so it must not hold the home folder: not the system temp folder.
      await mkdir(join(top, "tmp"));
      const where = ["--workspace", workspace, "--temp-dir", join(top, "tmp")];
      await mkdir(join(home, ".config", "toolfence"), { recursive: true });
      await writeFile(join(workspace, "secret.txt"), "TOPSECRET\n");
      await writeFile(
        join(home, ".config", "toolfence", "config.json"),
        JSON.stringify({ paths: { deny: ["secret.txt"] } }),
      );
      const { stdout: info } = await run(DENO, ["info", "--json"], { timeout: 60_000 });
      // Another HOME, the same Deno cache (nothing is downloaded again).
      const env: Record<string, string | undefined> = {
        ...process.env,
        HOME: home,
        DENO_DIR: JSON.parse(info).denoDir as string,
        XDG_CONFIG_HOME: undefined,
      };
      const { stdout: printed } = await run(DENO, ["run", "-A", MAIN, "flags", ...where, "--groups", "fs"], {
        env,
        timeout: 60_000,
      });
      const flags = printed.trim().split(" ");
      assert.ok(
        flags.some((f) =>
          f.startsWith("--allow-read=") && f.includes(join(home, ".config", "toolfence", "config.json"))
        ),
        printed,
      );
      const call = (granted: string[]) =>
        run(DENO, ["run", ...granted, MAIN, "call", ...where, "--groups", "fs", "read_file", '{"path":"secret.txt"}'], {
          env,
          cwd: workspace,
          timeout: 90_000,
        }).then(({ stdout, stderr }) => ({ stdout, stderr, code: 0 }), (e) => ({ ...e, code: e.code as number }));
      const denied = await call(flags);
      assert.equal(denied.code, 1, `${denied.stdout}\n${denied.stderr}`);
      assert.doesNotMatch(denied.stdout, /TOPSECRET/);
      assert.doesNotMatch(denied.stderr, /is not applied/, "the user file was skipped");
      assert.match(denied.stdout + denied.stderr, /in the user file/);
      assert.notEqual(JSON.parse(denied.stdout).status, "success");
      // The control: without the grant the file is skipped, and said to be.
      const narrower = flags.map((f) =>
        f.startsWith("--allow-read=") ? f.replace(/,[^,]*\.config\/toolfence\/config\.json/, "") : f
      );
      const skipped = await call(narrower);
      assert.equal(skipped.code, 0, `${skipped.stdout}\n${skipped.stderr}`);
      assert.match(skipped.stderr, /config\.json is not applied/);
      assert.match(skipped.stdout, /TOPSECRET/);
    } finally {
      await rm(top, { recursive: true, force: true });
    }
  });
});
