// The processor is shared by workspace, not by command: all the commands of one workspace (a session's, its
// sub-agents', every session of a tenant) together are one share of it against every other workspace's, however many
// commands and processes they run. Before, each command was a share of its own (the kernel's autogroup of its
// session): a tenant running eight busy commands took eight times the processor time of a tenant running one; one
// workspace's shared parent group in the `cpu` hierarchy (v1), or the `cpu` controller handed to it (v2), gives the
// two tenants about the same.
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

// A busy loop from `start` to `start` + 3 s (microseconds since the epoch: every loop of the test runs in the same
// window, whenever its sandbox was made), then the processor time the shell got (bash's `times`: user, system). A
// loop that begins after `start` (its sandbox made late, on a loaded machine) says so on stderr: it had less of the
// window, and its share says nothing.
const loop = (start: number) =>
  `s=${start}; (( \${EPOCHREALTIME/./} > s )) && echo late >&2; ` +
  `while (( \${EPOCHREALTIME/./} < s )); do sleep 0.02; done; e=$((s + 3000000)); ` +
  `while (( \${EPOCHREALTIME/./} < e )); do :; done; times`;

function secondsOf(result: Awaited<ReturnType<typeof box.call>>): number {
  const line = okOutput<BashResult>(result).stdout.split("\n")[0];
  const [, minutes, seconds] = /^(\d+)m([\d.]+)s/.exec(line) ?? [];
  assert.ok(minutes !== undefined, `not a line of times: ${JSON.stringify(line)}`);
  return Number(minutes) * 60 + Number(seconds);
}

for (const sandbox of ["auto", "off"] as const) {
  test(`sandbox ${sandbox}: eight busy commands of one workspace get about what one of another gets`, {
    timeout: 150_000,
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
      // Measured again, with a longer lead, when a loop began late (CI run ci17, Node 24 beside the stress pass: the
      // window began before every sandbox was made).
      let results: Awaited<ReturnType<typeof box.call>>[] = [];
      for (let lead = 4_000; lead <= 16_000; lead *= 2) {
        const start = (Date.now() + lead) * 1000;
        results = await Promise.all([
          ...Array.from({ length: 8 }, () => box.call(a, "bash", { command: loop(start), timeout_s: 60 })),
          box.call(b, "bash", { command: loop(start), timeout_s: 60 }),
        ]);
        if (!results.some((result) => okOutput<BashResult>(result).stderr.includes("late"))) break;
      }
      const many = results.slice(0, 8).map(secondsOf);
      const one = secondsOf(results[8]);
      const manyTotal = many.reduce((sum, seconds) => sum + seconds, 0);
      // With the shares, from half as much (the eight spread over both cores, the one on one, under load) to as much
      // (a quiet machine); without them an eighth (each command weighed as one): 0.13 to 0.2 measured.
      assert.ok(
        one / manyTotal > 0.3,
        `one loop of the second workspace got ${one} s, the first workspace's eight ${manyTotal} s: ${many.join(", ")}`,
      );
    } finally {
      await Promise.all(sessions.map((session) => session.close()));
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });
}
