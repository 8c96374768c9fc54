// A stdio server that exits leaves nothing it started running. Seen live (main.ts serve --sandbox off): a call ran
// `setsid sleep M1 & (trap '' TERM HUP; exec sleep M2) & sleep M3`, and the client closed stdin; the server cancelled
// the call 10 s later, closed its session and exited 16.5 s after the end of stdin, and `sleep M1`, in a session of
// its own (out of the command's process group, still in its cgroup), went on running after the server was gone. The
// command's cgroup kills such a process once its group is gone (SIGKILL after the 5 s grace), and the session's close
// resolved before that. It now waits for each command's whole end, a background job's too.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRawServer } from "./_raw_server.ts";
import { findCgroup } from "../../policy/_limits.ts";
import { killSleeps, markerSeconds, pidsWithArgs } from "../tools/cmd/_helpers.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Without a cgroup a process that left its group is out of reach of anything (see docs/sandbox.md).
const noCgroup = "root" in await findCgroup() ? false : "needs a cgroup the server may make groups in";

describe("a stdio server's exit", { skip: noCgroup, timeout: 120_000 }, () => {
  // A call running when stdin ends (cancelled after the drain), and a background job.
  const cases: [string, (markers: string[]) => { name: string; arguments: Record<string, unknown> }][] = [
    ["a call's", ([escaped, trapped, shell]) => ({
      name: "bash",
      arguments: {
        command: `setsid sleep ${escaped} & (trap '' TERM HUP; exec sleep ${trapped}) & ` +
          `sleep ${shell}`,
        timeout_s: 600,
      },
    })],
    ["a background job's", ([escaped, trapped, shell]) => ({
      name: "bash_background",
      arguments: {
        command: `setsid sleep ${escaped} & (trap '' TERM HUP; exec sleep ${trapped}) & ` +
          `sleep ${shell}`,
      },
    })],
  ];
  for (const [whose, call] of cases) {
    test(`kills ${whose} processes, in their process group or out of it`, { timeout: 90_000 }, async () => {
      const workspace = await mkdtemp(join(tmpdir(), "toolfence-stdio-exit-"));
      const markers = [1, 2, 3].map(() => markerSeconds());
      const server = await startRawServer(workspace, { groups: "cmd", args: ["--auto-confirm", "--sandbox", "off"] });
      try {
        void server.request("tools/call", call(markers), 60_000).catch(() => {});
        const running = async () => (await Promise.all(markers.map((m) => pidsWithArgs("sleep", m)))).flat();
        for (let i = 0; i < 100 && (await running()).length < markers.length; i++) await sleep(100);
        assert.equal((await running()).length, markers.length, "every sleep runs");

        // The client goes away: stdin ends, and the server exits on its own.
        assert.equal(await server.close(60_000), 0);
        // What was sent SIGKILL before the exit may take the kernel a moment to end.
        for (let i = 0; i < 20 && (await running()).length > 0; i++) await sleep(100);
        const left = await Promise.all(markers.map(async (m) => [m, (await pidsWithArgs("sleep", m)).length] as const));
        assert.deepEqual(left.filter(([, n]) => n > 0), [], "nothing the server started outlived it");
      } finally {
        for (const marker of markers) await killSleeps(marker);
        await rm(workspace, { recursive: true, force: true });
      }
    });
  }
});
