import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { declaredSurface, ROOT } from "../../scripts/public_api.ts";
import { APPLICATION_MARKER, applicationNames, exportStatement, generate, GENERATED } from "../../scripts/surface.ts";
import { IS_DENO } from "../_runtime.ts";

const read = (file: string): Promise<string> => readFile(path.join(ROOT, file), "utf8");

describe("the generated surface", { skip: IS_DENO ? false : "reads the source repository's members" }, () => {
  for (const surface of GENERATED) {
    test(`${surface.file} is what scripts/surface.ts writes`, { timeout: 60_000 }, async () => {
      const current = await read(surface.file);
      assert.equal(await generate(surface, current), current, "run deno task surface");
    });

    test(`${surface.file} names only its members' application names and its own`, { timeout: 60_000 }, async () => {
      const expected = new Set<string>();
      for (const specifier of surface.own) {
        for (const name of declaredSurface(await read(path.join(path.dirname(surface.file), specifier)))) {
          expected.add(name);
        }
      }
      const own = new Set([...expected].map((n) => n.replace(/^type /, "")));
      for (const [, file] of surface.members) {
        const member = declaredSurface(await read(file));
        for (const name of applicationNames(await read(file), file)) {
          assert.ok(member.includes(name), `${name} is above the marker of ${file} but not exported by it`);
          if (!own.has(name.replace(/^type /, ""))) expected.add(name);
        }
      }
      assert.deepEqual(new Set(declaredSurface(await read(surface.file))), expected);
    });
  }

  test("the umbrella stays an application's surface, not the members' sum", { timeout: 60_000 }, async () => {
    const umbrella = declaredSurface(await read("mod.ts")).length;
    let members = 0;
    for (const [, file] of GENERATED[0].members) members += declaredSurface(await read(file)).length;
    assert.ok(umbrella <= 130, `the umbrella exports ${umbrella} names`);
    assert.ok(umbrella < members / 3, `the umbrella exports ${umbrella} of the members' ${members} names`);
  });
});

describe("the surface script's parts", () => {
  test("names below the marker are the member's alone", { timeout: 10_000 }, () => {
    const source = [
      'export { a, type B } from "./a.ts";',
      APPLICATION_MARKER,
      'export { c } from "./a.ts";',
      'export type { D } from "./d.ts";',
      "",
    ].join("\n");
    assert.deepEqual(applicationNames(source), ["a", "type B"]);
  });

  test("a member without the marker is refused, by name", { timeout: 10_000 }, () => {
    assert.throws(() => applicationNames('export { a } from "./a.ts";\n', "x/mod.ts"), /x\/mod\.ts has no line/);
  });

  test("statements are laid out and ordered as deno fmt does", { timeout: 10_000 }, () => {
    assert.equal(exportStatement(["tool", "type Tool", "b"], "x"), 'export { b, type Tool, tool } from "x";');
    const long = exportStatement(Array.from({ length: 20 }, (_, i) => `name${String(i).padStart(2, "0")}`), "x");
    assert.match(long, /^export \{\n {2}name00,\n/);
    assert.ok(long.endsWith('  name19,\n} from "x";'));
  });
});
