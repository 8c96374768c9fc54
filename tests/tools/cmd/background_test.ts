import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { withSession } from "../../core/_helpers.ts";
import { Session } from "../../../policy/session.ts";
import { autoHost, denyAllHost } from "../../../policy/hosts.ts";
import type { JobReport } from "../../../tools/cmd/background.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import {
  cmdBox,
  eventually,
  failedOutput,
  killSleeps,
  markerSeconds,
  okOutput,
  pidAlive,
  pidsWithArgs,
} from "./_helpers.ts";
import { SessionProcesses, sessionProcesses } from "../../../tools/cmd/_jobs.ts";

const box = cmdBox();
const auto = { autoConfirm: true, host: autoHost() } as const;
type Wait = JobReport & { timed_out: boolean };

describe("background jobs", () => {
  test(
    "a job runs in the background; bash_wait with 0 polls, then waits for the end",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const started = okOutput<{ id: string; status: string }>(
          await box.call(session, "bash_background", { command: "for i in 1 2 3; do echo $i; sleep 0.3; done" }),
        );
        assert.equal(started.id, "job-1");
        assert.equal(started.status, "running");
        const polled = okOutput<Wait>(await box.call(session, "bash_wait", { id: started.id, timeout_s: 0 }));
        assert.equal(polled.timed_out, true);
        assert.equal(polled.status, "running");
        const done = okOutput<Wait>(await box.call(session, "bash_wait", { id: started.id, timeout_s: 20 }));
        assert.equal(done.timed_out, false);
        assert.equal(done.status, "exited");
        assert.equal(done.exit_code, 0);
        assert.equal(done.stdout, "1\n2\n3\n");
      }, auto);
    },
  );

  test("a job that exits non-zero or dies of a signal makes bash_wait and bash_read fail, keeping the report", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session) => {
      const { id } = okOutput<{ id: string }>(
        await box.call(session, "bash_background", { command: "echo out; echo err >&2; exit 3" }),
      );
      const waited = await box.call(session, "bash_wait", { id, timeout_s: 20 });
      const report = failedOutput<Wait>(waited, "error", "command_failed");
      assert.deepEqual([report.exit_code, report.stdout, report.stderr, report.timed_out], [
        3,
        "out\n",
        "err\n",
        false,
      ]);
      assert.match(waited.error!, new RegExp(`Background job ${id} exited with code 3`));
      assert.equal(
        failedOutput<JobReport>(await box.call(session, "bash_read", { id }), "error", "command_failed").exit_code,
        3,
      );
      const killed = okOutput<{ id: string }>(
        await box.call(session, "bash_background", { command: "echo bye; kill -KILL $$" }),
      );
      const dead = await box.call(session, "bash_wait", { id: killed.id, timeout_s: 20 });
      assert.equal(failedOutput<Wait>(dead, "error", "command_killed").signal, "SIGKILL");
      assert.match(dead.error!, /killed by SIGKILL/);
      // One the model stopped is what it asked for: a success.
      const stopped = okOutput<{ id: string }>(
        await box.call(session, "bash_background", { command: "exec sleep 30" }),
      );
      const stop = await box.call(session, "bash_stop", { id: stopped.id });
      assert.equal(stop.status, "success", stop.error);
      assert.equal((stop.output as JobReport).stopped, true);
      const ok = okOutput<{ id: string }>(await box.call(session, "bash_background", { command: "true" }));
      assert.equal((await box.call(session, "bash_wait", { id: ok.id, timeout_s: 20 })).status, "success");
    }, { host: callbackHost({ choose: (request) => request.defaultChoice, confirm: () => true }), sandbox: "off" });
  });

  test("bash_read shows everything so far and does not consume it", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const { id } = okOutput<{ id: string }>(
        await box.call(session, "bash_background", { command: "echo first; echo warn >&2; exec sleep 30" }),
      );
      // stdout and stderr are two pipes, read as they come: wait for both.
      assert.ok(
        await eventually(async () => {
          const report = okOutput<JobReport>(await box.call(session, "bash_read", { id }));
          return report.stdout === "first\n" && report.stderr === "warn\n";
        }),
      );
      const again = okOutput<JobReport>(await box.call(session, "bash_read", { id }));
      assert.equal(again.stdout, "first\n");
      assert.equal(again.stderr, "warn\n");
      assert.equal(again.status, "running");
    }, auto);
  });

  test("a job survives bash_wait timeouts and is killed when the session closes", { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "toolfence-jobs-"));
    const session = new Session({ workspace: dir, ...auto, sandbox: "off" });
    const mark = markerSeconds();
    try {
      // The job's own shell prints its pid (outside a sandbox, the host's): the tools give none.
      const { id } = okOutput<{ id: string }>(
        await box.call(session, "bash_background", { command: `sleep ${mark} & echo $$ $!; wait` }),
      );
      for (let i = 0; i < 2; i++) {
        const waited = okOutput<Wait>(await box.call(session, "bash_wait", { id, timeout_s: 0.3 }));
        assert.equal(waited.timed_out, true);
        assert.equal(waited.status, "running");
      }
      const [pid, child] = okOutput<JobReport>(await box.call(session, "bash_read", { id })).stdout.trim().split(" ")
        .map(Number);
      assert.equal(await pidAlive(pid), true);
      assert.equal(await pidAlive(child), true);
      await session.close();
      assert.equal(await pidAlive(pid), false);
      assert.equal(await pidAlive(child), false);
      assert.deepEqual(await pidsWithArgs("sleep", mark), []);
    } finally {
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("bash_stop ends the job and its children; bash_list shows every job", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const mark = markerSeconds();
      const first = okOutput<{ id: string }>(await box.call(session, "bash_background", { command: "echo done" }));
      const second = okOutput<{ id: string }>(
        await box.call(session, "bash_background", { command: `sleep ${mark} & sleep ${mark}` }),
      );
      okOutput(await box.call(session, "bash_wait", { id: first.id, timeout_s: 10 }));
      assert.ok(await eventually(async () => (await pidsWithArgs("sleep", mark)).length === 2, 60_000));
      const stopped = okOutput<JobReport>(await box.call(session, "bash_stop", { id: second.id }));
      assert.equal(stopped.status, "killed");
      assert.equal(stopped.stopped, true);
      assert.deepEqual(await pidsWithArgs("sleep", mark), []);
      const { jobs } = okOutput<{ jobs: { id: string; status: string; exit_code: number | null }[] }>(
        await box.call(session, "bash_list", {}),
      );
      assert.deepEqual(jobs.map((j) => [j.id, j.status, j.exit_code]), [
        [first.id, "exited", 0],
        [second.id, "killed", null],
      ]);
      const again = okOutput<JobReport>(await box.call(session, "bash_stop", { id: first.id }));
      assert.equal(again.status, "exited");
    }, auto);
  });

  test("long output is read as head and tail, naming the file that holds it all", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const { id } = okOutput<{ id: string }>(
        await box.call(session, "bash_background", { command: "seq 1 200000" }),
      );
      const done = okOutput<Wait>(await box.call(session, "bash_wait", { id, timeout_s: 20, max_output_chars: 1000 }));
      assert.ok(done.stdout.length <= 1000, `${done.stdout.length}`);
      assert.ok(done.stdout.startsWith("1\n2\n3\n"));
      assert.ok(done.stdout.endsWith("199999\n200000\n"));
      assert.match(done.stdout, /bytes omitted; the whole output is in .*\.stdout/);
    }, auto);
  });

  test("unknown ids and denied commands are clear errors", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const unknown = await box.call(session, "bash_read", { id: "job-9" });
      assert.equal(unknown.errorCode, "unknown_job");
      const denied = await box.call(session, "bash_background", { command: "touch x" });
      assert.equal(denied.errorCode, "permission_denied");
      const { jobs } = okOutput<{ jobs: unknown[] }>(await box.call(session, "bash_list", {}));
      assert.deepEqual(jobs, []);
    }, { host: denyAllHost() });
  });

  // Before: the cap was checked before the job's start and counted only started jobs, so 30 calls made at once
  // all passed the check and ran 30 jobs (each with its own limits: 30 x the processes and memory of one).
  test("calls made at once run at most MAX_RUNNING_JOBS jobs; a stopped job frees its place", {
    timeout: 120_000,
  }, async () => {
    const mark = markerSeconds();
    try {
      await withSession(async (session) => {
        const results = await Promise.all(
          Array.from({ length: 20 }, () => box.call(session, "bash_background", { command: `sleep ${mark}` })),
        );
        const started = results.filter((r) => r.status === "success");
        assert.equal(started.length, SessionProcesses.MAX_RUNNING_JOBS);
        for (const refused of results.filter((r) => r.status !== "success")) {
          assert.equal(refused.errorCode, "too_many_jobs", refused.error);
        }
        assert.ok(
          await eventually(async () =>
            (await pidsWithArgs("sleep", mark)).length === SessionProcesses.MAX_RUNNING_JOBS
          ),
          `${(await pidsWithArgs("sleep", mark)).length} sleeps run`,
        );
        const refused = await box.call(session, "bash_background", { command: `sleep ${mark}` });
        assert.equal(refused.errorCode, "too_many_jobs");
        const { id } = started[0].output as { id: string };
        await box.call(session, "bash_stop", { id });
        okOutput(await box.call(session, "bash_background", { command: `sleep ${mark}` }));
      }, { ...auto, sandbox: "off" });
      assert.deepEqual(await pidsWithArgs("sleep", mark), []);
    } finally {
      await killSleeps(mark);
    }
  });

  // Before: 40 bash calls made at once in one session ran 40 sandboxes at once, each with the whole of the
  // per-command limits; the session's commands together had no bound but the number of calls.
  test("a session runs at most MAX_RUNNING_COMMANDS shell commands at once: bash calls, jobs, sub-agents' together", {
    timeout: 120_000,
  }, async () => {
    const mark = markerSeconds();
    try {
      await withSession(async (session) => {
        const max = SessionProcesses.MAX_RUNNING_COMMANDS;
        const jobs = SessionProcesses.MAX_RUNNING_JOBS;
        for (let i = 0; i < jobs; i++) {
          okOutput(await box.call(session, "bash_background", { command: `sleep ${mark}` }));
        }
        // A sub-agent's session shares the count: it works in the same workspace.
        const child = session.child();
        try {
          const results = await Promise.all(
            Array.from({ length: max }, () => box.call(child, "bash", { command: "sleep 1.5" })),
          );
          const ran = results.filter((r) => r.status === "success");
          assert.equal(ran.length, max - jobs);
          for (const refused of results.filter((r) => r.status !== "success")) {
            assert.equal(refused.errorCode, "too_many_commands", refused.error);
            assert.match(refused.error ?? "", new RegExp(`Already ${max} shell commands are running`));
          }
          // The places come back as the commands end.
          okOutput(await box.call(session, "bash", { command: "true" }));
        } finally {
          await child.close();
        }
      }, { ...auto, sandbox: "off" });
    } finally {
      await killSleeps(mark);
    }
  });

  // Before: every ended job kept its output files until the session closed: 20 jobs printing 3 MB each held 60 MB
  // in the temp dir, and jobs at the session's output maximum (256 MiB each) would have filled the disk.
  test("ended jobs are kept within a bound of bytes and of jobs: the oldest are dropped with their files", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session) => {
      const table = sessionProcesses(session);
      table.maxKeptOutputBytes = 5_000;
      table.maxKeptJobs = 3;
      let folder = "";
      for (let i = 1; i <= 5; i++) {
        const started = okOutput<{ id: string; stdout_path: string }>(
          await box.call(session, "bash_background", { command: "head -c 2000 /dev/zero" }),
        );
        folder = path.dirname(started.stdout_path);
        await box.call(session, "bash_wait", { id: started.id, timeout_s: 20 });
      }
      assert.ok(
        await eventually(async () => (await readdir(folder)).length === 4),
        `${(await readdir(folder)).length} files kept`,
      );
      const { jobs } = okOutput<{ jobs: { id: string }[] }>(await box.call(session, "bash_list", {}));
      assert.deepEqual(jobs.map((j) => j.id), ["job-4", "job-5"]);
      const gone = await box.call(session, "bash_read", { id: "job-1" });
      assert.equal(gone.errorCode, "unknown_job");
      assert.match(gone.error ?? "", /ended and was dropped with its output/);
      table.maxKeptOutputBytes = 1 << 20;
      for (let i = 6; i <= 8; i++) {
        const { id } = okOutput<{ id: string }>(await box.call(session, "bash_background", { command: "true" }));
        await box.call(session, "bash_wait", { id, timeout_s: 20 });
      }
      assert.ok(await eventually(async () => (await readdir(folder)).length === 6), "three jobs kept at most");
    }, { ...auto, sandbox: "off" });
  });
});

describe("job ids instead of host process ids", () => {
  // Before: bash_background and bash_list gave the host's pid. Two tenants' sessions starting jobs in turn got
  // interleaved pids (alice 21294, bob 21297, alice 21310, bob 21317 under `serve --http` with two tenants), so
  // each could count the processes the other started by the gaps.
  test("two sessions each number their own jobs, and neither sees a process id", { timeout: 60_000 }, async () => {
    await withSession(async (alice) => {
      await withSession(async (bob) => {
        const ids: Record<string, string[]> = { alice: [], bob: [] };
        for (let i = 0; i < 3; i++) {
          for (const [name, session] of [["alice", alice], ["bob", bob]] as const) {
            const started = okOutput<Record<string, unknown>>(
              await box.call(session, "bash_background", { command: "echo $$" }),
            );
            assert.deepEqual(Object.keys(started).filter((k) => /pid/i.test(k)), [], JSON.stringify(started));
            ids[name].push(started.id as string);
          }
        }
        assert.deepEqual(ids, { alice: ["job-1", "job-2", "job-3"], bob: ["job-1", "job-2", "job-3"] });
        const listed = okOutput<{ jobs: Record<string, unknown>[] }>(await box.call(bob, "bash_list", {}));
        assert.deepEqual(listed.jobs.map((job) => job.id), ["job-1", "job-2", "job-3"]);
        for (const job of listed.jobs) assert.deepEqual(Object.keys(job).filter((k) => /pid/i.test(k)), []);
        // Each session's job-1 is its own.
        const done = okOutput<Wait>(await box.call(bob, "bash_wait", { id: "job-1", timeout_s: 10 }));
        const pid = done.stdout.trim();
        assert.match(pid, /^\d+$/);
        // A process id where a job id goes is refused, saying what an id is.
        for (const tool of ["bash_read", "bash_wait", "bash_stop"]) {
          const refused = await box.call(bob, tool, { id: pid });
          assert.equal(refused.errorCode, "unknown_job", tool);
          assert.match(String(refused.error), /job ids are job-1, job-2, … per session, not process ids/);
        }
      }, auto);
    }, auto);
  });
});
