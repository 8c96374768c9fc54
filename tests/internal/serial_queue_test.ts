import { test } from "node:test";
import assert from "node:assert/strict";
import { serialQueue } from "../../internal/serial_queue.ts";

test("serialQueue runs its tasks one at a time, in order, past a task that fails", { timeout: 60_000 }, async () => {
  const serially = serialQueue();
  const events: string[] = [];
  let running = 0;
  const task = (name: string, fails = false) => async () => {
    running++;
    assert.equal(running, 1, `${name} ran beside another task`);
    events.push(`start ${name}`);
    await new Promise((settle) => setTimeout(settle, 5));
    events.push(`end ${name}`);
    running--;
    if (fails) throw new Error(name);
    return name;
  };
  const outcomes = await Promise.allSettled([serially(task("a")), serially(task("b", true)), serially(task("c"))]);
  assert.deepEqual(events, ["start a", "end a", "start b", "end b", "start c", "end c"]);
  assert.deepEqual(outcomes.map((o) => o.status === "fulfilled" ? o.value : (o.reason as Error).message), [
    "a",
    "b",
    "c",
  ]);
  assert.equal(outcomes[1].status, "rejected");
});
