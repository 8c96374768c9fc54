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
 * So bubblewrap starts in a user namespace of our own (`unshare --user
 * --map-root-user`), where a shell, root there, writes the namespace's own
 * limits (`/proc/sys/user/max_inotify_instances` and the others) before it
 * execs bubblewrap: everything of the sandbox counts below them. A sandbox
 * may hold an eighth of the machine's instances and groups, and a quarter of
 * its watches and marks. The shell reads the server's user back from its
 * `uid_map` and hands it to bubblewrap (`--uid`, `--gid`), so that a command
 * runs as the same user it ran as without the namespace.
 *
 * Pseudo-terminals are counted for the whole machine (`kernel.pty.max`, 4096,
 * of which `kernel.pty.reserve`, 1024, only for the machine's own devpts): every
 * other devpts instance, each sandbox's among them and every container's,
 * shares the rest. Before, one command opened all 3071 of them, and while it
 * ran no other sandbox (nor a container) could open a terminal (ENOSPC). Where
 * the namespace can also have a mount namespace, the shell mounts a devpts
 * instance of its own there with `max=` an eighth of that rest, and bubblewrap
 * binds it over the sandbox's `/dev/pts` (its `/dev/ptmx` leads there).
 *
 * @module
 */

import { hostProgramCandidates, runProbe, shellOutput } from "@toolfence/internal";
import { quote } from "./_limits.ts";

const UNSHARE_LOCATIONS = ["/usr/bin/unshare", "/bin/unshare", "/usr/local/bin/unshare"];
const SHELL = "/bin/sh";
const PROBE_TIMEOUT_MS = 5000;

/** The share of the machine's per-user count one sandbox may hold: its instances and groups. */
export const OBJECT_SHARE = 8;
/** The share of the machine's per-user count one sandbox may hold: its watches and marks. */
export const WATCH_SHARE = 4;

/** The exit status of the shell when the limits could not be written (as a cgroup the command cannot join). */
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

/** The front of a sandbox, and whether its own devpts is to be bound over the sandbox's `/dev/pts`. */
export interface NamespaceFront {
  /** The argv before bubblewrap's; empty where there is no front. */
  argv: readonly string[];
  /** The pseudo-terminals one sandbox may open, when the front mounts a devpts of that size. */
  ptys?: number;
}

/** What bubblewrap is given after `--dev /dev` where the front mounts its devpts. */
export const DEVPTS_BIND: readonly string[] = ["--dev-bind", "/dev/pts", "/dev/pts"];

const PTY_FILES = ["/proc/sys/kernel/pty/max", "/proc/sys/kernel/pty/reserve"];
const MOUNT_LOCATIONS = ["/usr/bin/mount", "/bin/mount"];

/**
 * The script of the shell between `unshare` and bubblewrap (its `$1` is
 * bubblewrap, the rest its arguments): writes each count's share of
 * `machine`, at least 1, and execs bubblewrap as the server's user and group.
 * The machine's limits are read beforehand (a sysctl file read from an offset
 * past 0, as dash's `read` does byte after byte, reads as its end: `read`
 * took 128 for 1).
 */
export function boundingScript(machine: MachineCounts, devpts?: { mount: string; ptys: number }): string {
  const writes = COUNTS.flatMap(({ own, share }, i) => {
    const n = machine[i];
    return n === undefined ? [] : [`echo ${Math.max(1, Math.floor(n / share))} > /proc/sys/user/${own}`];
  });
  // Over the host's /dev/pts in the namespace's own mounts only (unshare makes them private): the sandbox binds it.
  if (devpts) {
    writes.push(
      `${quote(devpts.mount)} -t devpts -o newinstance,ptmxmode=0666,mode=0620,max=${devpts.ptys} devpts /dev/pts`,
    );
  }
  return [
    `${writes.join(" &&\n")} || { echo "toolfence: the sandbox's share of the kernel's per-user counts (inotify, ` +
    `fanotify, pseudo-terminals) could not be set, so the command does not run" >&2; exit ${NOT_BOUNDED_EXIT}; }`,
    `read _ u _ < /proc/self/uid_map && read _ g _ < /proc/self/gid_map || exit ${NOT_BOUNDED_EXIT}`,
    'b=$1; shift; exec "$b" --uid "$u" --gid "$g" "$@"',
  ].join("\n");
}

const fronts = new Map<string, Promise<NamespaceFront>>();

/**
 * The argv to put in front of `bwrap` (whose own arguments, `--unshare-user`
 * among them, follow it), or nothing where it does not work here (no
 * `unshare`, no user namespace of our own, a bubblewrap that cannot run in
 * one): probed once per bubblewrap with the very chain a command starts.
 * `userns` is the `--unshare-user --disable-userns` the sandbox passes; without
 * it (bubblewrap before 0.8) there is no front, since `--uid` needs it.
 *
 * Requires `--allow-run` for `unshare`.
 */
export function namespaceFront(bwrap: string, userns: readonly string[]): Promise<NamespaceFront> {
  if (userns.length === 0) return Promise.resolve({ argv: [] });
  let known = fronts.get(bwrap);
  if (known === undefined) {
    known = findFront(bwrap, userns);
    fronts.set(bwrap, known);
  }
  return known;
}

// The machine's limits, read by a shell (the runtime may not read /proc): "-" for a file that is not there.
async function readMachine(files: readonly string[]): Promise<(number | undefined)[] | undefined> {
  const text = await shellOutput('for f; do if [ -e "$f" ]; then cat "$f" || exit 1; else echo -; fi; done', files);
  const values = text?.trim().split("\n");
  if (values?.length !== files.length) return undefined;
  const numbers = values.map((value) => value === "-" ? undefined : Number(value));
  return numbers.every((n) => n === undefined || (Number.isSafeInteger(n) && n >= 0)) ? numbers : undefined;
}

async function findFront(bwrap: string, userns: readonly string[]): Promise<NamespaceFront> {
  const machine = await readMachine([...COUNTS.map((count) => count.machine), ...PTY_FILES]);
  if (machine === undefined || COUNTS.some((count, i) => !count.optional && machine[i] === undefined)) {
    return { argv: [] };
  }
  const counts = machine.slice(0, COUNTS.length);
  const [max, reserve] = machine.slice(COUNTS.length);
  const ptys = max !== undefined && reserve !== undefined && max > reserve
    ? Math.max(1, Math.floor((max - reserve) / OBJECT_SHARE))
    : undefined;
  const mounts = ptys === undefined ? [] : await hostProgramCandidates("mount", MOUNT_LOCATIONS);
  for (const unshare of await hostProgramCandidates("unshare", UNSHARE_LOCATIONS)) {
    // With a devpts of its own where that works here, else without.
    const tries: NamespaceFront[] = [
      ...mounts.map((mount) => ({
        argv: [
          unshare,
          "--user",
          "--map-root-user",
          "--mount",
          SHELL,
          "-c",
          boundingScript(counts, { mount, ptys: ptys! }),
          "sh",
        ],
        ptys,
      })),
      { argv: [unshare, "--user", "--map-root-user", SHELL, "-c", boundingScript(counts), "sh"] },
    ];
    for (const front of tries) {
      const probe = await runProbe(
        front.argv[0],
        [
          ...front.argv.slice(1),
          bwrap,
          "--ro-bind",
          "/",
          "/",
          "--dev",
          "/dev",
          ...(front.ptys ? DEVPTS_BIND : []),
          "--unshare-all",
          ...userns,
          "--",
          "true",
        ],
        PROBE_TIMEOUT_MS,
      );
      if (probe.ok) return front;
    }
  }
  return { argv: [] };
}
