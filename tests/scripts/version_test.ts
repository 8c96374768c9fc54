import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setVersion, versionCopies, versionMismatches } from "../../scripts/version.ts";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
// The npm build's tree has package.json files made from the deno.json ones, not these.
const noSource = !existsSync(path.join(repoRoot, "deno.json")) && "reads the source repository's deno.json files";

/** A repository shaped like the real one: the root, two members, and the two code constants. */
async function fakeRepo(version: string): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), "toolfence-version-"));
  const manifest = (name: string, extra: object) => JSON.stringify({ name, version, ...extra }, null, 2) + "\n";
  await writeFile(
    path.join(root, "deno.json"),
    manifest("@toolfence/toolfence", {
      workspace: ["./core", "./adapters"],
      imports: { "@toolfence/core": `jsr:@toolfence/core@^${version}`, valibot: "npm:valibot@1.5.0" },
    }),
  );
  await mkdir(path.join(root, "core"));
  await writeFile(path.join(root, "core", "deno.json"), manifest("@toolfence/core", { imports: {} }));
  await mkdir(path.join(root, "adapters", "mcp"), { recursive: true });
  await writeFile(
    path.join(root, "adapters", "deno.json"),
    manifest("@toolfence/adapters", { imports: { "@toolfence/core": `jsr:@toolfence/core@^${version}` } }),
  );
  await writeFile(path.join(root, "adapters", "mcp", "server.ts"), `export const TOOLFENCE_VERSION = "${version}";\n`);
  await mkdir(path.join(root, "cli"));
  await writeFile(path.join(root, "cli", "version.ts"), `export const VERSION = "${version}";\n`);
  return root;
}

describe("the version in one place", () => {
  test(
    "every copy in the repository is the root deno.json's version",
    { timeout: 60_000, skip: noSource },
    async () => {
      const copies = await versionCopies(repoRoot);
      // The members' versions, their imports of each other, and the two code constants.
      assert.ok(copies.length >= 10, `${copies.length} copies`);
      assert.deepEqual(await versionMismatches(repoRoot), []);
    },
  );

  test("a copy that drifts is reported, and --set writes the source and every copy", { timeout: 60_000 }, async () => {
    const root = await fakeRepo("0.1.0");
    try {
      assert.equal((await versionCopies(root)).length, 6);
      assert.deepEqual(await versionMismatches(root), []);
      await writeFile(path.join(root, "cli", "version.ts"), 'export const VERSION = "0.0.9";\n');
      assert.deepEqual(await versionMismatches(root), [{ file: "cli/version.ts", what: "VERSION", found: "0.0.9" }]);
      await setVersion(root, "0.2.0");
      assert.deepEqual(await versionMismatches(root), []);
      const rootManifest = JSON.parse(await readFile(path.join(root, "deno.json"), "utf8"));
      assert.equal(rootManifest.version, "0.2.0");
      assert.equal(rootManifest.imports["@toolfence/core"], "jsr:@toolfence/core@^0.2.0");
      // Other packages' versions are not the project's.
      assert.equal(rootManifest.imports.valibot, "npm:valibot@1.5.0");
      assert.ok((await versionCopies(root)).every((copy) => copy.found === "0.2.0"));
      await assert.rejects(setVersion(root, "two"), /not a semver version/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
