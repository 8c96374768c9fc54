/**
 * 1,000 concurrency-safe calls that each sleep 10 ms, in parallel mode (batches
 * are serial unless asked) with maxConcurrency 100:
 * the ideal is 100 ms (10 waves of 10 ms). Target (issue 3): within 1.3x.
 * The peer in the same run is a bare `Promise.all` pool over the same sleeps.
 *
 * Run: deno run -A bench/batch.ts
 *
 * @module
 */

import * as v from "valibot";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "../policy/session.ts";
import { tool } from "../core/mod.ts";
import { ToolBox } from "../toolbox.ts";
import { median, printRatios } from "./_measure.ts";
import { sized } from "./_report.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const box = new ToolBox().register(tool({
  name: "nap",
  description: "Sleep 10 ms.",
  input: v.object({ i: v.number() }),
  readOnly: true,
  run: async ({ i }) => {
    await sleep(10);
    return i;
  },
}));
const dir = await mkdtemp(join(tmpdir(), "toolfence-bench-"));
const session = new Session({ workspace: dir });
const calls = Array.from({ length: 1_000 }, (_, i) => ({ name: "nap", args: { i } }));

async function barePool(): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < 1_000) {
      next++;
      await sleep(10);
    }
  };
  await Promise.all(Array.from({ length: 100 }, worker));
}

const timings = { callMany: [] as number[], bare: [] as number[] };
for (let round = 0; round < sized(7, 1); round++) {
  let start = performance.now();
  const { results } = await box.callMany(session, calls, { mode: "parallel", maxConcurrency: 100 });
  timings.callMany.push(performance.now() - start);
  if (results.some((r, i) => r.output !== i)) throw new Error("results out of order");
  start = performance.now();
  await barePool();
  timings.bare.push(performance.now() - start);
}
const rows: [string, number][] = [
  ["ideal (10 waves x 10 ms)", 100],
  ["bare Promise pool", median(timings.bare)],
  ["callMany", median(timings.callMany)],
];
printRatios("1,000 calls of 10 ms, maxConcurrency 100 (median ms of 7 runs)", rows, "ms", "ideal (10 waves x 10 ms)", {
  callMany: "≤ 1.3x",
});
await session.close();
await rm(dir, { recursive: true, force: true });
