import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import process from "node:process";
import { withSession } from "../../core/_helpers.ts";
import { autoHost } from "../../../policy/hosts.ts";
import { cmdBox, eventually, markerSeconds, pidsWithArgs } from "./_helpers.ts";

const box = cmdBox();

// Aborts `controller` `hops` microtasks after the process door opens a command's output files: while the
// command is being started, after the door's last look at the signal and before the tool listens to it.
function abortDuringStart(controller: AbortController, hops: number): () => void {
  const original = fs.fstatSync;
  let armed = true;
  const patched = (fd: number, ...rest: unknown[]) => {
    if (armed && fs.readlinkSync(`/proc/self/fd/${fd}`).endsWith(".stdout")) {
      armed = false;
      void (async () => {
        for (let i = 0; i < hops; i++) await null;
        controller.abort();
      })();
    }
    return (original as (...args: unknown[]) => fs.Stats)(fd, ...rest);
  };
  (fs as { fstatSync: unknown }).fstatSync = patched;
  return () => (fs as { fstatSync: unknown }).fstatSync = original;
}

test(
  "an abort while bash or bash_background starts its command stops the command",
  { timeout: 60_000 },
  async () => {
    await withSession(async (session) => {
      for (const [tool, hops] of [["bash", 0], ["bash", 12], ["bash_background", 0], ["bash_background", 6]] as const) {
        const mark = markerSeconds();
        const controller = new AbortController();
        const restore = abortDuringStart(controller, hops);
        let result;
        try {
          result = await box.call(session, tool, { command: `sleep ${mark}` }, { signal: controller.signal });
        } finally {
          restore();
        }
        assert.equal(result.status, "cancelled", `${tool} after ${hops} hops`);
        const gone = await eventually(async () => (await pidsWithArgs("sleep", mark)).length === 0, 60_000);
        for (const pid of await pidsWithArgs("sleep", mark)) process.kill(pid, "SIGKILL");
        assert.ok(gone, `${tool}'s command outlived an abort ${hops} hops into its start`);
      }
    }, { autoConfirm: true, host: autoHost(), sandbox: "off" });
  },
);
