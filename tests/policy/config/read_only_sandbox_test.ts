// `paths.readOnly` inside the OS sandbox: what a rule keeps read-only stays so whatever the command line names.
// Until 2026-12-06 only the line's analysis held the rules, and it judges the paths a line names: with the sandbox
// required and every question answered yes, `F=vendor/lib.js; echo x > "$F"` (and a loop over `vend*/*.js`) rewrote
// the read-only file, shown through the bash tool, and so did a write below `node_modules/pkg/**` (the sandbox's walk
// for read-only mounts left package folders out) or at an absolute rule's path.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import { Session } from "../../../policy/session.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";

const skip = (await bubblewrapStatus()).path === undefined ? "needs bubblewrap" : false;
const box = new ToolBox().withDefaults("fs", "cmd");
const ORIGINAL = "ORIGINAL\n";
const KEPT = ["vendor/lib.js", "package-lock.json", "node_modules/pkg/index.js", "deep/a/b.lock"];

let base: string;
let dir: string;
let rules: PolicyRules;

before(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-read-only-")));
  dir = join(base, "ws");
  for (const file of [...KEPT, "src/main.ts"]) {
    await mkdir(join(dir, file, ".."), { recursive: true });
    await writeFile(join(dir, file), ORIGINAL);
  }
  const readOnly = [
    "vendor/**",
    "package-lock.json",
    "node_modules/pkg/**",
    "dist/**",
    // Absolute: past the workspace's own names, `**` may take any number of them.
    `${base}/**/*.lock`,
  ];
  const text = JSON.stringify({ paths: { readOnly } });
  rules = PolicyRules.fromLayers([parsePolicyFile(join(dir, "toolfence.json"), text, "project")], dir);
});

after(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("paths.readOnly in the sandbox", () => {
  test("the rules as globs below the workspace root", { timeout: 60_000 }, () => {
    const expected = ["vendor/**", "package-lock.json", "package-lock.json/**", "node_modules/pkg/**", "dist/**"];
    assert.deepEqual(new Set(rules.readOnlyGlobs()), new Set([...expected, "**/*.lock", "**/*.lock/**"]));
    const absolute = (pattern: string, root: string) =>
      PolicyRules.fromLayers([{ name: "project", config: { paths: { readOnly: [pattern] } } }], root).readOnlyGlobs();
    assert.deepEqual(absolute("/srv/w/vendor/**", "/srv/w"), ["vendor/**"]);
    assert.deepEqual(absolute("/srv/*/x", "/srv/w"), ["x", "x/**"]);
    assert.deepEqual(absolute("/srv/*", "/srv/w"), ["**"]);
    assert.deepEqual(absolute("/etc/**", "/srv/w"), []);
    // As decidePath reads them: `/` matches no path, `//` is one slash.
    assert.deepEqual(absolute("/", "/srv/w"), []);
    assert.deepEqual(absolute("//srv//w/x", "/srv/w"), ["x", "x/**"]);
    assert.deepEqual(new Set(absolute("/**/w/a", "/srv/w")), new Set(["a", "a/**", "**/w/a", "**/w/a/**"]));
  });

  test(
    "a write whose path only the run knows leaves every read-only path as it was",
    { skip, timeout: 90_000 },
    async () => {
      const session = new Session({ workspace: dir, rules, autoConfirm: true, sandbox: "required" });
      try {
        const lines = [
          `F=vendor/lib.js; echo PWNED > "$F"`,
          `for f in vend*/*.js; do echo PWNED > "$f"; done`,
          `F=package-lock.json; echo PWNED > $F`,
          `F=node_modules/pkg/index.js; echo PWNED > $F`,
          `F=deep/a/b.lock; echo PWNED > $F`,
          `D=dist; mkdir $D && echo PWNED > $D/out.js`,
        ];
        for (const command of lines) {
          const result = await box.call(session, "bash", { command });
          const shown = JSON.stringify(result).slice(0, 2000);
          assert.match(shown, /"sandboxed":true/, shown);
          for (const file of KEPT) {
            assert.equal(
              await readFile(join(dir, file), "utf8"),
              ORIGINAL,
              `${command}: ${file}`,
            );
          }
          // A read-only path the command made is moved away when it ends, as a protected one is.
          assert.ok(!(await readdir(dir)).includes("dist"), `${command}: dist stayed`);
        }
        // What no rule keeps stays writable.
        const free = await box.call(session, "bash", { command: `F=src/main.ts; echo CHANGED > $F` });
        assert.equal(free.status, "success", JSON.stringify(free));
        assert.equal(await readFile(join(dir, "src/main.ts"), "utf8"), "CHANGED\n");
      } finally {
        await session.close();
      }
    },
  );
});
