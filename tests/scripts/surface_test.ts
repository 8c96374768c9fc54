import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { declaredSurface, ROOT } from "../../scripts/public_api.ts";
import {
  aboveMemberMarker,
  APPLICATION_MARKER,
  applicationNames,
  exportStatement,
  generate,
  GENERATED,
  generateMember,
  MEMBER_REFERENCED_TYPES_MARKER,
  memberEntries,
  memberReferencedTypes,
  REFERENCED_TYPES_MARKER,
  referencedTypes,
} from "../../scripts/surface.ts";
import { IS_DENO } from "../_runtime.ts";

const read = (file: string): Promise<string> => readFile(path.join(ROOT, file), "utf8");

// The members' entry points, from the source repository's deno.json files, which the npm build does not carry.
const members = IS_DENO ? await memberEntries() : [];

// A file's text above the referenced types' marker (its names) and below it (the types they reference): the
// generated files' REFERENCED_TYPES_MARKER, or the members' MEMBER_REFERENCED_TYPES_MARKER, which starts the same way.
function sections(text: string): [string, string] {
  const at = text.search(new RegExp(`^${REFERENCED_TYPES_MARKER.split(",")[0]}`, "m"));
  return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at)];
}

describe("the generated surface", { skip: IS_DENO ? false : "reads the source repository's members" }, () => {
  for (const surface of GENERATED) {
    test(`${surface.file} is what scripts/surface.ts writes`, { timeout: 300_000 }, async () => {
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
      assert.deepEqual(new Set(declaredSurface(sections(await read(surface.file))[0])), expected);
    });

    test(`${surface.file} exports, type-only, the types its names reference`, { timeout: 60_000 }, async () => {
      const [names, referenced] = sections(await read(surface.file));
      const types = await referencedTypes(surface);
      const bare = (name: string) => name.replace(/^type /, "");
      assert.deepEqual(
        declaredSurface(referenced),
        types.map((type) => `type ${type.as}`).sort((a, b) => bare(a).localeCompare(bare(b))),
      );
      assert.doesNotMatch(referenced, /^export \{/m, "the referenced types are exported type-only");
      const above = new Set(declaredSurface(names).map(bare));
      const members = new Set(GENERATED.flatMap((generated) => generated.members.map(([specifier]) => specifier)));
      for (const type of types) {
        assert.ok(!above.has(type.as), `${type.as} is exported above the marker too`);
        assert.ok(members.has(type.from), `${type.as} comes from ${type.from}, not one of the umbrella's members`);
      }
    });
  }

  for (const entry of members) {
    test(`${entry.file}'s referenced types are what scripts/surface.ts writes`, { timeout: 300_000 }, async () => {
      const current = await read(entry.file);
      assert.equal(await generateMember(entry, current), current, "run deno task surface");
    });

    test(`${entry.file} exports them type-only, from what it may import`, { timeout: 300_000 }, async () => {
      const [names, referenced] = sections(await read(entry.file));
      const types = await memberReferencedTypes(entry, names);
      assert.deepEqual(
        declaredSurface(referenced),
        types.map((type) => `type ${type.as}`).sort((a, b) => a.slice(5).localeCompare(b.slice(5))),
      );
      assert.doesNotMatch(referenced, /^export \{/m, "the referenced types are exported type-only");
      const above = new Set(declaredSurface(names).map((name) => name.replace(/^type /, "")));
      for (const type of types) {
        assert.ok(!above.has(type.as), `${type.as} is exported above the marker too`);
        // The member's own file, or a lower package its deno.json lists (scripts/check_layers.ts holds the rest).
        const own = !path.relative(entry.dir, path.join(path.dirname(entry.file), type.from)).startsWith("..");
        assert.ok(type.from.startsWith(".") ? own : entry.imports.includes(type.from), `${type.as} from ${type.from}`);
      }
    });
  }

  test("the umbrella stays an application's surface, not the members' sum", { timeout: 60_000 }, async () => {
    // The names an application imports; the types they reference, below the marker, are there for the docs.
    const umbrella = declaredSurface(sections(await read("mod.ts"))[0]).length;
    let members = 0;
    for (const [, file] of GENERATED[0].members) members += declaredSurface(sections(await read(file))[0]).length;
    assert.ok(umbrella <= 130, `the umbrella exports ${umbrella} names`);
    assert.ok(umbrella < members / 3, `the umbrella exports ${umbrella} of the members' ${members} names`);
  });
});

describe("the surface script's parts", () => {
  test("names below the marker are the member's alone", { timeout: 60_000 }, () => {
    const source = [
      'export { a, type B } from "./a.ts";',
      APPLICATION_MARKER,
      'export { c } from "./a.ts";',
      'export type { D } from "./d.ts";',
      "",
    ].join("\n");
    assert.deepEqual(applicationNames(source), ["a", "type B"]);
  });

  test("a member's entry point keeps the text above its referenced types' marker", { timeout: 60_000 }, () => {
    const names = 'export { a } from "./a.ts";\n\n';
    assert.equal(
      aboveMemberMarker(`${names}${MEMBER_REFERENCED_TYPES_MARKER}\nexport type { B } from "./b.ts";\n`),
      names,
    );
    assert.equal(aboveMemberMarker(names), names);
  });

  test("a member without the marker is refused, by name", { timeout: 60_000 }, () => {
    assert.throws(() => applicationNames('export { a } from "./a.ts";\n', "x/mod.ts"), /x\/mod\.ts has no line/);
  });

  test("statements are laid out and ordered as deno fmt does", { timeout: 60_000 }, () => {
    assert.equal(exportStatement(["tool", "type Tool", "b"], "x"), 'export { b, type Tool, tool } from "x";');
    const long = exportStatement(Array.from({ length: 20 }, (_, i) => `name${String(i).padStart(2, "0")}`), "x");
    assert.match(long, /^export \{\n {2}name00,\n/);
    assert.ok(long.endsWith('  name19,\n} from "x";'));
  });

  test("type-only statements order an alias by the name it renames", { timeout: 60_000 }, () => {
    assert.equal(
      exportStatement(["ToolBoxOptions", "ToolBox as CoreToolBox", "Tool"], "x", true),
      'export type { Tool, ToolBox as CoreToolBox, ToolBoxOptions } from "x";',
    );
  });
});
