// The adversarial path cases of the policy issue, run through every fs tool:
// nothing outside the workspace is read, listed, written, moved, copied or
// deleted, and a refused call leaves every byte as it was. Symlinks are acted
// on as links where the tool says so (delete, move, copy, file_info).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fsTools } from "../../../tools/fs/mod.ts";
import { type Layout, makeLayout, ok, treeFingerprint, unchanged } from "./_helpers.ts";

interface PathCase {
  name: string;
  path: (l: Layout) => string;
  /** The error codes a refusal may carry for this case. */
  codes: string[];
}

const CASES: PathCase[] = [
  { name: "../../etc/passwd", path: () => "../../etc/passwd", codes: ["outside_workspace"] },
  { name: "/etc/passwd", path: () => "/etc/passwd", codes: ["outside_workspace"] },
  { name: "sibling W-secrets (relative)", path: () => "../W-secrets/x", codes: ["outside_workspace"] },
  { name: "sibling W-secrets (absolute)", path: (l) => `${l.sibling}/x`, codes: ["outside_workspace"] },
  { name: "symlink to a file outside", path: () => "link-out", codes: ["outside_workspace"] },
  { name: "file under a symlinked folder outside", path: () => "dir-out/s.txt", codes: ["outside_workspace"] },
  { name: "symlinked folder outside", path: () => "dir-out", codes: ["outside_workspace"] },
  { name: "dangling symlink pointing outside", path: () => "dangling", codes: ["outside_workspace"] },
  {
    name: "the temp dir's place before it exists",
    path: () => path.join(os.tmpdir(), "toolfence-not-yet", "x.txt"),
    codes: ["outside_workspace"],
  },
  { name: "NUL byte", path: () => "inside.txt\0../../etc/passwd", codes: ["invalid_path"] },
  { name: "symlink loop", path: () => "loop-a", codes: ["symlink_loop"] },
];

type Call = (p: string) => [string, Record<string, unknown>];

const CALLS: Record<string, Call> = {
  read_file: (p) => ["read_file", { path: p }],
  list_dir: (p) => ["list_dir", { path: p, details: true }],
  file_info: (p) => ["file_info", { path: p }],
  write_file: (p) => ["write_file", { path: p, content: "pwned\n" }],
  mkdir: (p) => ["mkdir", { path: p }],
  delete: (p) => ["delete", { path: p, recursive: true }],
  "move (src)": (p) => ["move", { src: p, dst: "moved" }],
  "move (dst)": (p) => ["move", { src: "inside.txt", dst: p }],
  "copy (src)": (p) => ["copy", { src: p, dst: "copied" }],
  "copy (dst)": (p) => ["copy", { src: "inside.txt", dst: p }],
};

// Cases where the tool acts on the link itself, which lies in the workspace.
const LINK_OPERATIONS: Record<string, string[]> = {
  file_info: [
    "symlink to a file outside",
    "symlinked folder outside",
    "dangling symlink pointing outside",
    "symlink loop",
  ],
  delete: [
    "symlink to a file outside",
    "symlinked folder outside",
    "dangling symlink pointing outside",
    "symlink loop",
  ],
};

// Cases where the tool acts on the link itself but refuses to place it: from its new place the link would lead
// outside (or nowhere the policy can follow), which no path judgement of the call saw.
const LINKS_NOT_PLACED: Record<string, string[]> = {
  "move (src)": [
    "symlink to a file outside",
    "symlinked folder outside",
    "dangling symlink pointing outside",
    "symlink loop",
  ],
  "copy (src)": [
    "symlink to a file outside",
    "symlinked folder outside",
    "dangling symlink pointing outside",
    "symlink loop",
  ],
};

describe("fs tools refuse every path case of the policy issue", () => {
  for (const [tool, call] of Object.entries(CALLS)) {
    for (const c of CASES) {
      const linkOp = LINK_OPERATIONS[tool]?.includes(c.name) ?? false;
      test(`${tool}: ${c.name}${linkOp ? " (acts on the link)" : ""}`, { timeout: 60_000 }, async () => {
        const l = await makeLayout(fsTools());
        try {
          const [name, args] = call(c.path(l));
          if (linkOp) {
            const outside = await treeFingerprint(l.outside);
            const result = await l.call(name, args);
            ok(result);
            assert.equal(await treeFingerprint(l.outside), outside, "nothing outside changes");
            return;
          }
          const result = await unchanged(l.root, () => l.call(name, args));
          assert.notEqual(result.status, "success", JSON.stringify(result.output));
          const codes = LINKS_NOT_PLACED[tool]?.includes(c.name) ? ["symlink_target"] : c.codes;
          assert.ok(codes.includes(result.errorCode!), `${result.errorCode}: ${result.error}`);
          assert.doesNotMatch(JSON.stringify(result), /outside secret|sibling secret/);
        } finally {
          await l.cleanup();
        }
      });
    }
  }
});

describe("symlinks are acted on as links", () => {
  test("deleting a link to a folder outside leaves that folder untouched", { timeout: 60_000 }, async () => {
    const l = await makeLayout(fsTools());
    try {
      const out = ok(await l.call("delete", { path: "dir-out" }));
      assert.equal(out.deleted, "symlink");
      await assert.rejects(fsp.lstat(path.join(l.workdir, "dir-out")));
      assert.equal(await fsp.readFile(path.join(l.outside, "dir", "s.txt"), "utf8"), "outside dir secret\n");
    } finally {
      await l.cleanup();
    }
  });

  test(
    "copying a folder that holds a link to a file outside copies nothing: the copy would be another link out",
    { timeout: 60_000 },
    async () => {
      const l = await makeLayout(fsTools());
      try {
        await fsp.mkdir(path.join(l.workdir, "pack"));
        await fsp.writeFile(path.join(l.workdir, "pack", "own.txt"), "own\n");
        await fsp.symlink(path.join(l.outside, "secret.txt"), path.join(l.workdir, "pack", "leak"));
        const refused = await unchanged(l.root, () => l.call("copy", { src: "pack", dst: "pack2" }));
        assert.equal(refused.errorCode, "symlink_target", refused.error);
        assert.match(refused.error!, /pack2\/leak/);
        assert.doesNotMatch(JSON.stringify(refused), /outside secret|secret\.txt/);
      } finally {
        await l.cleanup();
      }
    },
  );

  test("moving a link to a file outside is refused and moves nothing", { timeout: 60_000 }, async () => {
    const l = await makeLayout(fsTools());
    try {
      const refused = await unchanged(l.root, () => l.call("move", { src: "link-out", dst: "sub/moved-link" }));
      assert.equal(refused.errorCode, "symlink_target", refused.error);
      assert.equal(await fsp.readFile(path.join(l.outside, "secret.txt"), "utf8"), "outside secret\n");
    } finally {
      await l.cleanup();
    }
  });

  test("file_info and list_dir say where a link leads without following it out", { timeout: 60_000 }, async () => {
    const l = await makeLayout(fsTools());
    try {
      const info = ok(await l.call("file_info", { path: "link-out" }));
      assert.equal(info.type, "symlink");
      assert.equal(info.target, null);
      assert.match(String(info.target_type), /outside the workspace/);
      const inside = ok(await l.call("file_info", { path: "link-in" }));
      assert.equal(inside.target, path.join(l.workdir, "inside.txt"));
      assert.equal(inside.target_type, "file");
      const listing = ok(await l.call("list_dir", { path: ".", details: true }));
      const links = Object.fromEntries(
        (listing.symlinks as { name: string; points_to: string }[]).map((s) => [s.name, s.points_to]),
      );
      assert.deepEqual(links, {
        "dangling": "outside the workspace",
        "dir-out": "outside the workspace",
        "link-in": "file",
        "link-out": "outside the workspace",
        "loop-a": "a symlink loop",
        "loop-b": "a symlink loop",
      });
    } finally {
      await l.cleanup();
    }
  });

  test("a write to a dangling link pointing outside creates nothing outside", { timeout: 60_000 }, async () => {
    const l = await makeLayout(fsTools());
    try {
      for (const args of [{ path: "dangling", content: "x" }]) {
        const result = await l.call("write_file", args);
        assert.equal(result.errorCode, "outside_workspace");
      }
      await assert.rejects(fsp.lstat(path.join(l.outside, "nothing.txt")));
    } finally {
      await l.cleanup();
    }
  });
});

// What a tool answers about a path outside the workspace never depends on what lies there: a loop of links outside
// (another tenant's, a folder of the host's) is outside_workspace, as a file or nothing there is. Before, it was
// symlink_loop, and a tenant learned which of another tenant's names were loops of links.
describe("a loop of links outside the workspace", () => {
  test("is refused as outside, as a file or nothing there is, by every tool", { timeout: 60_000 }, async () => {
    const l = await makeLayout(fsTools());
    try {
      await fsp.symlink("loop-y", path.join(l.outside, "loop-x"));
      await fsp.symlink("loop-x", path.join(l.outside, "loop-y"));
      await fsp.symlink(path.join(l.outside, "loop-x"), path.join(l.workdir, "to-loop-out"));
      const before = await treeFingerprint(l.root);
      for (const given of [`${l.outside}/loop-x`, `${l.outside}/loop-x/f.txt`, "to-loop-out", "to-loop-out/f.txt"]) {
        for (const [tool, call] of Object.entries(CALLS)) {
          // The link in the workspace itself is the tools' to act on (file_info tells of it, delete removes it).
          if (given === "to-loop-out" && /^(file_info|delete|move \(src\)|copy \(src\))$/.test(tool)) continue;
          const [name, args] = call(given);
          const missing = await l.call(name, call(given.replace("loop-x", "nothing-here"))[1]);
          const result = await l.call(name, args);
          assert.equal(result.errorCode, missing.errorCode, `${tool} ${given}: ${JSON.stringify(result)}`);
          assert.equal(result.errorCode, "outside_workspace", `${tool} ${given}: ${JSON.stringify(result)}`);
        }
      }
      assert.deepEqual(await treeFingerprint(l.root), before);
    } finally {
      await l.cleanup();
    }
  });
});
