import { test } from "node:test";
import assert from "node:assert/strict";
import { withPathLocks } from "../../internal/path_lock.ts";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("callers on one path run one after another, in the order they asked", { timeout: 60_000 }, async () => {
  const log: string[] = [];
  const run = (name: string, ms: number) =>
    withPathLocks(["/w/a"], async () => {
      log.push(`start ${name}`);
      await pause(ms);
      log.push(`end ${name}`);
      return name;
    });
  assert.deepEqual(await Promise.all([run("x", 30), run("y", 1), run("z", 1)]), ["x", "y", "z"]);
  assert.deepEqual(log, ["start x", "end x", "start y", "end y", "start z", "end z"]);
});

test("different paths do not wait for each other; overlapping sets do not deadlock", { timeout: 60_000 }, async () => {
  const log: string[] = [];
  await Promise.all([
    withPathLocks(["/w/a"], async () => {
      log.push("a");
      await pause(30);
    }),
    withPathLocks(["/w/b"], () => Promise.resolve(log.push("b"))),
  ]);
  assert.deepEqual(log, ["a", "b"]);
  await Promise.all([
    withPathLocks(["/w/a", "/w/b"], () => pause(5)),
    withPathLocks(["/w/b", "/w/a"], () => pause(5)),
  ]);
});

test("a failing holder releases the lock", { timeout: 60_000 }, async () => {
  await assert.rejects(withPathLocks(["/w/a"], () => Promise.reject(new Error("boom"))), /boom/);
  assert.equal(await withPathLocks(["/w/a"], () => Promise.resolve("next")), "next");
});
