// `sandbox.read` and `paths.roots`: the host folders a policy file adds to the
// sandbox's read view. Validated strictly (absolute, clean, not `/`), merged
// over the layers, and applied: the folder is readable (read-only) in a
// sandboxed command, a folder beside it is not there.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import process from "node:process";
import path from "node:path";
import { parsePolicyFile, PolicyFileError, PolicyRules, policySettings } from "../../../policy/mod.ts";
import { Session } from "../../../policy/session.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { ToolBox } from "../../../toolbox.ts";

function refused(read: unknown): boolean {
  try {
    parsePolicyFile("t.json", JSON.stringify({ sandbox: { read } }), "project");
    return false;
  } catch (error) {
    assert.ok(error instanceof PolicyFileError, String(error));
    return true;
  }
}

test("sandbox.read takes absolute, clean folders only, never the root", { timeout: 60_000 }, () => {
  assert.equal(refused(["/opt/sdk", "/srv/data/shared", "/a b/c"]), false);
  for (
    const bad of [
      "/",
      "relative",
      "./x",
      "/opt/../etc",
      "/opt/./sdk",
      "/opt//sdk",
      "/opt/sdk/",
      "/..",
      "",
      "/opt/\0x",
      "~/x",
    ]
  ) {
    assert.equal(refused([bad]), true, `${JSON.stringify(bad)} was accepted`);
  }
  assert.equal(refused("/opt"), true, "a string instead of a list");
  assert.equal(refused([1]), true);
});

test(
  "the read folders of every layer add up, paths.roots included, relative roots left out",
  { timeout: 60_000 },
  () => {
    const rules = PolicyRules.fromLayers([
      { name: "managed", config: { sandbox: { read: ["/opt/sdk"] } } },
      {
        name: "project",
        config: {
          sandbox: { read: ["/srv/shared"] },
          paths: { roots: [{ path: "/data/ro", access: "read" }, { path: "rel", access: "write" }] },
        },
      },
    ], "/w");
    assert.deepEqual(policySettings(rules).sandboxRead.sort(), ["/data/ro", "/opt/sdk", "/srv/shared"]);
    assert.deepEqual(policySettings(PolicyRules.fromLayers([], "/w")).sandboxRead, []);
  },
);

const status = await bubblewrapStatus();

describe("a folder the policy names is in the read view, read-only", {
  skip: status.path ? false : `needs a working bubblewrap: ${status.reason}`,
  timeout: 60_000,
}, () => {
  let root: string;
  before(async () => {
    // Outside /tmp: the sandbox's private /tmp would hide it whatever the policy says.
    root = await fsp.mkdtemp(path.join(process.cwd(), ".sandbox-read-test-"));
    await fsp.mkdir(path.join(root, "named"));
    await fsp.mkdir(path.join(root, "beside"));
    await fsp.mkdir(path.join(root, "ws"));
    await fsp.writeFile(path.join(root, "named", "data.txt"), "NAMEDDATA\n");
    await fsp.writeFile(path.join(root, "beside", "data.txt"), "BESIDEDATA\n");
  });
  after(async () => await fsp.rm(root, { recursive: true, force: true }));

  test(
    "bash reads the named folder, cannot write it, and does not see the folder beside it",
    { timeout: 60_000 },
    async () => {
      const rules = PolicyRules.fromLayers([
        { name: "project", config: { sandbox: { read: [path.join(root, "named")] } } },
      ], path.join(root, "ws"));
      const session = new Session({ workspace: path.join(root, "ws"), autoConfirm: true, sandbox: "required", rules });
      try {
        const box = new ToolBox().withDefaults("cmd");
        const result = await box.call(session, "bash", {
          command: `cat ${root}/named/data.txt; echo x > ${root}/named/new.txt; cat ${root}/beside/data.txt; true`,
        });
        const output = result.output as { stdout: string; stderr: string; sandboxed: boolean };
        assert.equal(output.sandboxed, true);
        assert.match(output.stdout, /NAMEDDATA/);
        assert.doesNotMatch(JSON.stringify(result), /BESIDEDATA/);
        assert.match(output.stderr, /Read-only file system/);
        await assert.rejects(fsp.stat(path.join(root, "named", "new.txt")));
      } finally {
        await session.close();
      }
    },
  );
});
