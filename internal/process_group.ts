/**
 * Starting a command in its own process group with its output on pipes, and
 * ending the whole group: SIGTERM, then SIGKILL after a grace period. A
 * sandbox (bubblewrap with a PID namespace of its own) is started as it is
 * and ended through that namespace instead. One code path for Deno and Node
 * through `node:child_process`.
 *
 * @module
 */

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import process from "node:process";
import { ToolError } from "@toolfence/core";
import type { ProcessExit, RunningProcess } from "@toolfence/core";
import { isRuntimePermissionError, queryRuntimePermission, runtimeFenceKind } from "./runtime_permissions.ts";
import { isExecutableFileSync } from "./executable.ts";
import { settlesWithin } from "./settles_within.ts";

/** A started process group, with its pipes. */
export interface GroupProcess extends RunningProcess {
  /** Its standard output (read it, e.g. with `captureOutput`, or it blocks once the pipe is full). */
  readonly stdout: Readable;
  /** Its standard error. */
  readonly stderr: Readable;
  /**
   * Ends every process left in the group: SIGTERM, then SIGKILL after
   * `graceMs` (default 5 s). Resolves once the group is gone.
   */
  terminate(graceMs?: number): Promise<void>;
}

/** How long a group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 5_000;

const POLL_MS = 20;

// How long a killed group is given to be reaped by its parent.
const REAP_WAIT_MS = 2_000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Whether the process (or, for a negative id, a member of the group) may still exist: false only once it is
// gone (ESRCH). EPERM means it exists and may not be signalled; it counts as alive.
function signalPid(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  return signalPid(-pgid, signal);
}

/** Whether any process of the group still exists. */
export function groupAlive(pgid: number): boolean {
  return signalGroup(pgid, 0);
}

/**
 * SIGTERM to the group, SIGKILL to whatever is left after `graceMs`, then
 * waits (briefly) until the group is gone. Returns whether it is gone.
 */
export async function terminateGroup(pgid: number, graceMs: number = KILL_GRACE_MS): Promise<boolean> {
  if (!signalGroup(pgid, "SIGTERM")) return true;
  const deadline = performance.now() + graceMs;
  while (performance.now() < deadline) {
    await delay(POLL_MS);
    if (!groupAlive(pgid)) return true;
  }
  signalGroup(pgid, "SIGKILL");
  // A killed process lingers until its parent reaps it; wait a little for that.
  for (let i = 0; i < REAP_WAIT_MS / POLL_MS; i++) {
    if (!groupAlive(pgid)) return true;
    await delay(POLL_MS);
  }
  return false;
}

/**
 * SIGTERM to a group whose every process dies with its leader, SIGKILL after
 * `graceMs` if the leader is still there, and gone once the leader has exited.
 * Members left in the group then are dead, waiting for a reaper (in a container
 * its init may take seconds), and a zombie answers signal 0 like the living.
 */
async function terminateWithLeader(pgid: number, exited: Promise<unknown>, graceMs: number): Promise<boolean> {
  if (!signalGroup(pgid, "SIGTERM")) return true;
  if (!await settlesWithin(exited, graceMs)) {
    signalGroup(pgid, "SIGKILL");
    if (!await settlesWithin(exited, REAP_WAIT_MS)) return false;
  }
  // Nothing of it runs now; the dead need no second look.
  signalGroup(pgid, "SIGKILL");
  return true;
}

// Ending a sandbox whose processes all live in the PID namespace of its leader's child (bubblewrap with
// --unshare-pid): the leader is stopped at once, so that it starts nothing more; its child, the namespace's
// init, is killed, upon which the kernel kills every process in the namespace; the leader is then let go on to
// end with SIGTERM. The child cannot be missed: a stopped bubblewrap that has not made it yet never will, and
// one made is listed among the children of the stopped leader. (A kill of bubblewrap alone is not enough: its
// child sets its parent-death signal only once the sandbox is set up, and a kill that lands earlier leaves it
// running the command.) This process reads /proc itself where it may, and else has this script do it (Deno
// with path-scoped read permission may not), after the same stop.
const END_NAMESPACE = `p=$1
kill -STOP "$p" 2>/dev/null || exit 0
i=0
while [ $i -lt 100000 ] && read -r stat < "/proc/$p/stat"; do
  s=\${stat##*) }; s=\${s%% *}
  case $s in T|t|Z|X) break;; esac
  i=$((i + 1))
done
read -r children < "/proc/$p/task/$p/children"
for c in $children; do kill -KILL "$c"; done`;

const SHELL = "/bin/sh";
let namespaceShell: string | null | undefined;
let procReadable: boolean | undefined;

/**
 * The shell that runs {@linkcode END_NAMESPACE}, or undefined where this
 * process may not start it (Deno's --allow-run naming other programs only).
 * Not looked at on disk: that needs read access to /bin, which the narrow
 * flags do not grant, and every POSIX system has /bin/sh. Asked once per
 * process.
 */
function namespaceEnder(): string | undefined {
  namespaceShell ??= queryRuntimePermission("run", SHELL).allowed ? SHELL : null;
  return namespaceShell ?? undefined;
}

/**
 * Whether {@linkcode spawnGroup} ends a sandbox (`diesWithLeader`) through
 * its PID namespace, which needs /proc (read here, or by a shell this
 * process may start), leaving the sandbox to make its own session
 * (bubblewrap's `--new-session`). Otherwise it starts the sandbox in a
 * session of its own and ends it by its process group, and bubblewrap must
 * not make another session (the group signal would then miss the
 * namespace's init).
 *
 * @example
 * ```ts
 * import { sandboxMakesSession } from "@toolfence/internal";
 * console.log(sandboxMakesSession()); // true under deno run -A
 * ```
 */
export function sandboxMakesSession(): boolean {
  return canReadProc() || namespaceEnder() !== undefined;
}

function canReadProc(): boolean {
  procReadable ??= queryRuntimePermission("read", "/proc").allowed;
  return procReadable;
}

// The state letter of /proc/<pid>/stat (after the command name, which may hold anything), or undefined once gone.
function procState(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2];
  } catch {
    return undefined;
  }
}

// The children of the stopped process `pid`, once the stop has taken hold (it lands in microseconds: the
// process sleeps in poll or runs its own code; a second is the bound), as END_NAMESPACE reads them.
function childrenOnceStopped(pid: number): number[] {
  const deadline = performance.now() + 1_000;
  for (;;) {
    const state = procState(pid);
    if (state === undefined || "TtZX".includes(state) || performance.now() > deadline) break;
  }
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function endNamespace(pid: number, exited: Promise<unknown>, graceMs: number): Promise<boolean> {
  if (!signalPid(pid, "SIGSTOP")) return true;
  if (canReadProc()) {
    for (const child of childrenOnceStopped(pid)) signalPid(child, "SIGKILL");
  } else {
    // Should the script not run (out of processes, say), bubblewrap at least is let go to its end below.
    await new Promise<void>((done) => {
      try {
        const ender = spawn(namespaceEnder()!, ["-c", END_NAMESPACE, "sh", String(pid)], { stdio: "ignore" });
        ender.once("exit", () => done());
        ender.once("error", () => done());
      } catch {
        done();
      }
    });
  }
  signalPid(pid, "SIGTERM");
  signalPid(pid, "SIGCONT");
  if (await settlesWithin(exited, graceMs)) return true;
  signalPid(pid, "SIGKILL");
  return await settlesWithin(exited, REAP_WAIT_MS);
}

// Waits until the process `pid` leads its group, or has exited: a process started through setsid(1)
// (see spawnGroup) is in the caller's group until setsid runs, and nothing of the command starts before.
async function groupFormed(pid: number, exited: () => boolean): Promise<void> {
  while (!exited() && !groupAlive(pid)) await delay(1);
}

const SETSID_LOCATIONS = ["/usr/bin/setsid", "/bin/setsid"];
let setsidProgram: string | null | undefined;

/**
 * The setsid(1) that starts a command in a session of its own without a fork
 * of this process, or undefined. Under Deno, `detached` forks the whole server
 * (its hook between fork and exec, which calls setsid, rules out posix_spawn),
 * and a fork copies the page tables of its V8 heaps and of the command
 * analysis's WebAssembly memory: about 10 ms per command more than a plain
 * spawn on the machine of BENCHMARKS.md. setsid(1), spawned plainly, is not a
 * group leader, so it makes the session and execs the command in place (same
 * pid, same exit) at the cost of one small exec. Node forks for every spawn,
 * so there it would only add that exec. Looked for once per process.
 */
function sessionLauncher(): string | undefined {
  if (setsidProgram === undefined) {
    setsidProgram = runtimeFenceKind() !== "deno"
      ? null
      : SETSID_LOCATIONS.find((file) => isExecutableFileSync(file) && queryRuntimePermission("run", file).allowed) ??
        null;
  }
  return setsidProgram ?? undefined;
}

/** Options of {@linkcode spawnGroup}. */
export interface SpawnGroupOptions {
  /** Working directory (absolute). */
  cwd: string;
  /** The whole environment of the process. */
  env: Record<string, string>;
  /** Open descriptors the process gets as its descriptors 3, 4, ... (the sandbox's bound handles). */
  extraFds?: readonly number[];
  /**
   * Everything the leader starts lives in its child's PID namespace
   * (bubblewrap with `--unshare-pid` and `--die-with-parent`), and is gone
   * once the leader has exited. Where {@linkcode sandboxMakesSession}, the
   * leader is started as it is (not in a session of its own: that costs an
   * exec of setsid(1), or a fork of this process) and ended through that
   * namespace; else as any other.
   */
  diesWithLeader?: boolean;
  /** Text written to its standard input (a pipe), which is then closed; without it there is no input. */
  input?: string;
}

/**
 * Starts `argv` as the leader of a new process group (and session), with no
 * input (or `input` on a pipe) and its output on two pipes for the caller to drain. Resolves once the
 * process has started; a program that cannot be started is a `spawn_failed`
 * ToolError, a runtime that forbids it a `fence_denied` one.
 */
export function spawnGroup(argv: readonly string[], options: SpawnGroupOptions): Promise<GroupProcess> {
  const ownNamespace = options.diesWithLeader === true && sandboxMakesSession();
  // Through setsid(1) where that spares a fork (see sessionLauncher): not with descriptors past stdio, whose
  // hook forks anyway, and only for a program named by a path that is there, so that a missing one is still a
  // spawn_failed error, never setsid's exit 127. And only for a program the runtime lets this process run
  // itself: Deno's --allow-run judges the program it starts, which would be setsid, so a list that names setsid
  // but not the program must not let the program through (its spawn then fails with fence_denied, as before).
  const launcher = ownNamespace || options.extraFds?.length || !path.isAbsolute(argv[0]) ||
      !isExecutableFileSync(argv[0]) || !queryRuntimePermission("run", argv[0]).allowed
    ? undefined
    : sessionLauncher();
  return new Promise((resolve, reject) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(launcher ?? argv[0], launcher ? [...argv] : argv.slice(1), {
        cwd: options.cwd,
        env: options.env,
        detached: !ownNamespace && launcher === undefined,
        stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe", ...(options.extraFds ?? [])],
      });
    } catch (error) {
      reject(startError(argv[0], error));
      return;
    }
    let exit: ProcessExit | undefined;
    const exited = new Promise<ProcessExit>((settle) => {
      child.once("exit", (code, signal) => {
        exit = { code, signal };
        settle(exit);
      });
    });
    child.once("error", (error) => reject(startError(argv[0], error)));
    child.once("spawn", () => {
      const pid = child.pid!;
      if (options.input !== undefined) {
        // A program may exit before it reads its input; the broken pipe is its
        // business (its exit says why), never an uncaught error (Node raises one).
        child.stdin!.on("error", () => {});
        child.stdin!.end(options.input);
      }
      // Once the group is known to be gone its id may be reused by an unrelated
      // group, which must never receive our signals.
      let gone = false;
      let ending: Promise<void> | undefined;
      resolve({
        pid,
        exited,
        get exit() {
          return exit;
        },
        stdout: child.stdout!,
        stderr: child.stderr!,
        terminate(graceMs = KILL_GRACE_MS) {
          // A sandbox's leader exits only after its namespace's init, and the namespace ends with that init.
          if (gone || (ownNamespace && exit !== undefined)) return Promise.resolve();
          ending ??= (launcher ? groupFormed(pid, () => exit !== undefined) : Promise.resolve())
            .then(() =>
              ownNamespace
                ? endNamespace(pid, exited, graceMs)
                : options.diesWithLeader
                ? terminateWithLeader(pid, exited, graceMs)
                : terminateGroup(pid, graceMs)
            )
            .then((isGone) => {
              gone = isGone;
              ending = undefined;
            });
          return ending;
        },
      });
    });
  });
}

function startError(program: string, error: unknown): ToolError {
  if (isRuntimePermissionError(error)) {
    return new ToolError(`The runtime does not allow starting ${program}: ${(error as Error).message}`, {
      code: "fence_denied",
      kind: "policy",
      recoverable: false,
      recoveryHint: "Shell commands are not available in this run; work with the other tools.",
      details: { program, cause: (error as Error).message },
    });
  }
  return new ToolError(`Could not start ${program}: ${(error as Error).message}`, {
    code: "spawn_failed",
    recoverable: false,
    details: { program, errno: (error as NodeJS.ErrnoException).code },
    cause: error,
  });
}
