import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { declaredSurface, entryPoints, hasStarExport, ROOT } from "../scripts/public_api.ts";
import { IS_DENO } from "./_runtime.ts";

// The pins describe the source repository's deno.json files, which the npm build does not carry.
const pins: Record<string, string[]> = IS_DENO
  ? JSON.parse(await readFile(path.join(ROOT, "tests/public_api.json"), "utf8"))
  : {};

const entries = IS_DENO ? await entryPoints() : new Map<string, string>();

describe("the public surface", { skip: IS_DENO ? false : "reads the source repository's deno.json files" }, () => {
  test("every entry point is pinned, and every pin is an entry point", { timeout: 60_000 }, () => {
    assert.deepEqual([...entries.keys()].sort(), Object.keys(pins).sort());
  });

  for (const [entry, file] of entries) {
    test(`${entry} (${file}) names its exports and exports exactly what is pinned`, { timeout: 60_000 }, async () => {
      const source = await readFile(path.join(ROOT, file), "utf8");
      assert.equal(hasStarExport(source), false, `${file} uses export *`);
      assert.deepEqual(
        declaredSurface(source),
        pins[entry],
        "run deno run -A scripts/public_api.ts --update after a deliberate change",
      );
      // What the module holds at run time is exactly its pinned values, no more, no fewer.
      const module = await import(pathToFileURL(path.join(ROOT, file)).href);
      const values = pins[entry].filter((n) => !n.startsWith("type ")).sort();
      assert.deepEqual(Object.keys(module).sort(), values);
    });
  }
});
