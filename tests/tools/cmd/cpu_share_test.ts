// The processor is shared by workspace, not by command: all the commands of one workspace (a session's, its
// sub-agents', every session of a tenant) together are one share of it against every other workspace's, however many
// commands and processes they run. Before, each command was a share of its own (the kernel's autogroup of its
// session): a tenant running four commands of two busy loops each took 0.23 to 0.45 of the processor time a tenant
// running one loop got, per loop of its own, here under load; one workspace's shared parent group in the `cpu`
// hierarchy (v1), or the `cpu` controller handed to it (v2), gives the two tenants about the same.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "../../../policy/session.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { findCgroup, sharesCpu } from "../../../policy/_limits.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import { cmdBox, okOutput } from "./_helpers.ts";

const box = cmdBox();
const finding = await findCgroup();
const skip = !("root" in finding)
  ? `no cgroup for the commands here: ${finding.reason}`
  : !sharesCpu(finding.root)
  ? "the cgroup here gives a workspace's group no weight of its own (no v1 cpu hierarchy, no v2 cpu controller)"
  : false;

// `loops` busy loops of `seconds` each, at once; each prints the processor time it got (bash's `times`: user, system).
const loops = (count: number, seconds: number) =>
  `for i in $(seq ${count}); do (e=$((SECONDS+${seconds})); while [ $SECONDS -lt $e ]; do :; done; times) | head -1 & ` +
  `done; wait`;

function secondsOf(result: Awaited<ReturnType<typeof box.call>>): number[] {
  return okOutput<BashResult>(result).stdout.split("\n").filter(Boolean).map((line) => {
    const [, minutes, seconds] = /^(\d+)m([\d.]+)s/.exec(line) ?? [];
    assert.ok(minutes !== undefined, `not a line of times: ${JSON.stringify(line)}`);
    return Number(minutes) * 60 + Number(seconds);
  });
}

for (const sandbox of ["auto", "off"] as const) {
  test(`sandbox ${sandbox}: four commands of two busy loops in one workspace get about what one loop in another does`, {
    timeout: 90_000,
    skip,
  }, async () => {
    const dirs = await Promise.all(["a", "b"].map((name) => mkdtemp(join(tmpdir(), `toolfence-cpu-share-${name}-`))));
    const sessions = dirs.map((workspace) =>
      new Session({
        workspace,
        // A person who lets the loops run (without the sandbox their arithmetic needs a yes).
        host: callbackHost({ choose: (request) => request.defaultChoice, confirm: () => true }),
        sandbox,
        rules: PolicyRules.fromLayers([{ name: "project", config: { sandbox: { limits: { cpuSeconds: 30 } } } }], "/"),
      })
    );
    try {
      const [a, b] = sessions;
      const results = await Promise.all([
        ...[1, 2, 3, 4].map(() => box.call(a, "bash", { command: loops(2, 3), timeout_s: 60 })),
        box.call(b, "bash", { command: loops(1, 3), timeout_s: 60 }),
      ]);
      const many = results.slice(0, 4).flatMap(secondsOf);
      const [one] = secondsOf(results[4]);
      assert.equal(many.length, 8);
      const manyTotal = many.reduce((sum, seconds) => sum + seconds, 0);
      // About 1 with the shares (1.0 to 1.3 measured under load), about 1/5 without (0.23 to 0.45).
      assert.ok(
        one / manyTotal > 0.6,
        `one loop of the second workspace got ${one} s, the first workspace's eight ${manyTotal} s: ${many.join(", ")}`,
      );
    } finally {
      await Promise.all(sessions.map((session) => session.close()));
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });
}
