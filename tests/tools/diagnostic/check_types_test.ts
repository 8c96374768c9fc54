// check_types: its diagnostics with file, line and column, and check_types as
// an attacker would use it: outside files must not come back in diagnostics,
// and no registry may be contacted, with the real bubblewrap and a real
// loopback listener.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { mkdir, mkdtemp, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { withSession } from "../../core/_helpers.ts";
import { autoHost } from "../../../policy/hosts.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { ToolBox } from "../../../toolbox.ts";
import { type CheckTypesResult, checkTypesTool } from "../../../tools/diagnostic/check_types.ts";

const box = new ToolBox().register(checkTypesTool);
const skip = (await bubblewrapStatus()).path === undefined ? "bubblewrap is unavailable here" : false;
const auto = { autoConfirm: true, host: autoHost() } as const;

describe("check_types is confined", { skip }, () => {
  test("an import of an outside file is refused, and none of its text comes back", { timeout: 120_000 }, async () => {
    // Outside the workspace, but not under /tmp (which the sandbox hides anyway).
    const outside = await mkdtemp("/var/tmp/toolfence-outside-");
    try {
      await writeFile(path.join(outside, "secret.ts"), 'export const token = "TOPSECRET";\n');
      await writeFile(path.join(outside, "secret.json"), '{"TOPSECRET_KEY": 1}\n');
      await withSession(async (session, dir) => {
        await writeFile(
          path.join(dir, "leak.ts"),
          `import { token } from "${outside}/secret.ts";\nconst n: 1 = token;\nexport { n };\n`,
        );
        await writeFile(
          path.join(dir, "leak_json.ts"),
          `import data from "${outside}/secret.json" with { type: "json" };\nconst n: 1 = data;\nexport { n };\n`,
        );
        for (const file of ["leak.ts", "leak_json.ts"]) {
          const result = await box.call(session, "check_types", { path: file });
          assert.equal(result.errorCode, "import_outside_workspace", JSON.stringify(result));
          assert.doesNotMatch(JSON.stringify(result), /TOPSECRET/);
          assert.match(String(result.error), /outside the workspace/);
        }
      }, auto);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  // The moment a racing command aims at, held still: the path was resolved to race/f.ts, and race is a link to a
  // place outside now. Before, check_types looked at the file with a stat by its path, which followed the link:
  // where it led to a file the check ran on, to a folder it answered not_a_file, to nothing a raw ENOENT, which told
  // a tenant racing a folder of its own what lay at another tenant's path.
  test("a file whose folder is a link after its resolution answers alike wherever the link leads", {
    timeout: 60_000,
  }, async () => {
    const outside = await mkdtemp("/var/tmp/toolfence-outside-");
    try {
      await writeFile(path.join(outside, "f.ts"), "export const a = 1;\n");
      await mkdir(path.join(outside, "folder", "f.ts"), { recursive: true });
      await withSession(async (session, dir) => {
        await mkdir(path.join(dir, "race"));
        await writeFile(path.join(dir, "race", "f.ts"), "export const a = 1;\n");
        const policy = session.policy;
        const resolve = policy.resolveTarget.bind(policy);
        const answers: string[] = [];
        for (const leads of [outside, path.join(outside, "folder"), path.join(outside, "nothing")]) {
          // Once: the swap follows the resolution of the path the call was given.
          policy.resolveTarget = async (named, options) => {
            policy.resolveTarget = resolve;
            const target = await resolve(named, options);
            await rename(path.join(dir, "race"), path.join(dir, "race.real"));
            await symlink(leads, path.join(dir, "race"));
            return target;
          };
          const result = await box.call(session, "check_types", { path: "race/f.ts" });
          answers.push(`${result.errorCode}: ${result.error}`);
          await unlink(path.join(dir, "race"));
          await rename(path.join(dir, "race.real"), path.join(dir, "race"));
        }
        assert.ok(answers.every((a) => a === answers[0]), `answered by where the link leads: ${answers.join(" | ")}`);
        assert.match(answers[0], /^path_changed: /, answers[0]);
        assert.ok(!answers[0].includes(outside), answers[0]);
      }, auto);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  // While the policy hides .env, what the repository keeps of it is hidden from the checker too, as from a command
  // no person allowed: before, a link to the plain copy Subversion (1.6) keeps of it (`.svn/text-base/.env.svn-base`,
  // a name the file's own name gives) imported as TypeScript had the diagnostics name its words ("Cannot find name
  // 'SVNSECRETWORD'").
  test("a link to the repository's copy of a hidden file shows none of it", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      await mkdir(path.join(dir, ".svn", "text-base"), { recursive: true });
      await writeFile(path.join(dir, ".env"), "TOKEN=SVNSECRETWORD\n");
      await writeFile(path.join(dir, ".svn", "text-base", ".env.svn-base"), "TOKEN=SVNSECRETWORD\n");
      await symlink(".svn/text-base/.env.svn-base", path.join(dir, "z.ts"));
      await writeFile(path.join(dir, "f.ts"), 'import "./z.ts";\n');
      const result = await box.call(session, "check_types", { path: "f.ts" });
      assert.doesNotMatch(JSON.stringify(result), /SVNSECRET/, JSON.stringify(result));
    }, {
      ...auto,
      rules: PolicyRules.fromLayers([{ name: "project", config: { paths: { deny: ["**/.env"] } } }], "/"),
    });
  });

  test("an agent-written .npmrc and an npm: import reach no registry", { timeout: 120_000 }, async () => {
    let requests = 0;
    const server = http.createServer((_req, res) => {
      requests++;
      res.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      await withSession(async (session, dir) => {
        await writeFile(path.join(dir, ".npmrc"), `registry=http://127.0.0.1:${port}/\n`);
        await writeFile(path.join(dir, "deno.json"), '{ "nodeModulesDir": "auto" }\n');
        await writeFile(
          path.join(dir, "fetch.ts"),
          'import pad from "npm:toolfence-no-such-package-xyz@1.0.0";\nexport const x: string = pad;\n',
        );
        await writeFile(path.join(dir, "remote.ts"), `import "http://127.0.0.1:${port}/mod.ts";\n`);
        for (const file of ["fetch.ts", "remote.ts"]) {
          const result = await box.call(session, "check_types", { path: file });
          assert.equal(result.status, "success", JSON.stringify(result));
          assert.equal((result.output as { ok: boolean }).ok, false);
        }
        assert.equal(requests, 0, "check_types contacted the agent-chosen registry");
      }, auto);
    } finally {
      server.close();
    }
  });

  test(
    "workspace imports still resolve, and files outside are not readable from inside",
    { timeout: 120_000 },
    async () => {
      await withSession(async (session, dir) => {
        await mkdir(path.join(dir, "lib"));
        await writeFile(path.join(dir, "lib/a.ts"), "export const a = 1;\n");
        await writeFile(path.join(dir, "main.ts"), 'import { a } from "./lib/a.ts";\nexport const b: number = a;\n');
        const result = await box.call(session, "check_types", { path: "main.ts" });
        assert.deepEqual([result.status, (result.output as { ok: boolean }).ok], ["success", true]);
      }, auto);
    },
  );
});

describe("check_types without a sandbox", () => {
  test("asks a person, and an automatic answer does not count", { timeout: 120_000 }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "a.ts"), "export const a = 1;\n");
      const result = await box.call(session, "check_types", { path: "a.ts" });
      assert.equal(result.errorCode, "permission_denied", JSON.stringify(result));
    }, { ...auto, sandbox: "off" });
  });
});

describe("check_types", () => {
  test("runs deno check and reports each diagnostic with file, line and column", { timeout: 90_000 }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "good.ts"), "export const n: number = 1;\n");
      const good = (await box.call(session, "check_types", { path: "good.ts" })).output as CheckTypesResult;
      assert.deepEqual([good.ok, good.diagnostics], [true, []]);
      await writeFile(path.join(dir, "bad.ts"), 'const q: number = "s";\nexport const r: string = q;\n');
      const bad = await box.call(session, "check_types", { path: "bad.ts" });
      assert.equal(bad.status, "success", bad.error);
      const out = bad.output as CheckTypesResult;
      assert.equal(out.ok, false);
      assert.deepEqual(
        out.diagnostics.map((d) => [d.code, d.file, d.line, d.column]),
        [["TS2322", "bad.ts", 1, 7], ["TS2322", "bad.ts", 2, 14]],
      );
      assert.match(out.diagnostics[0].message, /Type 'string' is not assignable to type 'number'/);
      await writeFile(path.join(dir, "broken.ts"), "foo(\n");
      const broken = (await box.call(session, "check_types", { path: "broken.ts" })).output as CheckTypesResult;
      assert.deepEqual(
        broken.diagnostics.map((d) => [d.code, d.file, d.line, d.column]),
        [["SyntaxError", "broken.ts", 1, 5]],
      );
    });
  });
});
