/**
 * The mechanism behind `limits.ts`: finding `prlimit`, finding a cgroup the
 * server may make child groups in (cgroup v2, else the v1 `pids` and `memory`
 * hierarchies), building the argv prefix that puts a command in its group and
 * under its rlimits, and reading what the kernel says was hit.
 *
 * @module
 */
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { runProbe } from "@toolfence/internal";

/** The limits in the units the kernel takes. */
export interface KernelLimits {
  memoryBytes: number;
  cpuSeconds: number;
  fileSizeBytes: number;
  processes: number;
  openFiles: number;
}

/** A place where the server may make one child cgroup per command. */
export type CgroupRoot =
  | { version: 2; dir: string }
  | { version: 1; pids: string; memory?: string };

const PRLIMIT_LOCATIONS = ["/usr/bin/prlimit", "/bin/prlimit", "/usr/local/bin/prlimit"];
const SHELL = "/bin/sh";
const PROBE_TIMEOUT_MS = 5_000;

async function isExecutable(file: string): Promise<boolean> {
  try {
    const info = await fsp.stat(file);
    return info.isFile() && (info.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

let prlimitPromise: Promise<string | undefined> | undefined;

/**
 * The path of a `prlimit` (util-linux) that runs, or undefined; looked for
 * once per process. Under a fence that hides the folders, the bare name is
 * tried: the runtime may still start it by name from PATH.
 */
export function findPrlimit(): Promise<string | undefined> {
  prlimitPromise ??= (async () => {
    let searchPath = "";
    try {
      searchPath = process.env.PATH ?? "";
    } catch {
      // Without env access only the usual locations are tried.
    }
    const dirs = searchPath.split(":").filter((d) => path.isAbsolute(d));
    const files: string[] = [];
    for (const file of [...PRLIMIT_LOCATIONS, ...dirs.map((d) => path.join(d, "prlimit"))]) {
      if (!files.includes(file) && await isExecutable(file)) files.push(file);
    }
    for (const file of [...files, "prlimit"]) {
      if ((await runProbe(file, ["--version"], PROBE_TIMEOUT_MS)).ok) return file;
    }
    return undefined;
  })();
  return prlimitPromise;
}

/** Where cgroups can be made, or why not. */
export type CgroupFinding = { root: CgroupRoot } | { reason: string };

let cgroupPromise: Promise<CgroupFinding> | undefined;

/**
 * A cgroup the server may make child groups in, or why there is none; probed
 * once per process. Every cgroup file is read and written by a short shell,
 * not by the server: Deno lets a program touch /proc and /sys only with
 * --allow-all, while starting /bin/sh needs only --allow-run.
 */
export function findCgroup(): Promise<CgroupFinding> {
  cgroupPromise ??= probeCgroup().catch((error) => ({
    reason: `the cgroup file system cannot be probed here (${(error as Error).message})`,
  }));
  return cgroupPromise;
}

// Runs a shell script; what it prints on its error output comes back.
async function shell(script: string, ...args: string[]): Promise<{ ok: boolean; text: string }> {
  const outcome = await runProbe(SHELL, ["-c", script, "sh", ...args], PROBE_TIMEOUT_MS);
  return { ok: outcome.ok, text: outcome.message };
}

/** Single quotes for the shell. */
function quote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

interface Mount {
  point: string;
  type: string;
  options: string[];
}

function parseMounts(text: string): Mount[] {
  return text.split("\n").filter(Boolean).map((line) => {
    const [, point, type, options] = line.split(" ");
    return { point: (point ?? "").replaceAll("\\040", " "), type: type ?? "", options: (options ?? "").split(",") };
  });
}

// The cgroup paths of a process by hierarchy: "" for v2, else the v1 controller names.
function parseGroups(text: string): Map<string, string> {
  const groups = new Map<string, string>();
  for (const line of text.split("\n").filter(Boolean)) {
    const [, controllers, ...rest] = line.split(":");
    const where = rest.join(":");
    if (controllers === "") groups.set("", where);
    else for (const name of (controllers ?? "").split(",")) groups.set(name, where);
  }
  return groups;
}

// Makes and removes a child group in each folder; prints the controllers each child offers.
const CHILD_PROBE = 'for d do c="$d/toolfence-probe-$$"; mkdir "$c" || exit 1; ' +
  'echo "$d: $(cat "$c/cgroup.controllers" 2>/dev/null)" >&2; rmdir "$c"; done';

// Whether a child group can be made in `dir` and offers `controllers` (v2) or can be made at all (v1).
async function childWorks(dir: string, controllers: readonly string[] | undefined): Promise<string | undefined> {
  const probe = await shell(CHILD_PROBE, dir);
  if (!probe.ok) return `no child group can be made in ${dir} (${probe.text.split("\n")[0] || "refused"})`;
  if (controllers === undefined) return undefined;
  const offered = probe.text.slice(probe.text.lastIndexOf(": ") + 2).trim().split(/\s+/);
  const missing = controllers.filter((name) => !offered.includes(name));
  return missing.length === 0
    ? undefined
    : `the cgroup v2 group ${dir} does not delegate the ${missing.join(" and ")} controller to its children`;
}

async function probeCgroup(): Promise<CgroupFinding> {
  // The shell's cgroups are the server's: a child starts in its parent's.
  const read = await shell("cat /proc/self/cgroup >&2 && echo --- >&2 && cat /proc/self/mounts >&2");
  if (!read.ok) return { reason: `/proc/self/cgroup cannot be read here (${read.text.split("\n")[0]})` };
  const [groupsText, mountsText = ""] = read.text.split("\n---\n");
  const all = parseMounts(mountsText);
  const own = parseGroups(groupsText);
  const reasons: string[] = [];
  const v2 = all.find((m) => m.type === "cgroup2");
  if (v2 !== undefined && own.has("")) {
    const dir = path.join(v2.point, own.get("")!);
    const why = await childWorks(dir, ["memory", "pids"]);
    if (why === undefined) return { root: { version: 2, dir } };
    reasons.push(why);
  } else {
    reasons.push("no cgroup v2 hierarchy is mounted");
  }
  const v1 = (name: string) => {
    const mount = all.find((m) => m.type === "cgroup" && m.options.includes(name));
    const where = own.get(name);
    return mount && where !== undefined ? path.join(mount.point, where) : undefined;
  };
  const pids = v1("pids");
  if (pids === undefined) {
    reasons.push("no cgroup v1 pids hierarchy either");
    return { reason: reasons.join("; ") };
  }
  const why = await childWorks(pids, undefined);
  if (why !== undefined) {
    reasons.push(why);
    return { reason: reasons.join("; ") };
  }
  const memory = v1("memory");
  const memoryWorks = memory !== undefined && await childWorks(memory, undefined) === undefined;
  return { root: { version: 1, pids, ...(memoryWorks ? { memory } : {}) } };
}

let groupCount = 0;

/** One command's cgroup (one folder per hierarchy), made by the command's own first process. */
export interface CommandGroup {
  /** The shell lines that make the group, write its limits and start its watcher. */
  setup: string;
  /** The shell line that moves the shell itself into the group. */
  attach: string;
  /**
   * Reads what the kernel counted (a fork refused for the process limit, a
   * kill for memory), kills whatever is left in the group and removes it.
   */
  close(): Promise<{ processes: boolean; memory: boolean }>;
}

// How often the watcher looks at the group's pids.events, in seconds.
const WATCH_SECONDS = "0.2";

/**
 * The cgroup of one command under `root`: folder names and the lines that
 * make it. Once the kernel refuses a fork for the process limit, the watcher
 * (a shell outside the group and outside the command's process group) kills
 * every process in it: a fork bomb never ends by itself.
 */
export async function commandGroup(root: CgroupRoot, limits: KernelLimits): Promise<CommandGroup> {
  const name = `toolfence-${process.pid}-${++groupCount}`;
  const dirs = root.version === 2
    ? [path.join(root.dir, name)]
    : [path.join(root.pids, name), ...(root.memory ? [path.join(root.memory, name)] : [])];
  const [pids, memory] = dirs.map(quote);
  const values: [string, string][] = root.version === 2
    ? [[path.join(dirs[0], "pids.max"), String(limits.processes)], [
      path.join(dirs[0], "memory.max"),
      String(limits.memoryBytes),
    ]]
    : [
      [path.join(dirs[0], "pids.max"), String(limits.processes)],
      ...(dirs[1]
        ? [[path.join(dirs[1], "memory.limit_in_bytes"), String(limits.memoryBytes)] as [string, string]]
        : []),
    ];
  const settings = values.map(([file, value]) => `echo ${value} > ${quote(file)}`);
  const kill = root.version === 2
    ? `echo 1 > ${pids}/cgroup.kill`
    : `while read p; do kill -9 "$p"; done < ${pids}/cgroup.procs`;
  const watch = `sleep ${WATCH_SECONDS}; while read x < ${pids}/cgroup.procs; do ` +
    `while read k v; do [ "$k" = max ] && [ "$v" != 0 ] && ${kill}; done < ${pids}/pids.events; ` +
    `sleep ${WATCH_SECONDS}; done`;
  // In a session of its own (setsid, where util-linux has it): in the command's
  // process group it would outlive the command's first process as an orphan,
  // and the tool waits for the whole group to be gone. It ends by itself once
  // the group is empty or removed.
  const watcher = `w=${quote(watch)}; s=; command -v setsid >/dev/null 2>&1 && s=setsid; ` +
    `$s sh -c "$w" </dev/null >/dev/null 2>&1 &`;
  const events = root.version === 2
    ? [`${pids}/pids.events`, `${pids}/memory.events`]
    : [`${pids}/pids.events`, ...(memory ? [`${memory}/memory.oom_control`] : [])];
  const closeScript = [
    `cat ${events.join(" ")} >&2 2>/dev/null`,
    ...[...dirs].reverse().map((dir) =>
      `for i in 1 2 3 4 5 6 7 8 9 10; do [ -d ${quote(dir)} ] || break; rmdir ${quote(dir)} 2>/dev/null && break; ` +
      `${
        root.version === 2
          ? `echo 1 > ${quote(dir)}/cgroup.kill`
          : `while read p; do kill -9 "$p"; done < ${quote(dir)}/cgroup.procs`
      } 2>/dev/null; sleep 0.05; done`
    ),
    "true",
  ].join("\n");
  // The server makes and removes the folders itself where its runtime lets it
  // (Node, Deno with --allow-all): two processes fewer per command than the shell.
  const direct = await makeDirect(dirs, values);
  const eventFiles = root.version === 2
    ? [path.join(dirs[0], "pids.events"), path.join(dirs[0], "memory.events")]
    : [path.join(dirs[0], "pids.events"), ...(dirs[1] ? [path.join(dirs[1], "memory.oom_control")] : [])];
  return {
    setup: [...(direct ? [] : [...dirs.map((dir) => `mkdir ${quote(dir)} || exit 126`), ...settings]), watcher]
      .join("\n"),
    attach: dirs.map((dir) => `echo 0 > ${quote(dir)}/cgroup.procs || exit 126`).join("\n"),
    async close() {
      const text = (direct ? await closeDirect(dirs, eventFiles, root.version === 2) : undefined) ??
        (await shell(closeScript)).text;
      const count = (key: string) =>
        text.split("\n").some((line) => line.startsWith(`${key} `) && Number(line.slice(key.length + 1)) > 0);
      return { processes: count("max"), memory: count("oom_kill") };
    },
  };
}

async function makeDirect(dirs: readonly string[], values: readonly [string, string][]): Promise<boolean> {
  const made: string[] = [];
  try {
    for (const dir of dirs) {
      await fsp.mkdir(dir);
      made.push(dir);
    }
    for (const [file, value] of values) await fsp.writeFile(file, value);
    return true;
  } catch {
    for (const dir of made.reverse()) await fsp.rmdir(dir).catch(() => {});
    return false;
  }
}

const REMOVE_TRIES = 10;
const REMOVE_WAIT_MS = 50;

// The counters, then every folder gone (what is left in it killed first); undefined when fs refuses.
async function closeDirect(
  dirs: readonly string[],
  eventFiles: readonly string[],
  unified: boolean,
): Promise<string | undefined> {
  try {
    const text = (await Promise.all(eventFiles.map((file) => fsp.readFile(file, "utf8").catch(() => "")))).join("\n");
    for (const dir of [...dirs].reverse()) {
      for (let attempt = 0; attempt < REMOVE_TRIES; attempt++) {
        try {
          await fsp.rmdir(dir);
          break;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "ENOENT") break;
          if (code !== "EBUSY") throw error;
          await killMembers(dir, unified);
          await new Promise((resolve) => setTimeout(resolve, REMOVE_WAIT_MS));
        }
      }
    }
    return text;
  } catch {
    return undefined;
  }
}

async function killMembers(dir: string, unified: boolean): Promise<void> {
  if (unified) {
    await fsp.writeFile(path.join(dir, "cgroup.kill"), "1").catch(() => {});
    return;
  }
  const text = await fsp.readFile(path.join(dir, "cgroup.procs"), "utf8").catch(() => "");
  for (const pid of text.split("\n").filter(Boolean).map(Number)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/**
 * The argv prefix for a command: a shell that makes its cgroup and moves
 * itself in (when there is a group), then `prlimit` with the per-process
 * limits. `withMemory: false` leaves RLIMIT_DATA out and `withCpu: false`
 * RLIMIT_CPU. RLIMIT_NPROC counts every task of the user, not the command's:
 * the shell sets it to the machine's task count (`/proc/loadavg`) plus the
 * limit, so that it stops a fork bomb without failing a user who already runs
 * many processes. Empty with neither a group nor prlimit.
 */
export function limitPrefix(
  prlimit: string | undefined,
  group: CommandGroup | undefined,
  limits: KernelLimits,
  options: { withMemory: boolean; withCpu: boolean },
): string[] {
  if (prlimit === undefined && group === undefined) return [];
  const rlimits = prlimit === undefined ? [] : [
    `--fsize=${limits.fileSizeBytes}`,
    `--nofile=${limits.openFiles}`,
    "--core=0",
    ...(options.withMemory ? [`--data=${limits.memoryBytes}`] : []),
    // SIGXCPU at the soft limit, SIGKILL two seconds later for a process that catches it.
    ...(options.withCpu ? [`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 2}`] : []),
  ];
  const script = [
    ...(group ? [group.setup, group.attach] : []),
    ...(prlimit === undefined ? ['exec "$@"'] : [
      "t=0/0; read _ _ _ t _ < /proc/loadavg",
      `exec ${quote(prlimit)} --nproc=$((\${t#*/} + ${limits.processes})) ${rlimits.join(" ")} -- "$@"`,
    ]),
  ].join("\n");
  return [SHELL, "-c", script, "sh"];
}

const sizeSupport = new Map<string, Promise<boolean>>();

/** Whether this bubblewrap takes `--size` for a tmpfs (0.7 and later); probed once per bwrap. */
export function tmpfsSizeSupported(bwrap: string): Promise<boolean> {
  let known = sizeSupport.get(bwrap);
  if (known === undefined) {
    known = runProbe(
      bwrap,
      ["--ro-bind", "/", "/", "--size", "1048576", "--tmpfs", "/tmp", "--unshare-all", "--", "true"],
      PROBE_TIMEOUT_MS,
    ).then((outcome) => outcome.ok);
    sizeSupport.set(bwrap, known);
  }
  return known;
}
