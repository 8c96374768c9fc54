// The ripgrep engine and the built-in engine give identical results on the
// same fixtures, query by query.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { Session } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import { openFence } from "../../../policy/fence.ts";
import { grepTool } from "../../../tools/search/grep.ts";
import { findRipgrep } from "../../../tools/search/_ripgrep.ts";
import { tempFolder } from "../fs/_helpers.ts";
import { writeSearchFixture } from "./_fixture.ts";
import fsp from "node:fs/promises";
import { IS_DENO } from "../../_runtime.ts";

const rg = await findRipgrep();
const skip = rg === undefined ? "no ripgrep binary found" : false;

let root: string;
let session: Session;
const ripgrep = new ToolBox().register(grepTool({ engine: "ripgrep" }));
const builtin = new ToolBox().register(grepTool({ engine: "builtin" }));

before(async () => {
  root = await tempFolder();
  await fsp.mkdir(path.join(root, "W"));
  await writeSearchFixture(path.join(root, "W"), path.join(root, "outside"));
  session = new Session({ workspace: path.join(root, "W"), fence: openFence() });
});
after(async () => {
  await session.close();
  await fsp.rm(root, { recursive: true, force: true });
});

const QUERIES: Record<string, unknown>[] = [
  { pattern: "needle" },
  { pattern: "needle", max_matches: 1000 },
  { pattern: "needle", skip_ignored: false, max_matches: 1000 },
  { pattern: "needle", case_sensitive: false, max_matches: 1000 },
  { pattern: "NEEDLE", case_sensitive: false, path: "src" },
  { pattern: "needle", path: "src/deep" },
  { pattern: "needle", path: "src/deep/nested" },
  { pattern: "needle", path: "data/context.txt", context: 2 },
  { pattern: "needle", path: "data", context: 1, max_matches: 4 },
  { pattern: "needle", path: "data", include_content: false, max_matches: 1000 },
  { pattern: "needle", glob: "*.ts" },
  { pattern: "needle", glob: "src/**/*.py" },
  { pattern: "needle", glob: "*.{md,txt}", max_matches: 1000 },
  { pattern: "needle", glob: "*.log", skip_ignored: false },
  { pattern: "^\\s*return" },
  { pattern: "\\bneedle\\b", max_matches: 1000 },
  { pattern: "\\w+_needle" },
  { pattern: "\\w+é" },
  { pattern: "\\d+", path: "docs" },
  { pattern: "[0-9]{2}\\s", path: "docs" },
  { pattern: "\\s", path: "docs/unicode.md" },
  { pattern: "\\S+\\u00a0\\S+", path: "docs" },
  { pattern: "[^\\x00-\\x7F]+", path: "docs", max_matches: 1000 },
  { pattern: "\\p{Lu}{3}", path: "docs" },
  { pattern: "straße", case_sensitive: false, path: "docs" },
  { pattern: "k sign", case_sensitive: false, path: "docs" },
  { pattern: "😀.needle", path: "docs" },
  { pattern: "needle$", path: "docs" },
  { pattern: "needle\\$$", path: "docs" },
  { pattern: "^first", path: "docs" },
  { pattern: "e.$", path: "docs" },
  { pattern: "needle after bom", path: "docs" },
  { pattern: "^needle", path: "docs" },
  { pattern: "utf16" },
  { pattern: "needle", path: "bin" },
  { pattern: "needle", path: "docs/long.txt" },
  { pattern: "-e", regex: false },
  { pattern: "$100 (approx.) [tag] {brace} a|b ^caret", regex: false },
  { pattern: "\\$100 \\(approx\\.\\) \\[tag\\] \\{brace\\} a\\|b \\^caret" },
  { pattern: "a.includes\\('needle'\\)" },
  { pattern: "(?:main|helper)\\(" },
  { pattern: "(main|helper)\\(" },
  { pattern: "needle|NEEDLE", max_matches: 1000 },
  { pattern: "row \\d+ needle", path: "data" },
  { pattern: "no such text anywhere" },
  { pattern: "needle", max_matches: 3 },
  { pattern: "needle", max_matches: 300, path: "data/many.txt" },
  { pattern: "needle", max_matches: 299, path: "data/many.txt" },
];

describe("ripgrep and the built-in engine agree", { skip }, () => {
  for (const query of QUERIES) {
    test(JSON.stringify(query), { timeout: 60_000 }, async () => {
      const [a, b] = await Promise.all([ripgrep.call(session, "grep", query), builtin.call(session, "grep", query)]);
      assert.equal(a.status, "success", a.error);
      assert.equal(b.status, "success", b.error);
      const { engine: engineA, ...outA } = a.output as Record<string, unknown>;
      const { engine: engineB, ...outB } = b.output as Record<string, unknown>;
      // A single file is read by the shared line reader whichever engine is chosen.
      const file = typeof query.path === "string" && /\.\w+$/.test(query.path);
      // Under Node a search with ignore rules above its root goes to the built-in engine (see grep.ts).
      if (IS_DENO) {
        assert.equal(engineA, file ? "builtin" : "ripgrep");
      } else assert.ok(engineA === "ripgrep" || engineA === "builtin");
      assert.equal(engineB, "builtin");
      assert.deepEqual(outA, outB);
    });
  }

  test("the fixture exercises what it should", { timeout: 60_000 }, async () => {
    const result = await ripgrep.call(session, "grep", { pattern: "needle", max_matches: 1000 });
    const files = new Set((result.output as { matches: { path: string }[] }).matches.map((m) => m.path));
    for (
      const present of [".github/workflow.yml", "keep.log", "src/deep/trace.log", "docs/bom.txt", "docs/utf16.txt"]
    ) {
      assert.ok(files.has(present), `${present} is searched`);
    }
    for (
      const absent of [
        "app.log",
        "build/out.js",
        "root-only.txt",
        "node_modules/pkg/index.js",
        ".git/config",
        "src/generated/types.ts",
        "src/a.gen.ts",
        "src/important.gen.ts",
        "src/link-out.txt",
        "src/link-in.ts",
        "bin/data.bin",
      ]
    ) {
      assert.ok(!files.has(absent), `${absent} is not searched`);
    }
  });
});
