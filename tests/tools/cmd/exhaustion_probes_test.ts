// The held-back probes of resource exhaustion, through the bash tool with
// real processes: memory through `$(...)`, `sort`, /dev/shm and the home folder, disk through
// /tmp and the workspace, fork bombs in several spellings, open files and an
// endless loop. Each line ends with resource_limit naming a limit, well
// before its timeout, while the same session answers another call at once.
//
// The limits are small, so that the hogs are cheap on a shared machine.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { withSession } from "../../core/_helpers.ts";
import { autoHost } from "../../../policy/hosts.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import type { ResourceLimitsInput } from "../../../policy/config/schema.ts";
import { limitsState, resourceLimits } from "../../../policy/limits.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import { cmdBox, installed, okOutput } from "./_helpers.ts";

const box = cmdBox();
const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const SMALL: ResourceLimitsInput = {
  memory: "256MiB",
  cpuSeconds: 2,
  fileSize: "8MiB",
  processes: 48,
  openFiles: 64,
  tmpSize: "4MiB",
};
const processesHold = !(await limitsState(resourceLimits(SMALL))).gaps.some((gap) => gap.limit === "processes");
const memoryCounted = !(await limitsState(resourceLimits(SMALL))).gaps.some((gap) => gap.limit === "memory");
// Far below the bash tool's default timeout (300 s), even on a loaded machine.
const TIMEOUT_S = 120;
const QUICK_MS = 100_000;

// [what, command, the limits it may be reported as]
// needs: what the probe needs to run here (`rlimitMemory`: RLIMIT_DATA, where no group counts memory), and limits of
// its own over SMALL.
const PROBES: [
  string,
  string,
  string[],
  {
    bwrap?: boolean;
    processes?: boolean;
    memory?: boolean;
    rlimitMemory?: boolean;
    program?: string;
    limits?: ResourceLimitsInput;
  }?,
][] = [
  ["memory through $(...)", "x=$(cat /dev/zero); echo ${#x}", ["memory", "cpuSeconds"]],
  ["memory through sort", "head -c 600M /dev/zero | tr '\\0' 'a' | fold -w 100 | sort | tail -1", [
    "memory",
    "cpuSeconds",
    "tmpSize",
  ]],
  // `cd` first: the line's analysis judges the redirection against the workspace, the sandbox holds the rest.
  [
    "memory through /dev/shm",
    "cd /dev/shm && for i in 1 2 3 4 5 6 7 8; do head -c 1M /dev/zero > f$i || exit 1; done",
    [
      "tmpSize",
    ],
    { bwrap: true },
  ],
  // The home folder is a private tmpfs too: before it had no size (half the machine's memory).
  [
    "memory through the home folder",
    'cd "$HOME" && for i in 1 2 3 4 5 6 7 8; do head -c 1M /dev/zero > f$i || exit 1; done',
    ["tmpSize"],
    { bwrap: true },
  ],
  ["disk through /tmp", "for i in $(seq 100); do head -c 8M /dev/zero > /tmp/f$i || exit 1; done", ["tmpSize"], {
    bwrap: true,
  }],
  ["disk through the workspace", "yes > big", ["fileSize"]],
  ["a fork bomb", ":(){ :|:& };:; sleep 30", ["processes"], { processes: true }],
  ["a fork bomb of sleeps", "while :; do sleep 30 & done", ["processes"], { processes: true }],
  ["a fork bomb through xargs", "yes 'sleep 30' | xargs -P 0 -I{} sh -c {}", ["processes"], { processes: true }],
  ["a recursive shell", "b(){ b & b; }; b", ["processes", "memory"], { processes: true }],
  ["open files", "for i in $(seq 100); do exec {fd}</dev/null || exit 1; done", ["openFiles"]],
  // Before: each ended as command_failed (or a success, after `; echo`), the limit unnamed: their words were unknown.
  [
    "threads of python",
    "python3 -c 'import threading, time\nfor i in range(2000): threading.Thread(target=time.sleep, args=(30,), daemon=True).start()'",
    ["memory", "processes"],
    { program: "python3" },
  ],
  [
    "workers of node",
    'node -e \'const { Worker } = require("worker_threads"); for (let i = 0; i < 200; i++) ' +
    'new Worker("setTimeout(() => {}, 30000)", { eval: true })\'; echo done',
    // Which of the two the kernel refuses first varies; before, a memory refusal ended as a success.
    ["memory", "processes"],
    // 200 isolates starting take more than SMALL's 2 CPU seconds on a loaded machine: the CPU limit is not the subject.
    { program: "node", limits: { processes: 64, openFiles: 8192, cpuSeconds: 30 } },
  ],
  // Before: command_failed, bash's `xrealloc: cannot allocate` matched no hint (the pattern read `x(?:re)?malloc`).
  ["a string doubled by bash", "x=x; while :; do x=$x$x; done", ["memory", "cpuSeconds"]],
  // Before: each a success after `; echo done`, Node's (libuv's) spellings matching no hint (`EMFILE: too many open
  // files`, `code: 'ENOSPC'`, `code: 'EFBIG'`).
  [
    "open files of node",
    'node -e \'const fs = require("fs"); for (let i = 0; i < 200; i++) fs.openSync("/dev/null")\'; echo done',
    ["openFiles"],
    { program: "node" },
  ],
  [
    "node filling /tmp",
    'node -e \'require("fs").writeFileSync("/tmp/big", Buffer.alloc(6 << 20))\'; echo done',
    ["tmpSize"],
    { program: "node", bwrap: true },
  ],
  [
    "node past the file size",
    'node -e \'const fs = require("fs"); const fd = fs.openSync("big", "w"); ' +
    "for (;;) fs.writeSync(fd, Buffer.alloc(1 << 20))'; echo done",
    ["fileSize"],
    { program: "node" },
  ],
  // Before: a success after `; echo done` (V8's `RangeError: Array buffer allocation failed` matched no hint).
  [
    "typed arrays of node",
    "node -e 'const a = []; for (;;) a.push(new Uint8Array(1 << 26).fill(1))'; echo done",
    ["memory"],
    // Filling 256 MiB, then reclaim under the group's limit, counted as its CPU: the CPU limit is not the subject.
    { program: "node", limits: { cpuSeconds: 30 } },
  ],
  // Before: a success; the JVM could not reserve its heap under 256 MiB (RLIMIT_DATA), and said so in words no hint
  // knew. Where the group counts memory there is no RLIMIT_DATA, and `java -version` runs (limits_test.ts): a JVM
  // past its heap, or the group's, is what is named.
  ["java under the memory limit", "java -version; echo done", ["memory"], { program: "java", rlimitMemory: true }],
  [
    "java past the memory limit",
    "printf 'class H { public static void main(String[] a) { var l = new java.util.ArrayList<long[]>(); " +
    "for (;;) l.add(new long[1 << 20]); } }' > H.java && java H.java; echo done",
    ["memory"],
    // The source launcher compiles H.java in the JVM first: on a loaded machine its compiler's and collectors'
    // threads took the 2 CPU seconds of SMALL before the heap filled (cpuSeconds was hit, not memory).
    { program: "java", limits: { cpuSeconds: 30 } },
  ],
  // The cgroup's OOM killer ends one of three sleepers of 120 MiB each; before, the call waited for the others (31.8 s
  // with a sleep of 30 s; here the timeout, 120 s): the watch now ends the group at the first OOM kill.
  [
    "memory of a tree that then sleeps",
    "for i in 1 2 3; do python3 -c 'b = bytearray(120 << 20); import time; time.sleep(300)' & done; wait",
    ["memory"],
    { program: "python3", memory: true },
  ],
  ["an endless loop", "while :; do :; done", ["cpuSeconds"]],
  ["an endless awk", "awk 'BEGIN { while (1) x++ }'", ["cpuSeconds"]],
];

function options(limits: ResourceLimitsInput) {
  return {
    autoConfirm: true,
    host: autoHost(),
    sandbox: "auto",
    rules: PolicyRules.fromLayers([{ name: "project", config: { sandbox: { limits } } }], "/"),
  } as const;
}

describe("exhaustion probes through the bash tool", { timeout: 900_000 }, () => {
  for (const [what, command, limits, needs] of PROBES) {
    const skip = (needs?.bwrap && !hasBwrap) || (needs?.processes && !processesHold) ||
      (needs?.memory && !memoryCounted) || (needs?.rlimitMemory && memoryCounted) ||
      (needs?.program !== undefined && !installed(needs.program));
    test(`${what}: resource_limit, at once, while the session answers`, { timeout: 180_000, skip }, async () => {
      await withSession(async (session) => {
        const started = performance.now();
        const hog = box.call(session, "bash", { command, timeout_s: TIMEOUT_S });
        // Another call while the hog runs: answered, and soon.
        await new Promise((resolve) => setTimeout(resolve, 300));
        const pinged = performance.now();
        const pong = await box.call(session, "bash", { command: "echo pong" });
        assert.equal(okOutput<BashResult>(pong).stdout, "pong\n");
        assert.ok(performance.now() - pinged < QUICK_MS, `the ping took ${performance.now() - pinged} ms`);
        const result = await hog;
        const ms = performance.now() - started;
        assert.equal(result.errorCode, "resource_limit", `${result.status} ${result.errorCode}: ${result.error}`);
        const hit = (result.output as BashResult).resource_limit;
        assert.ok(hit && limits.includes(hit.limit), `${what}: ${JSON.stringify(hit)} ${result.error}`);
        assert.match(result.error ?? "", new RegExp(`sandbox\\.limits\\.${hit.limit} = `));
        assert.ok(ms < QUICK_MS, `${what} took ${ms} ms`);
        // Nothing of it is left: the next command runs at once.
        assert.equal(okOutput<BashResult>(await box.call(session, "bash", { command: "echo calm" })).stdout, "calm\n");
      }, options({ ...SMALL, ...needs?.limits }));
    });
  }
});
