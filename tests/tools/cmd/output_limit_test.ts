// Bounded output capture with real processes: a flood stops at the byte limit
// with disk use bounded by it, and blocked commands end at their timeout.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdir, stat, writeFile } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { withSession } from "../../core/_helpers.ts";
import { autoHost } from "../../../policy/hosts.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import type { JobReport } from "../../../tools/cmd/background.ts";
import type { Session } from "../../../policy/session.ts";
import { cmdBox, failedOutput, okOutput } from "./_helpers.ts";
import { setSessionOutputMaximum } from "../../../tools/cmd/output_limit.ts";
import { MemoryArtifactStore } from "../../../core/artifacts.ts";
import { readArtifactTool } from "../../../tools/framework/read_artifact.ts";

const box = cmdBox().register(readArtifactTool);
const auto = { autoConfirm: true, host: autoHost() } as const;
const MiB = 1024 * 1024;

async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    try {
      total += (await stat(path.join(entry.parentPath, entry.name))).size;
    } catch {
      // removed meanwhile
    }
  }
  return total;
}

// Runs `work` while sampling the size of the session temp dir; returns the largest size seen.
async function peakDiskUse(session: Session, work: () => Promise<unknown>): Promise<number> {
  const temp = await session.workspace.tempDir();
  let peak = 0;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      peak = Math.max(peak, await folderBytes(temp));
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  try {
    await work();
  } finally {
    done = true;
    await sampler;
  }
  return peak;
}

for (const sandbox of ["off", "auto"] as const) {
  describe(`bounded output (sandbox ${sandbox})`, () => {
    test(
      "cat /dev/zero stops at the default 64 MiB limit: coded truncated result, disk bounded",
      { timeout: 60_000 },
      async () => {
        await withSession(async (session) => {
          let result: BashResult | undefined;
          const peak = await peakDiskUse(session, async () => {
            result = okOutput<BashResult>(
              await box.call(session, "bash", { command: "cat /dev/zero", timeout_s: 60, max_output_chars: 1000 }),
            );
          });
          const out = result!;
          assert.equal(out.truncated, true);
          assert.equal(out.stop_reason, "output_limit");
          assert.equal(out.output_limit_bytes, 64 * MiB);
          assert.equal(out.timed_out, undefined);
          assert.ok(out.duration_ms < 60_000, `it ran ${out.duration_ms} ms: stopped by the timeout, not the limit`);
          assert.match(out.stdout, /omitted/);
          assert.ok(out.stdout.length <= 1000);
          assert.ok(peak <= 64 * MiB + MiB, `the temp dir held ${peak} bytes`);
          // With a 4 s timeout, whichever comes first (the limit, or on a loaded machine the timeout)
          // ends it with a coded result, and the disk stays bounded all the same.
          const short = await peakDiskUse(session, async () => {
            const ended = await box.call(session, "bash", {
              command: "cat /dev/zero",
              timeout_s: 4,
              max_output_chars: 1000,
            });
            // The limit is a success that says so; the timeout is timed_out, with the same output.
            assert.ok(["success", "timed_out"].includes(ended.status), ended.status);
            result = ended.output as BashResult;
          });
          assert.ok(
            ["output_limit", "timeout"].includes(result!.stop_reason ?? ""),
            JSON.stringify(result!.stop_reason),
          );
          assert.ok(short <= 64 * MiB + MiB, `the temp dir held ${short} bytes`);
        }, { ...auto, sandbox });
      },
    );

    // Before, a flood stopped at the limit broke out of the pipe's reader, which destroyed the pipe with an AbortError
    // that no listener took: an uncaught error that ended the whole server (here the test process), one flood in two.
    test(
      "floods stopped at their limit one after another leave the process running",
      { timeout: 90_000 },
      async () => {
        await withSession(async (session) => {
          for (const command of ["yes", "yes >&2", "yes & yes >&2; wait", "head -c 300000 /dev/urandom; yes"]) {
            for (let i = 0; i < 3; i++) {
              const out = okOutput<BashResult>(
                await box.call(session, "bash", {
                  command,
                  timeout_s: 30,
                  max_output_bytes: 100_000,
                  max_output_chars: 2000,
                }),
              );
              assert.equal(out.stop_reason, "output_limit", command);
              // Nothing lost up to the limit.
              assert.ok(
                out.stdout.length + out.stderr.length >= 1_500,
                `${command}: ${out.stdout.length} ${out.stderr.length}`,
              );
            }
          }
          const calm = okOutput<BashResult>(await box.call(session, "bash", { command: "echo calm" }));
          assert.equal(calm.stdout, "calm\n");
        }, { ...auto, sandbox });
      },
    );

    test(
      "a per-call limit applies to stdout and stderr together; the session maximum caps it",
      { timeout: 60_000 },
      async () => {
        await withSession(async (session) => {
          const out = okOutput<BashResult>(
            await box.call(session, "bash", {
              command: "head -c 3000000 /dev/zero >&2; head -c 3000000 /dev/zero; echo never",
              max_output_bytes: 4 * MiB,
              max_output_chars: 1000,
            }),
          );
          assert.equal(out.truncated, true);
          assert.equal(out.output_limit_bytes, 4 * MiB);
          assert.doesNotMatch(out.stdout, /never/);
          setSessionOutputMaximum(session, MiB);
          const capped = okOutput<BashResult>(
            await box.call(session, "bash", {
              command: "head -c 3000000 /dev/zero",
              max_output_bytes: 4 * MiB,
              max_output_chars: 1000,
            }),
          );
          assert.equal(capped.output_limit_bytes, MiB, "the session maximum did not cap the per-call limit");
          const small = okOutput<BashResult>(await box.call(session, "bash", { command: "echo small" }));
          assert.deepEqual([small.stdout, small.truncated, small.stop_reason], ["small\n", undefined, undefined]);
        }, { ...auto, sandbox });
      },
    );

    test(
      "a command blocked on a FIFO, or on tail -f, ends at its timeout with a clear result",
      { timeout: 60_000 },
      async () => {
        await withSession(async (session, dir) => {
          execFileSync("mkfifo", [path.join(dir, "pipe")]);
          await writeFile(path.join(dir, "log.txt"), "line\n");
          for (const command of ["cat pipe", "tail -f log.txt"]) {
            const started = Date.now();
            const out = failedOutput<BashResult>(
              await box.call(session, "bash", { command, timeout_s: 1 }),
              "timed_out",
              "timeout",
            );
            assert.equal(out.timed_out, true, command);
            assert.equal(out.stop_reason, "timeout", command);
            assert.ok(Date.now() - started < 8000, `${command} took ${Date.now() - started} ms`);
          }
        }, { ...auto, sandbox });
      },
    );

    test("a background job that floods is stopped at its limit; bash_read says why", { timeout: 60_000 }, async () => {
      await withSession(async (session) => {
        const { id } = okOutput<{ id: string }>(
          await box.call(session, "bash_background", { command: "cat /dev/zero", max_output_bytes: 2 * MiB }),
        );
        const waited = okOutput<JobReport & { timed_out: boolean }>(
          await box.call(session, "bash_wait", { id, timeout_s: 20, max_output_chars: 1000 }),
        );
        assert.equal(waited.timed_out, false);
        assert.equal(waited.status, "killed");
        assert.equal(waited.truncated, true);
        assert.equal(waited.stop_reason, "output_limit");
        assert.equal((await stat(waited.stdout_path)).size, 2 * MiB);
      }, { ...auto, sandbox });
    });
  });
}

// Each command's output is bounded, but the whole of each long one became an artifact held for the life of the
// session: 8 calls of `head -c 48M /dev/urandom | base64 -w0` held 512 MiB in the server, and every further call
// added its output. The session's store now holds a bounded amount, the oldest going first.
test("outputs kept as artifacts across calls stay within the store's bound; the newest reads", {
  timeout: 120_000,
}, async () => {
  const store = new MemoryArtifactStore({ maxBytes: 8 * MiB });
  await withSession(async (session) => {
    const ids: string[] = [];
    for (const letter of "abcdef") {
      const result = await box.call(session, "bash", {
        command: `head -c 3M /dev/zero | tr '\\0' ${letter}`,
        max_output_chars: 1000,
      });
      assert.equal(okOutput<BashResult>(result).stdout.length < 5000, true);
      assert.equal(result.artifacts.length, 1, "the whole output is an artifact");
      ids.push(result.artifacts[0].id);
      assert.ok(store.heldBytes <= 8 * MiB, `the store holds ${store.heldBytes} bytes`);
    }
    const newest = await box.call(session, "read_artifact", { id: ids.at(-1)!, offset: 0, limit: 10 });
    assert.equal((okOutput<{ content: string }>(newest)).content, "ffffffffff");
    const oldest = await box.call(session, "read_artifact", { id: ids[0], offset: 0, limit: 10 });
    assert.equal(oldest.errorCode, "unknown_artifact", oldest.error);
    assert.match(oldest.recoveryHint ?? "", /oldest going first/);
  }, { ...auto, artifacts: store });
});
