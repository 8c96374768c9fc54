/**
 * The process groups a session started: background jobs by id, and every
 * running command, so that closing the session ends them all.
 *
 * @module
 */

import type {
  BoundedOutput,
  FileChange,
  MovedPath,
  ProcessExit,
  ResourceLimitHit,
  RunningProcess as GroupProcess,
  SessionBase as Session,
  ToolContext,
} from "@toolfence/core";

/** A background job. */
export interface Job {
  /** Short id the model uses, e.g. `job-1`. */
  readonly id: string;
  /** The command as given. */
  readonly command: string;
  /** The process group. */
  readonly process: GroupProcess;
  /** Where its output goes. */
  readonly stdoutPath: string;
  /** Where its error output goes. */
  readonly stderrPath: string;
  /** A descriptor of an output file, the very one made for it (the process door's `openOutput`). */
  readonly openOutput: (stream: "stdout" | "stderr") => number;
  /** Whether it runs under the OS sandbox. */
  readonly sandboxed: boolean;
  /** Its output, copied into the files within its byte limit. */
  readonly output: BoundedOutput;
  /** Settles when its group is gone and its output is all in the files. */
  readonly gone: Promise<void>;
  /** Protected paths it created, moved away once it is gone. */
  readonly quarantined: readonly MovedPath[];
  /** The resource limit it hit, once it is gone (from the process door). */
  readonly resourceLimit: () => Promise<ResourceLimitHit | undefined>;
  /** When it started (ms since the epoch). */
  readonly startedAt: number;
  /** When its leader exited, once it has. */
  finishedAt?: number;
  /** Whether bash_stop (or the session's end) stopped it. */
  stopRequested: boolean;
  /** The door's change report of its run, until the first report after its end gives its file changes. */
  changes?: (reporter: ToolContext) => Promise<FileChange[]>;
  /** Removes its output files (through the door), when the session drops the ended job. */
  readonly removeOutput?: () => void;
}

/** A job's state for the model. */
export type JobStatus = "running" | "exited" | "killed";

/** The running state of one session. */
export class SessionProcesses {
  /** Most background jobs running at once in one session. */
  static readonly MAX_RUNNING_JOBS = 8;
  /**
   * Most shell commands (calls of bash and background jobs together) running at once in one session and its
   * sub-agents (counted by workspace, which they share): each has the whole of `sandbox.limits` (its own cgroup),
   * so the total is this many times a command's.
   */
  static readonly MAX_RUNNING_COMMANDS = 16;
  /** The default session maximum of a command's output limit: 256 MiB. */
  static readonly DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024 * 1024;
  /** The most output bytes one command may keep in this session (per-call limits are cut to it). */
  maxOutputBytes: number = SessionProcesses.DEFAULT_MAX_OUTPUT_BYTES;
  /**
   * The most bytes of output the session's ended jobs keep on disk together (default 1 GiB), and the most ended
   * jobs it keeps (default 64): past either, the oldest ended jobs are dropped, their files removed. Before, every
   * ended job kept its files until the session closed: 20 jobs of 3 MB each held 60 MB in the temp dir, and jobs of
   * 256 MiB each (the session's output maximum) would fill the disk.
   */
  maxKeptOutputBytes = 1024 ** 3;
  /** See {@linkcode maxKeptOutputBytes}. */
  maxKeptJobs = 64;
  readonly #jobs = new Map<string, Job>();
  readonly #live = new Set<GroupProcess>();
  // The commands' ends (their group gone, their cgroup emptied): what the session's close waits for.
  readonly #ending = new Set<Promise<unknown>>();
  #next = 1;

  /**
   * Tracks a process group until it is gone. When its leader exits, whatever
   * the leader left running in the group is ended too: a command's processes
   * never outlive its shell (background work belongs in `bash_background`).
   * The returned promise settles when the group is gone. `gone`, the command's
   * whole end (what left the group, such as a `setsid` child, is killed with
   * its cgroup), is waited for by {@linkcode endAll}.
   */
  track(process: GroupProcess, gone?: Promise<unknown>): Promise<void> {
    this.#live.add(process);
    if (gone) {
      const ending = gone.catch(() => {});
      this.#ending.add(ending);
      void ending.finally(() => this.#ending.delete(ending));
    }
    return process.exited
      .then(() => process.terminate())
      .finally(() => this.#live.delete(process));
  }

  /** Adds a started background job and returns it. */
  addJob(fields: Omit<Job, "id" | "stopRequested" | "finishedAt">): Job {
    const job: Job = { ...fields, id: `job-${this.#next++}`, stopRequested: false };
    job.process.exited.then(() => job.finishedAt = Date.now());
    this.#jobs.set(job.id, job);
    void this.track(job.process, job.gone);
    // Once it is gone (its output all in its files), the ended jobs are held within their bounds.
    void job.gone.catch(() => {}).then(() => {
      this.#ended.push(job);
      this.#dropEnded();
    });
    return job;
  }

  // Ended jobs whose output is all written, in the order they ended.
  #ended: Job[] = [];

  #dropEnded(): void {
    const bytes = (job: Job) => job.output.kept.stdout + job.output.kept.stderr;
    let total = this.#ended.reduce((sum, job) => sum + bytes(job), 0);
    while (this.#ended.length > this.maxKeptJobs || (this.#ended.length > 0 && total > this.maxKeptOutputBytes)) {
      const oldest = this.#ended.shift()!;
      total -= bytes(oldest);
      this.#jobs.delete(oldest.id);
      try {
        oldest.removeOutput?.();
      } catch {
        // Gone already: nothing held.
      }
    }
  }

  /** Whether `id` named a job of this session that ended and was dropped to keep the session within its bounds. */
  dropped(id: string): boolean {
    const n = /^job-(\d+)$/.exec(id)?.[1];
    return n !== undefined && Number(n) < this.#next && !this.#jobs.has(id);
  }

  /** A job by id. */
  job(id: string): Job | undefined {
    return this.#jobs.get(id);
  }

  /** Every job, oldest first. */
  jobs(): Job[] {
    return [...this.#jobs.values()];
  }

  /** How many background jobs are still running. */
  runningJobs(): number {
    return this.jobs().filter((job) => job.process.exit === undefined).length;
  }

  // Jobs whose start is under way: they hold a place among the running ones from the moment they are let in.
  #starting = 0;

  /**
   * Takes a place for a job about to start, or returns false when
   * {@linkcode SessionProcesses.MAX_RUNNING_JOBS} are running or starting;
   * call the returned function once the job was added (or failed to start).
   * The place is taken at once, before any await: checked only by
   * `runningJobs()` before the start, 30 `bash_background` calls made at
   * once all passed the check and ran 30 jobs.
   */
  reserveJob(): (() => void) | false {
    if (this.runningJobs() + this.#starting >= SessionProcesses.MAX_RUNNING_JOBS) return false;
    this.#starting++;
    let released = false;
    return () => {
      if (!released) this.#starting--;
      released = true;
    };
  }

  /**
   * Ends every process group this session started that is still running, and resolves once each command has ended
   * whole: a process that left its group (`setsid sleep 99 &`) is killed with the command's cgroup, after the group.
   * Before, the close resolved once the groups were gone, and a server that closed its session and exited (stdin
   * ended while a call ran) left such a process running, the session's commands having no one left to end them.
   */
  async endAll(): Promise<void> {
    for (const job of this.#jobs.values()) job.stopRequested ||= job.process.exit === undefined;
    await Promise.all([...this.#live].map((p) => p.terminate()));
    await Promise.all([...this.#ending]);
  }
}

const bySession = new WeakMap<Session, SessionProcesses>();

/** The process table of `session`, created (and tied to its close) on first use. */
export function sessionProcesses(session: Session): SessionProcesses {
  let table = bySession.get(session);
  if (!table) {
    const created = new SessionProcesses();
    table = created;
    bySession.set(session, created);
    session.onClose(() => created.endAll());
  }
  return table;
}

/** The model-facing status of a job. */
export function jobStatus(exit: ProcessExit | undefined): JobStatus {
  if (exit === undefined) return "running";
  return exit.signal === null ? "exited" : "killed";
}
