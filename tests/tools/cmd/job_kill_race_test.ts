// A session that closes right after starting jobs leaves none of their
// processes behind, whenever the kill lands in bubblewrap's start-up, and
// also when the command moved part of itself out of the process group.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Session } from "../../../policy/session.ts";
import { cmdBox, eventually, killSleeps, markerSeconds, okOutput, pidsWithArgs } from "./_helpers.ts";

const ROUNDS = 6;

describe("jobs end with their session, however early it closes", () => {
  for (
    const [name, command] of [
      ["a plain job", (marker: string) => `sleep ${marker}`],
      ["a job that calls setsid", (marker: string) => `setsid sleep ${marker} & sleep ${marker}`],
    ] as const
  ) {
    test(`${name}: ${ROUNDS} sessions closed at once leave no process`, { timeout: 60_000 }, async () => {
      const box = cmdBox();
      const marker = markerSeconds();
      const dir = await mkdtemp(path.join(tmpdir(), "tf-jobkill-"));
      try {
        for (let round = 0; round < ROUNDS; round++) {
          const session = new Session({ workspace: dir, autoConfirm: true });
          okOutput(await box.call(session, "bash_background", { command: command(marker) }));
          // Every other round waits a little, so the kill lands at different points of the start-up.
          if (round % 2) await new Promise((resolve) => setTimeout(resolve, round % 7));
          await session.close();
        }
        const gone = await eventually(async () => (await pidsWithArgs("sleep", marker)).length === 0, 60_000);
        assert.ok(gone, `left running: ${(await pidsWithArgs("sleep", marker)).join(", ")}`);
      } finally {
        await killSleeps(marker);
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
