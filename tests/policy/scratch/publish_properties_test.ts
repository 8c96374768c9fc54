// Generated cases for publication: random workspaces (files, folders, links,
// modes) and random work in the copy (create, rewrite, delete, move, chmod,
// a file turned into a folder and back, links retargeted). A publication of
// every change makes the workspace equal to the copy, entry for entry; a
// publication failing at a random step leaves it exactly as it was.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createScratch } from "../../../policy/scratch/scratch.ts";
import { fingerprint } from "./_tree_fingerprint.ts";
import { seededRandom } from "../../_seeded_random.ts";

const CASES = 40;

let root: string;
before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-publish-props-")));
});
after(() => fsp.rm(root, { recursive: true, force: true }));

/** Picks from a seeded generator, so that a failing case can be run again from its seed. */
function random(seed: number) {
  const next = seededRandom(seed);
  return {
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)],
    chance: (p: number) => next() < p,
  };
}

const NAMES = ["a", "b", "c", "d.txt", "e.md"];
const MODES = [0o644, 0o600, 0o755, 0o444];

async function populate(dir: string, r: ReturnType<typeof random>, depth: number): Promise<void> {
  for (const name of NAMES) {
    const roll = r.int(10);
    const full = path.join(dir, name);
    if (roll < 4) {
      await fsp.writeFile(full, `${name} ${r.int(1000)}\n`.repeat(1 + r.int(3)));
      await fsp.chmod(full, r.pick(MODES));
    } else if (roll < 6 && depth < 2) {
      await fsp.mkdir(full);
      await populate(full, r, depth + 1);
    } else if (roll < 7) {
      await fsp.symlink(r.pick(["a", "../a", "nowhere", "b/c"]), full);
    }
  }
}

async function entries(dir: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  for (const name of await fsp.readdir(path.join(dir, rel))) {
    const p = rel ? `${rel}/${name}` : name;
    out.push(p);
    const stat = await fsp.lstat(path.join(dir, p));
    if (stat.isDirectory()) out.push(...await entries(dir, p));
  }
  return out;
}

async function work(copy: string, r: ReturnType<typeof random>): Promise<void> {
  for (let i = 0, n = 1 + r.int(8); i < n; i++) {
    const all = await entries(copy);
    const target = all.length > 0 && r.chance(0.8) ? r.pick(all) : r.pick(NAMES);
    const full = path.join(copy, target);
    const stat = await fsp.lstat(full).catch(() => undefined);
    const op = r.int(7);
    try {
      if (op === 0 || stat === undefined) {
        await fsp.mkdir(path.dirname(full), { recursive: true });
        if (stat?.isDirectory()) await fsp.writeFile(path.join(full, `new${i}`), `new ${i}\n`);
        else {
          await fsp.rm(full, { recursive: true, force: true });
          await fsp.writeFile(full, `created ${i}\n`);
        }
      } else if (op === 1) {
        await fsp.rm(full, { recursive: true, force: true });
      } else if (op === 2 && stat.isFile()) {
        await fsp.writeFile(full, `rewritten ${i}\n`);
      } else if (op === 3 && !stat.isSymbolicLink()) {
        await fsp.chmod(full, stat.isDirectory() ? r.pick([0o755, 0o700]) : r.pick(MODES));
      } else if (op === 4) {
        // Move it somewhere at the top.
        const to = path.join(copy, `moved${i}`);
        await fsp.rename(full, to);
      } else if (op === 5) {
        // Turn it into the other type.
        await fsp.rm(full, { recursive: true, force: true });
        if (stat.isDirectory()) await fsp.writeFile(full, "was a folder\n");
        else {
          await fsp.mkdir(full);
          await fsp.writeFile(path.join(full, "inside"), "was a file\n");
        }
      } else if (stat.isSymbolicLink()) {
        await fsp.unlink(full);
        await fsp.symlink(`retargeted${i}`, full);
      }
    } catch {
      // A generated operation that does not apply (e.g. into a read-only folder as non-root) is skipped.
    }
  }
}

describe("publication, generated", { timeout: 300_000 }, () => {
  test(
    `${CASES} random cases: publishing everything makes the workspace equal the copy`,
    { timeout: 150_000 },
    async () => {
      for (let seed = 1; seed <= CASES; seed++) {
        const r = random(seed);
        const workdir = path.join(root, `all-${seed}`);
        await fsp.mkdir(workdir);
        await populate(workdir, r, 0);
        const scratch = await createScratch(workdir, { session: { sandbox: "off" } });
        try {
          await work(scratch.root, r);
          const { changes } = await scratch.changes();
          await scratch.publish(changes);
          assert.deepEqual(await fingerprint(workdir), await fingerprint(scratch.root), `seed ${seed}`);
          assert.deepEqual((await scratch.changes()).changes, [], `seed ${seed}: changes left`);
        } finally {
          await scratch.dispose();
        }
      }
    },
  );

  test(
    `${CASES} random cases: a failure at a random step leaves the workspace exactly as it was`,
    { timeout: 150_000 },
    async () => {
      let failedMidway = 0;
      for (let seed = 1; seed <= CASES; seed++) {
        const r = random(1000 + seed);
        const workdir = path.join(root, `fail-${seed}`);
        await fsp.mkdir(workdir);
        await populate(workdir, r, 0);
        const before = await fingerprint(workdir);
        const scratch = await createScratch(workdir, { session: { sandbox: "off" } });
        try {
          await work(scratch.root, r);
          const { changes } = await scratch.changes();
          if (changes.length === 0) continue;
          const failAt = 1 + r.int(changes.length + 1);
          let steps = 0;
          const error = await scratch.publish(changes, {
            onStep: () => {
              if (++steps === failAt) throw new Error("injected failure");
            },
          }).then(() => undefined, (e) => e);
          if (error === undefined) {
            // Fewer steps than the failure point: everything was applied.
            assert.deepEqual(await fingerprint(workdir), await fingerprint(scratch.root), `seed ${seed}`);
            continue;
          }
          failedMidway++;
          assert.equal(error.code, "publish_failed", `seed ${seed}: ${error}`);
          assert.deepEqual(await fingerprint(workdir), before, `seed ${seed}: not undone`);
        } finally {
          await scratch.dispose();
        }
      }
      assert.ok(failedMidway > CASES / 2, `only ${failedMidway} failures were injected mid-way`);
    },
  );
});
