// Property-based tests of Workspace.resolve against the operating system: in a
// real tree full of symlinks (in, out, back in, up, dangling, looping),
// generated paths of `..`, `.`, empty components, link names, sibling-prefix
// folders and absolute prefixes never resolve outside the workspace, and a path
// that resolves inside names the same file the kernel opens for it.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { ToolError } from "../../core/errors.ts";
import { Workspace } from "../../policy/workspace.ts";

const RUNS = 1500;
const SEED = Number(process.env.PROPERTY_SEED ?? 90210);

let root: string;
let workdir: string;
let tempParent: string;

before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-pathprop-")));
  workdir = path.join(root, "W");
  tempParent = path.join(root, "tmp");
  const dirs = ["W/d1/d2", "W-secrets", "O/deep", "tmp"];
  for (const dir of dirs) await fsp.mkdir(path.join(root, dir), { recursive: true });
  // An `f` in every folder, so that many generated paths lead to a real file.
  const files = ["W/f", "W/d1/f", "W/d1/g", "W/d1/d2/f", "W/d1/d2/h", "W-secrets/f", "O/f", "O/secret", "O/deep/f"];
  for (const file of files) await fsp.writeFile(path.join(root, file), file);
  const links: [string, string][] = [
    ["W/inLink", "d1"],
    ["W/inFile", "f"],
    ["W/d1/up", ".."],
    ["W/d1/upup", "../.."],
    ["W/outAbs", path.join(root, "O")],
    ["W/outRel", "../O"],
    ["W/outFile", "../O/secret"],
    ["W/sibling", "../W-secrets"],
    ["W/parent", ".."],
    ["W/self", "."],
    ["W/selfAbs", workdir],
    ["W/chain", "inLink/d2"],
    ["W/danglingIn", "missing/new"],
    ["W/danglingOut", "../O/new"],
    ["W/loop", "loop"],
    ["W/loopA", "loopB"],
    ["W/loopB", "loopA"],
    ["O/back", path.join(workdir, "f")],
    ["O/backDir", "../W/d1"],
  ];
  for (const [at, target] of links) await fsp.symlink(target, path.join(root, at));
});
after(() => fsp.rm(root, { recursive: true, force: true }));

// Names that exist along the way are weighted up, so that many paths lead
// somewhere real and can be compared with what the OS opens.
const component = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("d1", "d2", "f", "g", "h", "inLink", "inFile", "chain", "self", "up", ".") },
  { weight: 2, arbitrary: fc.constantFrom("..", "", "parent", "upup", "selfAbs", "W", "back", "backDir", "missing") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "W-secrets",
      "O",
      "deep",
      "secret",
      "outAbs",
      "outRel",
      "outFile",
      "sibling",
      "danglingIn",
      "danglingOut",
      "loop",
      "loopA",
    ),
  },
);

type Prefix = "relative" | "workdir" | "root" | "secrets" | "outside" | "slash" | "temp";
const prefix = fc.oneof(
  { weight: 5, arbitrary: fc.constant<Prefix>("relative") },
  { weight: 1, arbitrary: fc.constantFrom<Prefix>("workdir", "root", "secrets", "outside", "slash", "temp") },
);

function prefixPath(kind: Prefix, temp: string | undefined): string {
  switch (kind) {
    case "relative":
      return "";
    case "workdir":
      return workdir + "/";
    case "root":
      return root + "/";
    case "secrets":
      return workdir + "-secrets/";
    case "outside":
      return path.join(root, "O") + "/";
    case "slash":
      return "/";
    case "temp":
      return (temp ?? tempParent) + "/";
  }
}

function inside(real: string, temp: string | undefined): boolean {
  const within = (parent: string) => real === parent || real.startsWith(parent + "/");
  return within(workdir) || (temp !== undefined && within(temp));
}

async function osStat(p: string) {
  try {
    return await fsp.stat(p);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? "error";
  }
}

describe("Workspace.resolve properties", () => {
  test(
    `${RUNS} generated paths: never outside, and inside means the file the OS opens`,
    { timeout: 60_000 },
    async () => {
      const counts = { inside: 0, comparedByInode: 0, createdThroughOs: 0, refused: 0, otherErrors: 0, lenient: 0 };
      const withTemp = new Workspace(workdir, { tempParent });
      const temp = await withTemp.tempDir();
      await fsp.mkdir(path.join(temp, "d1"));
      await fsp.writeFile(path.join(temp, "f"), "temp f");
      await fsp.writeFile(path.join(temp, "d1", "f"), "temp d1/f");
      const plain = new Workspace(workdir, { tempParent });
      try {
        await fc.assert(
          fc.asyncProperty(
            prefix,
            fc.tuple(fc.array(component, { maxLength: 6 }), fc.boolean())
              .map(([parts, toFile]) => toFile ? [...parts, "f"] : parts),
            fc.boolean(),
            async (kind, parts, useTemp) => {
              const ws = useTemp ? withTemp : plain;
              const tempDir = useTemp ? temp : undefined;
              const input = prefixPath(kind, temp) + parts.join("/");
              if (input === "") return;
              // What the kernel sees: the string as given, joined to the workdir without normalising.
              const osPath = input.startsWith("/") ? input : workdir + "/" + input;
              let resolved;
              try {
                resolved = await ws.resolve(input);
              } catch (error) {
                assert.ok(error instanceof ToolError, `resolve(${input}) threw ${error}`);
                if (error.code === "outside_workspace") {
                  counts.refused++;
                  // No false refusal: what the OS opens for it lies outside too.
                  const real = await fsp.realpath(osPath).catch(() => undefined);
                  assert.ok(real === undefined || !inside(real, tempDir), `${input} refused but opens ${real}`);
                } else {
                  counts.otherErrors++;
                  assert.ok(["symlink_loop", "invalid_path"].includes(error.code), `${input}: ${error.code}`);
                }
                return;
              }
              counts.inside++;
              assert.ok(inside(resolved.path, tempDir), `${input} resolved outside: ${resolved.path}`);
              assert.ok(path.isAbsolute(resolved.path) && path.normalize(resolved.path) === resolved.path);
              const viaOs = await osStat(osPath);
              if (typeof viaOs !== "string") {
                assert.equal(resolved.exists, true, `${input}: the OS opens it, resolve says it does not exist`);
                const direct = await fsp.stat(resolved.path);
                assert.equal(direct.ino, viaOs.ino, `${input}: resolve names another file than the OS opens`);
                assert.equal(await fsp.realpath(osPath), resolved.path);
                counts.comparedByInode++;
              } else if (resolved.exists) {
                // Resolve reads `x/..` as the parent and `x/.`, `x/` as x even where
                // x is missing or a file (the kernel says ENOENT/ENOTDIR); the
                // result is still inside, and names what the text means.
                const tolerated = parts.some((p) => p === ".." || p === "." || p === "");
                assert.ok(tolerated, `${input}: resolve says it exists, the OS says ${viaOs}`);
                counts.lenient++;
              } else if (viaOs === "ENOENT") {
                // Creating it through the OS must create exactly the file resolve named.
                let created = false;
                try {
                  await fsp.writeFile(osPath, "", { flag: "wx" });
                  created = true;
                } catch {
                  // a missing folder on the way: the OS cannot create it either
                }
                if (created) {
                  const real = await fsp.realpath(osPath);
                  await fsp.unlink(real);
                  assert.equal(real, resolved.path, `${input}: the OS created ${real}, resolve named ${resolved.path}`);
                  counts.createdThroughOs++;
                }
              }
            },
          ),
          { numRuns: RUNS, seed: SEED },
        );
      } finally {
        await withTemp.dispose();
      }
      console.log(
        `path properties: ${RUNS} paths, ${counts.inside} inside (${counts.comparedByInode} compared with the OS by inode, ` +
          `${counts.createdThroughOs} created through the OS, ${counts.lenient} lenient on file/. and missing/..), ` +
          `${counts.refused} refused as outside, ${counts.otherErrors} other refusals`,
      );
      assert.ok(counts.comparedByInode > 100 && counts.refused > 100, "the generator must reach both sides");
    },
  );
});
