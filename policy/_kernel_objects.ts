/**
 * The user namespace in front of bubblewrap: bounds of the kernel objects the
 * kernel counts per user rather than per process or cgroup.
 *
 * inotify instances and watches and fanotify groups and marks are counted per
 * user namespace and user, and every count is also checked against the limit
 * of each namespace above (`inc_ucount`): every sandbox of a server, and the
 * server itself, draw on the one count of the server's user in the machine's
 * namespace (`fs.inotify.max_user_instances`, 128 by default). Before, one
 * command took all 128 inotify instances (and all 128 fanotify groups) of
 * root: while it ran (a background job, for as long as its session), every
 * other process of that user on the machine, the server's own `Deno.watchFs`
 * and the watchers of every other sandbox, failed with "Too many open files".
 * No rlimit or cgroup counts them (an instance is one descriptor of
 * `openFiles`, and two processes of 64 took them).
 *
 * So the sandboxes of a session start in a user namespace of their own,
 * made once for the session and held by a small shell (`unshare --user
 * --map-root-user --mount`): root there, it writes the namespace's own limits
 * (`/proc/sys/user/max_inotify_instances` and the others), then waits for its
 * standard input to end (the session's close, or the server's exit). Each
 * sandbox enters it with `nsenter` (one small exec) and counts below its
 * limits: a session's commands together may hold an eighth of the machine's
 * instances and groups, and a quarter of its watches and marks. bubblewrap is
 * handed the server's user back (`--uid`, `--gid`, from the namespace's
 * `uid_map`), so that a command runs as the same user it ran as without it.
 * Made per command (a shell and a `mount` in front of each bubblewrap), the
 * same bounds cost about 6 ms a command against 12 for the sandbox itself.
 *
 * Pseudo-terminals are counted for the whole machine (`kernel.pty.max`, 4096,
 * of which `kernel.pty.reserve`, 1024, only for the machine's own devpts): every
 * other devpts instance, each sandbox's among them and every container's,
 * shares the rest. Before, one command opened all 3071 of them, and while it
 * ran no other sandbox (nor a container) could open a terminal (ENOSPC). Where
 * the namespace can also have a mount namespace, the shell mounts a devpts
 * instance of its own there, and bubblewrap (which `nsenter` starts in that
 * mount namespace) binds it over the sandbox's `/dev/pts` (its `/dev/ptmx`
 * leads there). A devpts instance bounds only its own terminals, and one
 * shared by sessions would let one open another's: so its `max=` is one of
 * {@linkcode PTY_SESSIONS} parts of the server's half of that rest, and a
 * session started while every part is held has an empty read-only folder
 * there instead (no terminal) until it ends. Before, each session's had an
 * eighth of the rest, and nine sessions opened it all.
 *
 * The bytes of POSIX message queues, pending signals and locked shared memory
 * are counted per user too, as rlimits (`RLIMIT_MSGQUEUE`, `RLIMIT_SIGPENDING`,
 * `RLIMIT_MEMLOCK`): each user namespace on the way up adds what a process of
 * it takes, and the count of a namespace is checked against the rlimit its
 * child namespace was made under. A sandbox's own namespace is made under the
 * command's full rlimits, so, before, one command's nine queues of 80 KiB took
 * all 800 KiB of root's `RLIMIT_MSGQUEUE` and its queued real-time signals all
 * 96,367 of root's pending signals: while it ran, every other process of the
 * server's user on the machine failed `mq_open` (EMFILE) and `sigqueue`
 * (EAGAIN). So the server's namespace (below) is made under an eighth of the
 * server's own soft limits of those three (`prlimit` in front of `unshare`):
 * the sandboxes of every session together take at most that much of the
 * user's count.
 *
 * The sessions' namespaces are themselves made inside one namespace of the
 * server's, held the same way from the first session to the last, whose
 * limits are half of the machine's: each session has its eighth, and all of them
 * together at most half. Before, each session's namespace sat right below the
 * machine's, and eight sessions (an HTTP tenant may hold 32) each holding
 * their 16 inotify instances took all 128 of root's: the server's own watcher
 * failed with "Too many open files" while they ran.
 *
 * @module
 */

import { type ChildProcess, spawn } from "node:child_process";
import { hostProgramCandidates, queryRuntimePermission, runProbe, shellOutput } from "@toolfence/internal";
import { findPrlimit, quote } from "./_limits.ts";

const UNSHARE_LOCATIONS = ["/usr/bin/unshare", "/bin/unshare", "/usr/local/bin/unshare"];
const NSENTER_LOCATIONS = ["/usr/bin/nsenter", "/bin/nsenter", "/usr/local/bin/nsenter"];
const SHELL = "/bin/sh";
const PROBE_TIMEOUT_MS = 5000;

/** The share of the machine's per-user count one sandbox may hold: its instances and groups. */
export const OBJECT_SHARE = 8;
/** The share of the machine's per-user count one sandbox may hold: its watches and marks. */
export const WATCH_SHARE = 4;
/** The share of the machine's per-user counts the sandboxes of every session together may hold. */
export const SERVER_SHARE = 2;
/**
 * The sessions of a process whose sandboxes may open pseudo-terminals at once (an HTTP tenant may hold 32): each is
 * given this part of the server's share of those the machine's devpts instances share, and a session past them none.
 */
export const PTY_SESSIONS = 32;
/**
 * The most of the {@linkcode PTY_SESSIONS} parts the sessions of one workspace hold at once (a tenant's sessions, a
 * session's sub-agents): one tenant opening sessions leaves the other tenants' sessions their terminals.
 */
export const PTY_SESSIONS_PER_WORKSPACE = 4;

/** The first line of a session holder's script (the server's says `server`): what tells them apart in a listing. */
export const SESSION_HOLDER_LINE = "# toolfence: the namespace of a session's sandboxes";

/**
 * The rlimits whose use the kernel counts per user in every user namespace up to the machine's (ucounts), each with
 * its line in `/proc/self/limits` and prlimit's option: the holder's namespace is made under a share of the server's.
 */
const USER_RLIMITS: readonly { line: string; option: string }[] = [
  { line: "Max msgqueue size", option: "--msgqueue" },
  { line: "Max pending signals", option: "--sigpending" },
  { line: "Max locked memory", option: "--memlock" },
];

/** The exit status of the holder when the limits could not be written. */
const NOT_BOUNDED_EXIT = 126;

// Each count: the machine's limit (the init namespace's, which these files always show) and the namespace's own.
const COUNTS: readonly { machine: string; own: string; share: number; optional?: true }[] = [
  { machine: "/proc/sys/fs/inotify/max_user_instances", own: "max_inotify_instances", share: OBJECT_SHARE },
  { machine: "/proc/sys/fs/inotify/max_user_watches", own: "max_inotify_watches", share: WATCH_SHARE },
  // Without fanotify in the kernel, neither file is there.
  {
    machine: "/proc/sys/fs/fanotify/max_user_groups",
    own: "max_fanotify_groups",
    share: OBJECT_SHARE,
    optional: true,
  },
  { machine: "/proc/sys/fs/fanotify/max_user_marks", own: "max_fanotify_marks", share: WATCH_SHARE, optional: true },
];

/** The machine's per-user limits, in the order of COUNTS (undefined: not in this kernel). */
export type MachineCounts = readonly (number | undefined)[];

/** How a sandbox enters its session's namespace: empty `argv` where there is none. */
export interface NamespaceFront {
  /** The argv before bubblewrap's (`nsenter` into the held namespace); empty where there is no front. */
  argv: readonly string[];
  /** What bubblewrap is given first: the server's user and group (`--uid`, `--gid`). */
  bwrapArgs: readonly string[];
  /**
   * The pseudo-terminals the session's sandboxes may open, where the namespace has a devpts of that size over its
   * `/dev/pts` (0: an empty read-only folder there, the server's share being held by other sessions).
   */
  ptys?: number;
  /** No terminal at all, without a namespace: an empty read-only `/dev/pts` ({@linkcode NO_TERMINALS}). */
  noTerminals?: boolean;
}

/** No front: bubblewrap starts as before, without these bounds. */
export const NO_FRONT: NamespaceFront = Object.freeze({ argv: [], bwrapArgs: [] });

/**
 * The front of a sandbox whose session namespace cannot be made now, where the chain works here (its holder did not
 * say it was ready in time, twice, on a loaded machine): bubblewrap starts without the namespace, and so without the
 * counts it bounds, but with no terminal. Before, such a sandbox had a devpts of its own with no bound, and one command
 * opened 2,687 of the 3,072 terminals the machine's devpts instances share (kernel_objects_test under Node 24, CI run
 * ci13): the one count a sandbox of its own would leave to the machine's.
 */
export const NO_HOLDER_FRONT: NamespaceFront = Object.freeze({ argv: [], bwrapArgs: [], noTerminals: true });

/** What bubblewrap is given after `--dev /dev` for a sandbox with no terminal: `/dev/ptmx` then leads nowhere. */
export const NO_TERMINALS: readonly string[] = ["--tmpfs", "/dev/pts", "--remount-ro", "/dev/pts"];

/** What bubblewrap is given after `--dev /dev` where the namespace has its devpts (or its empty folder there). */
export const DEVPTS_BIND: readonly string[] = ["--dev-bind", "/dev/pts", "/dev/pts"];

const PTY_FILES = ["/proc/sys/kernel/pty/max", "/proc/sys/kernel/pty/reserve"];
const MOUNT_LOCATIONS = ["/usr/bin/mount", "/bin/mount"];

/** How long a holder may take to say it is ready, by default. */
const READY_MS = 5000;

/**
 * The script of the holder's shell, root in its namespace: writes each
 * count's share of `machine`, at least 1 (a session's, or with `server` the
 * {@linkcode SERVER_SHARE} of every session's together), mounts a devpts of
 * `ptys` over its own `/dev/pts` where asked (with 0, an empty read-only
 * tmpfs: `/dev/ptmx` leads nowhere, and no terminal is taken), prints `R <uid> <gid>` (the user and
 * group of the namespace above, from the namespace's maps) and waits until
 * its standard input ends. The machine's limits are read beforehand (a sysctl
 * file read from an offset past 0, as dash's `read` does byte after byte,
 * reads as its end: `read` took 128 for 1).
 */
export function holderScript(
  machine: MachineCounts,
  devpts?: { mount: string; ptys: number },
  server = false,
): string {
  const writes = COUNTS.flatMap(({ own, share }, i) => {
    const n = machine[i];
    const part = server ? SERVER_SHARE : share;
    return n === undefined ? [] : [`echo ${Math.max(1, Math.floor(n / part))} > /proc/sys/user/${own}`];
  });
  // Over the host's /dev/pts in the namespace's own mounts only (unshare makes them private): the sandbox binds it.
  // devpts has no max=0 (recent kernels take max - 1 as an unsigned bound: none at all): a session given none has no
  // devpts.
  if (devpts) {
    writes.push(
      devpts.ptys > 0
        ? `${quote(devpts.mount)} -t devpts -o newinstance,ptmxmode=0666,mode=0620,max=${devpts.ptys} devpts /dev/pts`
        : `${quote(devpts.mount)} -t tmpfs -o ro,size=4k,mode=0555 no-pseudo-terminals /dev/pts`,
    );
  }
  return [
    server ? "# toolfence: the namespace of the server's sandboxes" : SESSION_HOLDER_LINE,
    `${writes.join(" &&\n")} || exit ${NOT_BOUNDED_EXIT}`,
    `read _ u _ < /proc/self/uid_map && read _ g _ < /proc/self/gid_map || exit ${NOT_BOUNDED_EXIT}`,
    'echo "R $u $g"',
    // Until the session closes, or the server ends (its end of the pipe closes with it).
    "while read _; do :; done",
  ].join("\n");
}

// How a holder is made here: found once per process, with the whole chain a command starts.
interface Recipe {
  /** The server's holder: `unshare` (behind `prlimit` where it lowers the user rlimits first) and its shell. */
  server: readonly string[];
  /** A session's holder, started inside the server's namespace: `unshare` and its shell. */
  session: readonly string[];
  /** A session's holder where the server's pseudo-terminals are all given (with `ptys`): no terminal at all. */
  sessionNoPtys?: readonly string[];
  nsenter: string;
  ptys?: number;
}

// The sessions holding a part of the server's pseudo-terminals (at most PTY_SESSIONS): the sum of every devpts
// instance's max= is what their sandboxes may open together, and each has its own (none opens another's terminals).
// Counted by workspace too (at most PTY_SESSIONS_PER_WORKSPACE each): before, one tenant's 32 sessions held every part,
// and every other tenant's commands ran without a terminal until those sessions closed.
let ptyPlaces = 0;
const ptyPlacesByWorkspace = new Map<string, number>();

// Takes a part for a session of `workspace`, where one is left to it; whether it did.
function takePtyPlace(workspace: string): boolean {
  const own = ptyPlacesByWorkspace.get(workspace) ?? 0;
  if (ptyPlaces >= PTY_SESSIONS || own >= PTY_SESSIONS_PER_WORKSPACE) return false;
  ptyPlaces++;
  ptyPlacesByWorkspace.set(workspace, own + 1);
  return true;
}

function givePtyPlaceBack(workspace: string): void {
  ptyPlaces--;
  const own = (ptyPlacesByWorkspace.get(workspace) ?? 1) - 1;
  if (own > 0) ptyPlacesByWorkspace.set(workspace, own);
  else ptyPlacesByWorkspace.delete(workspace);
}

// The server's holder of each recipe and the sessions that hold a place in it: started with the first, ended with the
// last (a new one then starts with the next session; one ended while a session's namespace is in it would leave that
// namespace outside the next one's bound), so that no process of ours outlives every session.
const serverHolders = new Map<Recipe, { held: Promise<Held | undefined>; sessions: number }>();

function enterServer(recipe: Recipe): void {
  let entry = serverHolders.get(recipe);
  if (entry === undefined) serverHolders.set(recipe, entry = { held: startHolder(recipe.server), sessions: 0 });
  entry.sessions++;
}

function leaveServer(recipe: Recipe): void {
  const entry = serverHolders.get(recipe);
  if (entry === undefined || --entry.sessions > 0) return;
  serverHolders.delete(recipe);
  void entry.held.then((held) => held?.end());
}

// The living server holder of `recipe` (entered first): the one there is, else a new one; undefined where none starts.
async function serverHolder(recipe: Recipe): Promise<Held | undefined> {
  const entry = serverHolders.get(recipe);
  if (entry === undefined) return undefined;
  const awaited = entry.held;
  if ((await awaited)?.alive()) return awaited;
  if (entry.held === awaited) entry.held = startHolder(recipe.server);
  const again = await entry.held;
  return again?.alive() ? again : undefined;
}

// A session's holder inside `server`'s namespace, with the front of its sandboxes (the server's user and group: the
// session's maps name the server namespace's root).
// (`ptys` false: the session holds no part of the server's pseudo-terminals.)
async function startSession(
  recipe: Recipe,
  server: Held,
  ptys: boolean,
  readyMs: number,
): Promise<SessionHeld | undefined> {
  const session = ptys ? recipe.session : recipe.sessionNoPtys ?? recipe.session;
  const held = await startHolder([recipe.nsenter, `--target=${server.pid}`, "--user", ...session], readyMs);
  return held && {
    ...held,
    front: {
      argv: [recipe.nsenter, `--target=${held.pid}`, "--user", "--mount"],
      bwrapArgs: ["--uid", server.uid, "--gid", server.gid],
      ...(recipe.ptys !== undefined ? { ptys: ptys ? recipe.ptys : 0 } : {}),
    },
  };
}

const recipes = new Map<string, Promise<Recipe | undefined>>();

/**
 * The namespace of one session's sandboxes, made at its first sandbox and
 * ended by {@linkcode close} (the session's close): {@linkcode front} says
 * how a sandbox enters it. Where the chain does not work here (no `unshare`
 * or `nsenter`, no user namespace of our own, a bubblewrap that cannot run in
 * one, a runtime that may not start them), sandboxes start without it, as
 * before, and without these bounds.
 *
 * Requires `--allow-run` for `unshare` and `nsenter` (without it: no front,
 * never a prompt).
 */
export class KernelObjectsHolder {
  readonly #workspace: string;
  readonly #readyMs: number;
  #held: Promise<SessionHeld | undefined> | undefined;
  #closed = false;
  // The recipe whose server holder this session holds a place in, once it does.
  #entered: Recipe | undefined;
  // Whether it holds one of the PTY_SESSIONS parts of the server's pseudo-terminals (taken once, given back at close).
  #ptyPlace: boolean | undefined;

  /**
   * The holder of a session of `workspace` (the key its part of the pseudo-terminals is counted by); `readyMs`: how
   * long its namespace's holder may take to say it is ready (5 s).
   */
  constructor(workspace: string, options: { readyMs?: number } = {}) {
    this.#workspace = workspace;
    this.#readyMs = options.readyMs ?? READY_MS;
  }

  /**
   * The front of a sandbox of `bwrap` with `userns` (the `--unshare-user
   * --disable-userns` the sandbox passes; without it, bubblewrap before 0.8,
   * there is none: `--uid` needs it).
   */
  async front(bwrap: string, userns: readonly string[]): Promise<NamespaceFront> {
    if (userns.length === 0 || this.#closed) return NO_FRONT;
    // Set before any wait, so that sandboxes starting at once share one holder.
    const awaited = this.#held ??= this.#start(bwrap, userns);
    let held = await awaited;
    // Not made (a holder that did not say it was ready in time), or gone (killed from outside): tried again, so that
    // a pid it no longer has is never entered.
    if (held === undefined || !held.alive()) {
      if (this.#closed) return NO_FRONT;
      if (this.#held === awaited) this.#held = this.#start(bwrap, userns);
      held = await this.#held;
    }
    if (held?.alive()) return held.front;
    // The chain works here and its holder could not be made now: no terminal rather than terminals with no bound.
    return !this.#closed && await recipeFor(bwrap, userns) !== undefined ? NO_HOLDER_FRONT : NO_FRONT;
  }

  async #start(bwrap: string, userns: readonly string[]): Promise<SessionHeld | undefined> {
    const recipe = await recipeFor(bwrap, userns);
    if (recipe === undefined || this.#closed) return undefined;
    if (this.#entered === undefined) enterServer(this.#entered = recipe);
    if (this.#ptyPlace === undefined && recipe.ptys !== undefined) {
      this.#ptyPlace = takePtyPlace(this.#workspace);
    }
    const server = await serverHolder(recipe);
    return server && !this.#closed ? startSession(recipe, server, this.#ptyPlace !== false, this.#readyMs) : undefined;
  }

  /** Ends the namespace (its holder ends with its standard input), and the server's with the last session's. */
  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve(this.#held).then((held) => {
      held?.end();
      if (this.#entered !== undefined) leaveServer(this.#entered);
      this.#entered = undefined;
      if (this.#ptyPlace) givePtyPlaceBack(this.#workspace);
      this.#ptyPlace = false;
    });
  }
}

interface Held {
  pid: number;
  /** The user and group it named (see holderScript). */
  uid: string;
  gid: string;
  alive(): boolean;
  end(): void;
}

interface SessionHeld extends Held {
  front: NamespaceFront;
}

// Starts a holder by `argv`: undefined where it does not say it is ready in time.
function startHolder(argv: readonly string[], readyMs = READY_MS): Promise<Held | undefined> {
  let child: ChildProcess;
  try {
    // No inherited environment, no workspace cwd.
    child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "ignore"], env: {}, cwd: "/" });
  } catch {
    return Promise.resolve(undefined);
  }
  // It never keeps the process alive: it ends when its stdin does, with the process.
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  (child.stdout as unknown as { unref?: () => void }).unref?.();
  let exited = false;
  const end = () => {
    child.stdin?.end();
    if (!exited) child.kill("SIGKILL");
  };
  return new Promise((resolve) => {
    let text = "";
    // Not unref'd: it keeps the event loop alive while the holder starts (the child and its pipes are unref'd, and
    // under Node a test's process ended with the sandbox's start still waiting), and it is cleared at once after.
    const timer = setTimeout(() => finish(undefined), readyMs);
    const finish = (held: Held | undefined) => {
      clearTimeout(timer);
      if (held === undefined) end();
      resolve(held);
    };
    child.once("exit", () => {
      exited = true;
      finish(undefined);
    });
    child.once("error", () => finish(undefined));
    child.stdin!.on("error", () => {});
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      text += chunk;
      const ready = /^R (\d+) (\d+)\n/.exec(text);
      if (ready === null || child.pid === undefined) return;
      finish({
        pid: child.pid,
        uid: ready[1],
        gid: ready[2],
        alive: () => !exited && child.exitCode === null && child.signalCode === null,
        end,
      });
    });
  });
}

// The machine's limits, read by a shell (the runtime may not read /proc): "-" for a file that is not there.
async function readMachine(files: readonly string[]): Promise<(number | undefined)[] | undefined> {
  const text = await shellOutput('for f; do if [ -e "$f" ]; then cat "$f" || exit 1; else echo -; fi; done', files);
  const values = text?.trim().split("\n");
  if (values?.length !== files.length) return undefined;
  const numbers = values.map((value) => value === "-" ? undefined : Number(value));
  return numbers.every((n) => n === undefined || (Number.isSafeInteger(n) && n >= 0)) ? numbers : undefined;
}

// `prlimit` and the soft limits it sets, an eighth of the server's own of USER_RLIMITS (an unlimited one left as it is),
// to put in front of `unshare`; empty where prlimit is not there or may not run, or the limits cannot be read.
async function userRlimitsFront(): Promise<string[]> {
  const prlimit = await findPrlimit();
  if (prlimit === undefined || !queryRuntimePermission("run", prlimit).allowed) return [];
  const lines = (await shellOutput("cat /proc/self/limits", []))?.split("\n") ?? [];
  const options = USER_RLIMITS.flatMap(({ line, option }) => {
    const soft = lines.find((l) => l.startsWith(line))?.slice(line.length).trim().split(/\s+/)[0];
    return soft !== undefined && /^\d+$/.test(soft)
      ? [`${option}=${Math.max(1, Math.floor(Number(soft) / OBJECT_SHARE))}:`]
      : [];
  });
  return options.length ? [prlimit, ...options] : [];
}

function recipeFor(bwrap: string, userns: readonly string[]): Promise<Recipe | undefined> {
  let known = recipes.get(bwrap);
  if (known === undefined) {
    known = findRecipe(bwrap, userns);
    recipes.set(bwrap, known);
  }
  return known;
}

// The first recipe whose holder starts and whose sandbox, entered as a command's is, runs `true`: with a devpts of
// its own where that works here, else without.
async function findRecipe(bwrap: string, userns: readonly string[]): Promise<Recipe | undefined> {
  const machine = await readMachine([...COUNTS.map((count) => count.machine), ...PTY_FILES]);
  if (machine === undefined || COUNTS.some((count, i) => !count.optional && machine[i] === undefined)) return undefined;
  const counts = machine.slice(0, COUNTS.length);
  const [max, reserve] = machine.slice(COUNTS.length);
  // Each session's part of the server's share of the terminals the machine's other devpts instances share.
  const ptys = max !== undefined && reserve !== undefined && max > reserve
    ? Math.max(1, Math.floor((max - reserve) / SERVER_SHARE / PTY_SESSIONS))
    : undefined;
  const mounts = ptys === undefined ? [] : await hostProgramCandidates("mount", MOUNT_LOCATIONS);
  const nsenters = await hostProgramCandidates("nsenter", NSENTER_LOCATIONS);
  const limited = await userRlimitsFront();
  for (const unshare of await hostProgramCandidates("unshare", UNSHARE_LOCATIONS)) {
    for (const nsenter of nsenters) {
      // Asked first: a runtime that would prompt for them (Deno without --allow-run of both) gets no front.
      if (!queryRuntimePermission("run", unshare).allowed || !queryRuntimePermission("run", nsenter).allowed) continue;
      const server = [
        ...limited,
        unshare,
        "--user",
        "--map-root-user",
        SHELL,
        "-c",
        holderScript(counts, undefined, true),
      ];
      const sessionArgv = (devpts: { mount: string; ptys: number }) => [
        unshare,
        "--user",
        "--map-root-user",
        "--mount",
        SHELL,
        "-c",
        holderScript(counts, devpts),
      ];
      const tries: Recipe[] = [
        ...mounts.map((mount) => ({
          server,
          session: sessionArgv({ mount, ptys: ptys! }),
          sessionNoPtys: sessionArgv({ mount, ptys: 0 }),
          nsenter,
          ptys,
        })),
        { server, session: [unshare, "--user", "--map-root-user", SHELL, "-c", holderScript(counts)], nsenter },
      ];
      for (const recipe of tries) {
        const outer = await startHolder(recipe.server);
        const held = outer && await startSession(recipe, outer, true, READY_MS);
        if (held === undefined) {
          outer?.end();
          continue;
        }
        try {
          const { argv, bwrapArgs } = held.front;
          const probe = await runProbe(
            argv[0],
            [
              ...argv.slice(1),
              bwrap,
              ...bwrapArgs,
              "--ro-bind",
              "/",
              "/",
              "--dev",
              "/dev",
              ...(recipe.ptys ? DEVPTS_BIND : []),
              "--unshare-all",
              ...userns,
              "--",
              "true",
            ],
            PROBE_TIMEOUT_MS,
          );
          if (probe.ok) return recipe;
        } finally {
          held.end();
          outer!.end();
        }
      }
    }
  }
  return undefined;
}
