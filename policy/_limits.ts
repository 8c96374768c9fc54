/**
 * The mechanism behind `limits.ts`: finding `prlimit`, finding a cgroup the
 * server may make child groups in (cgroup v2, else the v1 `pids` and `memory`
 * hierarchies), building the argv prefix that puts a command in its group and
 * under its rlimits, and reading what the kernel says was hit.
 *
 * @module
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { hostProgramCandidates, queryRuntimePermission, runProbe } from "@toolfence/internal";

/** The limits in the units the kernel takes. */
export interface KernelLimits {
  memoryBytes: number;
  cpuSeconds: number;
  fileSizeBytes: number;
  processes: number;
  openFiles: number;
}

/**
 * A place where the server may make one child cgroup per command: v2's one
 * folder, or the v1 hierarchies where a child group can be made (`cpu`, which
 * may be mounted together with `cpuacct`, weighs a workspace's commands
 * against the others').
 */
export type CgroupRoot =
  | {
    version: 2;
    dir: string;
    /** Whether `dir` hands the `cpu` controller to its children: then each workspace's shared parent has its weight. */
    cpu: boolean;
  }
  | { version: 1; pids: string; memory?: string; cpuacct?: string; cpu?: string };

/**
 * Whether the commands of each workspace together are one share of the
 * processor against every other workspace's (their shared parent has a CPU
 * weight), however many commands and processes they run.
 */
export function sharesCpu(root: CgroupRoot): boolean {
  return root.version === 2 ? root.cpu : root.cpu !== undefined;
}

/** The folders a command's group is made in under `root`: one per hierarchy (v1 `cpu` and `cpuacct` may be one). */
export function groupHierarchies(root: CgroupRoot): string[] {
  return root.version === 2
    ? [root.dir]
    : [...new Set([root.pids, root.memory, root.cpuacct, root.cpu].filter((dir) => dir !== undefined))];
}

// The hierarchies where a command's group sits in its workspace's shared parent: those that bound (pids, memory;
// v2's one), and v1's `cpu`, where the parent's weight (cpu.shares) makes all of a workspace's commands one share of
// the processor against every other workspace's, however many processes they run. Not `cpuacct` alone, which only
// counts.
function sharedHierarchies(root: CgroupRoot): string[] {
  return root.version === 2
    ? [root.dir]
    : [...new Set([root.pids, root.memory, root.cpu].filter((dir) => dir !== undefined))];
}

const PRLIMIT_LOCATIONS = ["/usr/bin/prlimit", "/bin/prlimit", "/usr/local/bin/prlimit"];
const SHELL = "/bin/sh";
const PROBE_TIMEOUT_MS = 5_000;

let prlimitPromise: Promise<string | undefined> | undefined;

/**
 * The path of a `prlimit` (util-linux) that runs, or undefined; looked for
 * once per process, by absolute path only (see `hostProgramCandidates`).
 */
export function findPrlimit(): Promise<string | undefined> {
  prlimitPromise ??= (async () => {
    // Never the bare name nor a PATH folder inside the server's working folder: prlimit runs outside the sandbox.
    for (const file of await hostProgramCandidates("prlimit", PRLIMIT_LOCATIONS)) {
      if ((await runProbe(file, ["--version"], PROBE_TIMEOUT_MS)).ok) return file;
    }
    return undefined;
  })();
  return prlimitPromise;
}

/**
 * The exit code of a sandboxed command one of whose private tmpfs folders (`/tmp`, `/dev/shm`, the private home
 * folder) held more than `tmpSize` when it ended, from the sandbox's own check after it (see `tmpfsCheck` in
 * sandbox.ts): the exit code, because the command's process may rewrite its error output (even truncate it through
 * `/proc/self/fd/2`), never its parent's exit. Named a full tmpfs only with TMPFS_FULL_LINE: a command may exit 251.
 */
export const TMPFS_FULL_EXIT = 251;

/**
 * The line the sandbox's check after the command prints to the command's error output, last, when it exits with
 * TMPFS_FULL_EXIT (see `tmpfsCheck` in sandbox.ts). Both together name the tmpfs: a command's own `exit 251` has no
 * such line (before, it was reported as a full tmpfs). A command that hides the line (or prints one itself) still
 * ends as a failure: the exit code is never 0.
 */
export const TMPFS_FULL_LINE =
  /^toolfence: \S[^\n]* held more than sandbox\.limits\.tmpSize \(\d+ bytes\) when the command ended/m;

/** The line of the same check for a file of a private tmpfs grown past `fileSize`, with TMPFS_FULL_EXIT too. */
export const TMPFS_FILE_SIZE_LINE =
  /^toolfence: \S[^\n]* grew past sandbox\.limits\.fileSize \(\d+ bytes\) while the command ran/m;

/**
 * What a checked tmpfs may hold beyond `tmpSize`, and what the check after the command writes into it (a page of the
 * largest size, 64 KiB): the write fits only where the tmpfs holds at most `tmpSize`, so a file of exactly the limit
 * is no hit, and a write past the limit leaves too little room.
 */
export const TMPFS_SLACK_BYTES = 64 * 1024;

/** Where cgroups can be made, or why not. */
export type CgroupFinding = { root: CgroupRoot } | { reason: string };

/**
 * Why `memory` does not hold for a command here, or `undefined` where a
 * cgroup counts the tree's memory. RLIMIT_DATA counts only a process's private
 * writable mappings: shared memory (`mmap` with MAP_SHARED, memfd, System V
 * segments) passes it whatever its size (one python3 process touched 512 MiB
 * of `mmap.mmap(-1, n)` under a 64 MiB limit), and only a memory cgroup
 * charges it.
 */
export function memoryGap(root: CgroupRoot | undefined, rlimits: RlimitSetter | undefined): string | undefined {
  if (root?.version === 2 || root?.memory !== undefined) return undefined;
  const group = root === undefined ? "no cgroup" : "no memory cgroup";
  return rlimits === undefined
    ? `${group} and no rlimit`
    : `${group} counts memory: RLIMIT_DATA bounds each process's private memory only, not shared memory ` +
      "(mmap MAP_SHARED, memfd, System V segments)";
}

let cgroupPromise: Promise<CgroupFinding> | undefined;

/**
 * A cgroup the server may make child groups in, or why there is none; probed
 * once per process, which also removes the empty groups of servers that are
 * gone (see {@linkcode removeStaleGroups}). Every cgroup file is read and written by a short shell,
 * not by the server: Deno lets a program touch /proc and /sys only with
 * --allow-all, while starting /bin/sh needs only --allow-run.
 */
export function findCgroup(): Promise<CgroupFinding> {
  cgroupPromise ??= probeCgroup().then(async (finding) => {
    // Groups that killed servers left behind go once the place is known.
    if ("root" in finding) await removeStaleGroups(finding.root);
    return finding;
  }).catch((error) => ({
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
export function quote(s: string): string {
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

// Whether a child group can be made in `dir` and offers `controllers` (v2) or can be made at all (v1): why not, or
// the controllers a child offers (v2; none listed on v1).
async function childWorks(
  dir: string,
  controllers: readonly string[] | undefined,
): Promise<{ why: string } | { offered: string[] }> {
  const probe = await shell(CHILD_PROBE, dir);
  if (!probe.ok) return { why: `no child group can be made in ${dir} (${probe.text.split("\n")[0] || "refused"})` };
  const offered = probe.text.slice(probe.text.lastIndexOf(": ") + 2).trim().split(/\s+/);
  const missing = (controllers ?? []).filter((name) => !offered.includes(name));
  return missing.length === 0
    ? { offered }
    : { why: `the cgroup v2 group ${dir} does not delegate the ${missing.join(" and ")} controller to its children` };
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
    const child = await childWorks(dir, ["memory", "pids"]);
    if ("offered" in child) return { root: { version: 2, dir, cpu: child.offered.includes("cpu") } };
    reasons.push(child.why);
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
  const child = await childWorks(pids, undefined);
  if ("why" in child) {
    reasons.push(child.why);
    return { reason: reasons.join("; ") };
  }
  const works = async (dir: string | undefined) => dir !== undefined && "offered" in await childWorks(dir, undefined);
  const [memory, cpuacct, cpu] = [v1("memory"), v1("cpuacct"), v1("cpu")];
  const [memoryWorks, cpuacctWorks, cpuWorks] = await Promise.all([works(memory), works(cpuacct), works(cpu)]);
  return {
    root: {
      version: 1,
      pids,
      ...(memoryWorks ? { memory } : {}),
      ...(cpuacctWorks ? { cpuacct } : {}),
      ...(cpuWorks ? { cpu } : {}),
    },
  };
}

let groupCount = 0;

/** What the kernel counted in a command's group, read as it closes. */
export interface GroupCounters {
  /** A fork was refused for `pids.max` (or the task watch saw the machine's tasks pass the limit). */
  processes: boolean;
  /** The out-of-memory killer ended a process of the group. */
  memory: boolean;
  /** The group's processes used the CPU seconds limit (or more) in total. */
  cpu: boolean;
  /**
   * The shared parent of the workspace's commands refused a fork for its `pids.max` (cgroup v2, whose `max` event
   * the command's own group does not count when the parent's limit refused it; v1 counts it in the forking group).
   */
  sharedProcesses: boolean;
  /** The most memory the group held at once (v1 `memory.max_usage_in_bytes`, v2 `memory.peak`), where read. */
  memoryPeakBytes?: number;
}

/** One command's cgroup (one folder per hierarchy), made by the command's own first process. */
export interface CommandGroup {
  /** The shell lines that make the group and write its limits, and a watcher, where the server cannot. */
  setup: string;
  /**
   * The shell line that moves the shell itself into the group, or stops it
   * (exit 126, saying why) where the group refuses it.
   */
  attach: string;
  /** Whether the group counts the CPU of the whole tree (cgroup v2, or v1 with cpuacct), and its watch ends it there. */
  countsCpu: boolean;
  /**
   * Whether the group bounds the memory of the whole tree (cgroup v2, or v1 with a memory hierarchy): then it
   * alone judges `memory`, and the command gets no RLIMIT_DATA (see `limitCommand`).
   */
  countsMemory: boolean;
  /**
   * Starts the server's own watch of the group (where the server may read
   * its files; else the shell watcher of `setup` does it): past the process
   * or CPU limit, every process in it is killed.
   */
  watch(): void;
  /**
   * Reads what the kernel counted (a fork refused for the process limit, a
   * kill for memory, the CPU used), kills whatever is left in the group and
   * removes it: `counters` once read, `removed` once the folders are gone.
   * Where the server reads the files itself, the counters are read and
   * whatever is left is sent SIGKILL before `close` returns; only the wait
   * for the kernel to let the folders go (it unlinks an exited task a
   * moment after it is reaped) is left to `removed`.
   */
  close(): { counters: Promise<GroupCounters>; removed: Promise<void> };
}

// How often the group (or the machine's task count) is looked at.
const WATCH_MS = 200;

/**
 * The cgroup of one command under `root`: folder names and the lines that
 * make it. Once the kernel refuses a fork for the process limit, its
 * out-of-memory killer ends a process of the group, or the group's CPU time
 * reaches the limit, the watch kills every process in it (a
 * fork bomb never ends by itself, and a process killed by RLIMIT_CPU inside
 * `$(...)` is reported by nobody).
 */
export function commandGroup(root: CgroupRoot, limits: KernelLimits, share?: string): CommandGroup {
  const name = `toolfence-${process.pid}-${++groupCount}`;
  // The shared parent of the workspace's commands (see sharedHierarchies): its folder name and the folders to make
  // first, with their limits.
  const parentName = share === undefined ? undefined : sharedGroupName(share);
  const shared = sharedHierarchies(root);
  const parents = parentName === undefined ? [] : shared.map((dir) => path.join(dir, parentName));
  const within = (dir: string) => parentName !== undefined && shared.includes(dir) ? path.join(dir, parentName) : dir;
  const dirs = groupHierarchies(root).map((dir) => path.join(within(dir), name));
  const pidsDir = dirs[0];
  const memoryDir = root.version === 2 ? dirs[0] : root.memory && path.join(within(root.memory), name);
  const cpuFile = root.version === 2
    ? path.join(dirs[0], "cpu.stat")
    : root.cpuacct && path.join(within(root.cpuacct), name, "cpuacct.usage");
  const values: [string, string][] = [[path.join(pidsDir, "pids.max"), String(limits.processes)]];
  if (memoryDir) {
    values.push([
      path.join(memoryDir, root.version === 2 ? "memory.max" : "memory.limit_in_bytes"),
      String(limits.memoryBytes),
    ]);
  }
  // Swap counts to the memory limit, where the kernel accounts it (v2's memory.swap.max, v1's memsw with
  // swapaccount): without it a tree at memory.max is swapped out instead of ended, and no rlimit bounds a
  // process's private memory where the group counts memory (see `countsMemory`). Written after the limit (v1
  // refuses a memsw below limit_in_bytes); a kernel without the file keeps the command running.
  const optionalValues: [string, string][] = memoryDir
    ? [[
      path.join(memoryDir, root.version === 2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes"),
      root.version === 2 ? "0" : String(limits.memoryBytes),
    ]]
    : [];
  // TCP buffers: v2 charges a socket's buffers to the group's memory, v1 only to a counter of its own, and only once
  // its limit is written (before that the sockets made in the group are charged to nothing). Before, under `memory`
  // 256 MiB, a command queued 407 MiB on 38 loopback connections it never read and ran on: the memory was nobody's,
  // and past the machine's `net.ipv4.tcp_mem` (global, whatever the network namespace) every socket of the host would
  // be under pressure. The limit is the command's memory again (the parent's, twice it), beside its memory proper.
  if (root.version === 1 && memoryDir) {
    const tcp = "memory.kmem.tcp.limit_in_bytes";
    optionalValues.push([path.join(memoryDir, tcp), String(limits.memoryBytes)]);
    for (const parent of parents.filter((dir) => path.dirname(memoryDir) === dir)) {
      optionalValues.push([path.join(parent, tcp), String(limits.memoryBytes * SHARED_FACTOR)]);
    }
  }
  // The parents' limits: SHARED_FACTOR times the command's, in the same files, written by every command that
  // joins (the last policy's values hold). v2 hands the controllers on to the children as it makes the parent.
  const parentValues: [string, string][] = parents.flatMap((parent) =>
    values.filter(([file]) => path.dirname(path.dirname(file)) === parent).map(([file, value]) =>
      [path.join(parent, path.basename(file)), String(Number(value) * SHARED_FACTOR)] as [string, string]
    )
  );
  const pids = quote(pidsDir);
  const kill = root.version === 2
    ? `echo 1 > ${pids}/cgroup.kill`
    : `while read p; do kill -9 "$p"; done < ${pids}/cgroup.procs`;
  // The CPU budget in the unit of the file: cpu.stat's usage_usec, cpuacct.usage's nanoseconds.
  const cpuLimit = limits.cpuSeconds * (root.version === 2 ? 1e6 : 1e9);
  const cpuCheck = cpuFile === undefined
    ? ""
    : root.version === 2
    ? `while read k v; do [ "$k" = usage_usec ] && [ "$v" -ge ${cpuLimit} ] && ${kill}; done < ${quote(cpuFile)}; `
    : `read u < ${quote(cpuFile)}; [ "$u" -ge ${cpuLimit} ] && ${kill}; `;
  // The memory events: v2's memory.events, v1's memory.oom_control, each with an `oom_kill N` line.
  const memoryEvents = memoryDir && path.join(memoryDir, root.version === 2 ? "memory.events" : "memory.oom_control");
  const memoryCheck = memoryEvents === undefined
    ? ""
    : `while read k v; do [ "$k" = oom_kill ] && [ "$v" != 0 ] && ${kill}; done < ${quote(memoryEvents)}; `;
  const watch = `sleep ${WATCH_MS / 1000}; while read x < ${pids}/cgroup.procs; do ` +
    `while read k v; do [ "$k" = max ] && [ "$v" != 0 ] && ${kill}; done < ${pids}/pids.events; ` +
    `${memoryCheck}${cpuCheck}sleep ${WATCH_MS / 1000}; done`;
  // In a session of its own (setsid, where util-linux has it): in the command's
  // process group it would outlive the command's first process as an orphan,
  // and the tool waits for the whole group to be gone. It ends by itself once
  // the group is empty or removed.
  const watcher = `w=${quote(watch)}; s=; command -v setsid >/dev/null 2>&1 && s=setsid; ` +
    `$s sh -c "$w" </dev/null >/dev/null 2>&1 &`;
  // What witnesses a limit's words on the command's error output (see `hit` in limits.ts): the shared parent's fork
  // refusals (v2), and the peak of the group's memory.
  const sharedPidsEvents = root.version === 2 && parents.length > 0 ? path.join(parents[0], "pids.events") : undefined;
  const memoryPeak = memoryDir &&
    path.join(memoryDir, root.version === 2 ? "memory.peak" : "memory.max_usage_in_bytes");
  const eventFiles = [
    path.join(pidsDir, "pids.events"),
    ...(memoryEvents ? [memoryEvents] : []),
    ...(cpuFile ? [cpuFile] : []),
    ...(sharedPidsEvents ? [sharedPidsEvents] : []),
    ...(memoryPeak ? [memoryPeak] : []),
  ];
  const closeScript = [
    // Only cat's own errors go to /dev/null: the loop's stderr is what the server reads.
    `for f in ${eventFiles.map(quote).join(" ")}; do echo "== $f" >&2; cat "$f" >&2 2>/dev/null; done`,
    ...[...dirs].reverse().map((dir) =>
      `for i in 1 2 3 4 5 6 7 8 9 10; do [ -d ${quote(dir)} ] || break; rmdir ${quote(dir)} 2>/dev/null && break; ` +
      `${
        root.version === 2
          ? `echo 1 > ${quote(dir)}/cgroup.kill`
          : `while read p; do kill -9 "$p"; done < ${quote(dir)}/cgroup.procs`
      } 2>/dev/null; sleep 0.05; done`
    ),
    // The shared parent goes with its last command (the kernel refuses while another command's group is in it).
    ...parents.map((parent) => `rmdir ${quote(parent)} 2>/dev/null`),
    "true",
  ].join("\n");
  // The server makes, watches and removes the folders itself where its runtime
  // lets it (Node, Deno with --allow-all): no watcher process, and no shell to
  // make or remove the folders.
  const direct = makeParents(parents, parentValues, root.version === 2) && makeDirect(dirs, values, optionalValues);
  let timer: ReturnType<typeof setInterval> | undefined;
  const cpuUsed = (text: string) => {
    if (cpuFile === undefined) return false;
    const value = root.version === 2 ? /^usage_usec (\d+)$/m.exec(text)?.[1] : /^(\d+)$/m.exec(text)?.[1];
    return value !== undefined && Number(value) >= cpuLimit;
  };
  const processesRefused = (text: string) => /^max [1-9]/m.test(text);
  const oomKilled = (text: string) => /^oom_kill [1-9]/m.test(text);
  return {
    setup: direct ? "" : [
      ...dirs.map((dir) => {
        const parent = parents.find((p) => path.dirname(dir) === p);
        // Another command's close may remove the shared parent between its mkdir and the child's: made again.
        return parent === undefined
          ? `mkdir ${quote(dir)} || exit 126`
          : `i=0; until mkdir ${quote(dir)} 2>/dev/null; ` +
            `do mkdir ${quote(parent)} 2>/dev/null; ${
              root.version === 2 ? `echo "+memory +pids" > ${quote(path.join(parent, "cgroup.subtree_control"))}; ` : ""
            }i=$((i+1)); [ $i -lt 5 ] || exit 126; done`;
      }),
      // A parent's limit that cannot be lowered below what its commands use now keeps its value.
      ...parentValues.map(([f, v]) => `{ echo ${v} > ${quote(f)}; } 2>/dev/null`),
      ...values.map(([f, v]) => `echo ${v} > ${quote(f)} || exit 126`),
      ...optionalValues.map(([f, v]) => `[ ! -e ${quote(f)} ] || echo ${v} > ${quote(f)} || exit 126`),
    ].concat(watcher).join("\n"),
    // On v1 the shell moves its one thread through `tasks`: a move of the writer itself alone skips the kernel's
    // cgroup_threadgroup_rwsem, whose taking for writing (every write to cgroup.procs) waits for an RCU grace
    // period, 5 to 25 ms here for each command. The shell has no other thread, and what it starts inherits the
    // group. v2 has no `tasks`.
    attach: `{ ${
      dirs.map((dir) => `echo 0 > ${quote(path.join(dir, root.version === 2 ? "cgroup.procs" : "tasks"))}`).join(" && ")
    }; } || { echo "toolfence: the command could not join its cgroup, so it does not run" >&2; exit 126; }`,
    countsCpu: cpuFile !== undefined,
    countsMemory: memoryDir !== undefined,
    watch() {
      if (!direct || timer !== undefined) return;
      let busy = false;
      timer = setInterval(async () => {
        if (busy) return;
        busy = true;
        try {
          const [events, memory, cpu] = await Promise.all([
            fsp.readFile(path.join(pidsDir, "pids.events"), "utf8").catch(() => ""),
            memoryEvents ? fsp.readFile(memoryEvents, "utf8").catch(() => "") : "",
            cpuFile ? fsp.readFile(cpuFile, "utf8").catch(() => "") : "",
          ]);
          // An OOM kill ends the command too: its result is resource_limit whatever it does next, and the rest of
          // its tree ran on until it ended or timed out (31.8 s, for three 120 MiB sleepers under 256 MiB).
          if (processesRefused(events) || oomKilled(memory) || cpuUsed(cpu)) killMembers(pidsDir, root.version === 2);
        } finally {
          busy = false;
        }
      }, WATCH_MS);
      (timer as { unref?: () => void }).unref?.();
    },
    close() {
      clearInterval(timer);
      const closing = direct ? closeDirect(dirs, eventFiles, root.version === 2, parents) : undefined;
      const read = closing
        ? Promise.resolve({ text: closing.text, byShell: false })
        : shell(closeScript).then(({ text }) => ({ text, byShell: true }));
      const counters = read.then(({ text, byShell }) => {
        // The shell's output is one section per file; the direct read, the files in order.
        const section = (file: string) =>
          byShell
            ? text.split(`== ${file}\n`)[1]?.split("\n== ")[0] ?? ""
            : text.split("\u0000")[eventFiles.indexOf(file)] ?? "";
        const peak = memoryPeak !== undefined ? /^(\d+)$/m.exec(section(memoryPeak)) : null;
        return {
          processes: processesRefused(section(eventFiles[0])),
          memory: memoryEvents !== undefined && oomKilled(section(memoryEvents)),
          cpu: cpuFile !== undefined && cpuUsed(section(cpuFile)),
          sharedProcesses: sharedPidsEvents !== undefined && processesRefused(section(sharedPidsEvents)),
          ...(peak !== null ? { memoryPeakBytes: Number(peak[1]) } : {}),
        };
      });
      return { counters, removed: closing ? closing.removed : read.then(() => {}) };
    },
  };
}

/**
 * How many times a command's memory and process limits the commands of one
 * workspace share (a session's, its sub-agents', every session of a tenant):
 * one command at its limit leaves the others as much again, and sixteen at
 * once (the most a session runs) no longer hold sixteen times the limits.
 */
export const SHARED_FACTOR = 2;

// The shared parent group of each workspace's commands, by workspace: named like a command's group, so that the
// groups a killed server left behind go the same way (see removeStaleGroups).
const sharedNames = new Map<string, string>();

function sharedGroupName(share: string): string {
  let name = sharedNames.get(share);
  if (name === undefined) {
    name = `toolfence-${process.pid}-${++groupCount}`;
    sharedNames.set(share, name);
  }
  return name;
}

// Makes the shared parents that are not there yet (v2: handing the memory and pids controllers on to their
// children) and writes their limits; false where the server cannot (the shell in front does it then, or stops).
// A parent's limit that cannot be lowered below what its commands use now (another policy's, larger) keeps its
// value; a new parent's must be written.
function makeParents(parents: readonly string[], values: readonly [string, string][], unified: boolean): boolean {
  const made: string[] = [];
  try {
    for (const parent of parents) {
      try {
        fs.mkdirSync(parent);
        made.push(parent);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      if (unified) fs.writeFileSync(path.join(parent, "cgroup.subtree_control"), "+memory +pids");
    }
    for (const [file, value] of values) {
      try {
        fs.writeFileSync(file, value);
      } catch (error) {
        if (made.includes(path.dirname(file))) throw error;
      }
    }
    return true;
  } catch {
    removeParents(made);
    return false;
  }
}

// Removes the shared parents no command's group is in any more; the kernel refuses the others (EBUSY).
function removeParents(parents: readonly string[]): void {
  for (const parent of parents) {
    try {
      fs.rmdirSync(parent);
    } catch {
      // another command's group is in it, or it is gone
    }
  }
}

// Synchronous, as are the first reads and removals of closeDirect: each is one system call on a
// pseudo-file system, and each asynchronous one waited its turn in the runtime's thread pool (about
// a third of the limits' cost per command beyond their shell, measured at load 16).
// Makes the command's folders and writes its limits, then those written only where the kernel has the file
// (`optional`); false where the server cannot (the shell in front does it then, or stops).
function makeDirect(
  dirs: readonly string[],
  values: readonly [string, string][],
  optional: readonly [string, string][],
): boolean {
  const made: string[] = [];
  try {
    for (const dir of dirs) {
      fs.mkdirSync(dir);
      made.push(dir);
    }
    for (const [file, value] of values) fs.writeFileSync(file, value);
    for (const [file, value] of optional) if (fs.existsSync(file)) fs.writeFileSync(file, value);
    return true;
  } catch {
    for (const dir of made.reverse()) {
      try {
        fs.rmdirSync(dir);
      } catch {
        // gone, or left to removeStaleGroups
      }
    }
    return false;
  }
}

// The waits between removals of a busy group, about half a second in all: the kernel unlinks an exited task from
// its group a moment after the task is reaped (a millisecond or two here), and a fixed 50 ms first wait was most
// of the limits' cost in one command out of four.
const REMOVE_WAITS_MS = [1, 2, 4, 8, 16, 32, 64, 128, 250];

// The counter files' texts joined by NUL, read at once, and every folder's
// removal: tried at once, what is left in a busy one killed at once, and the
// retries left to `removed`.
function closeDirect(
  dirs: readonly string[],
  eventFiles: readonly string[],
  unified: boolean,
  parents: readonly string[],
): { text: string; removed: Promise<void> } {
  const text = eventFiles.map((file) => {
    try {
      return fs.readFileSync(file, "utf8");
    } catch {
      return "";
    }
  }).join("\u0000");
  const busy = [...dirs].reverse().filter((dir) => removeNow(dir, unified) === "busy");
  const removed = busy.reduce((before, dir) => before.then(() => removeGroup(dir, unified)), Promise.resolve());
  // The shared parent goes with its last command: the kernel refuses (EBUSY) while another command's group is in it.
  return { text, removed: removed.catch(() => {}).then(() => removeParents(parents)) };
}

// One try at removing a group folder: "gone" when it is; "busy" when the kernel says tasks are still leaving it,
// whatever is left in it sent SIGKILL before this returns; "stuck" for any other refusal, which no wait changes
// (left to removeStaleGroups).
function removeNow(dir: string, unified: boolean): "gone" | "busy" | "stuck" {
  try {
    fs.rmdirSync(dir);
    return "gone";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "gone";
    if (code !== "EBUSY") return "stuck";
    killMembers(dir, unified);
    return "busy";
  }
}

// Removes a group folder, killing what is left in it while the kernel says it is busy.
async function removeGroup(dir: string, unified: boolean): Promise<void> {
  for (const wait of REMOVE_WAITS_MS) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    if (removeNow(dir, unified) !== "busy") return;
  }
}

// Synchronously, as the rest of the group's files: one small pseudo-file, read at once.
function killMembers(dir: string, unified: boolean): void {
  try {
    if (unified) {
      fs.writeFileSync(path.join(dir, "cgroup.kill"), "1");
      return;
    }
    for (const pid of fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  } catch {
    // the group is gone, or not ours to read
  }
}

// A group of a server older than this may be removed by another server that
// sees its pid dead (it may live in another pid namespace and be about to
// move its command in).
const STALE_AFTER_MS = 60_000;
const GROUP_NAME = /^toolfence-(\d+)-\d+$/;

/**
 * Removes the groups that servers which are gone left behind (killed before
 * they could remove them) in `root`: only folders named like ours, whose
 * server's pid is not alive, that are older than a minute, and that the
 * kernel lets go (an empty group; one with processes stays). Returns how
 * many went. Needs the server to reach the cgroup files itself.
 */
export async function removeStaleGroups(root: CgroupRoot): Promise<number> {
  const parents = groupHierarchies(root);
  let removed = 0;
  for (const parent of parents) {
    let names: string[];
    try {
      names = await fsp.readdir(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = Number(GROUP_NAME.exec(name)?.[1]);
      if (!pid || pid === process.pid || isAlive(pid)) continue;
      const dir = path.join(parent, name);
      try {
        if (Date.now() - (await fsp.stat(dir)).mtimeMs < STALE_AFTER_MS) continue;
        // A workspace's shared parent: its commands' groups (the same server's) go first.
        for (const child of (await fsp.readdir(dir)).filter((entry) => GROUP_NAME.exec(entry)?.[1] === String(pid))) {
          await fsp.rmdir(path.join(dir, child)).then(() => removed++, () => {});
        }
        await fsp.rmdir(dir);
        removed++;
      } catch {
        // busy (processes left in it), gone, or not ours to remove
      }
    }
  }
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * A watch of the machine's task count (`/proc/loadavg`) for a command with no
 * cgroup, run by a user RLIMIT_NPROC does not bind (root): once the count
 * passes its value at the start plus `processes`, `end` is called. Returns the
 * stop function and whether it fired, or undefined when the server cannot
 * read the file.
 */
export async function watchTaskCount(
  processes: number,
  end: () => void,
): Promise<ReadingWatch | undefined> {
  const tasks = async () => Number((await fsp.readFile("/proc/loadavg", "utf8")).split(" ")[3]?.split("/")[1]);
  let start: number;
  try {
    start = await tasks();
  } catch {
    return undefined;
  }
  if (!Number.isFinite(start)) return undefined;
  return watchReading(tasks, start + processes, end);
}

/** A running watch: `stop` ends it, `fired` says whether it called its `end`. */
export interface ReadingWatch {
  stop(): void;
  fired(): boolean;
}

// Reads a machine-wide count every WATCH_MS and calls `end` once when it passes `bound` (a failed or undefined
// reading is skipped: the next one may succeed).
function watchReading(read: () => Promise<number | undefined>, bound: number, end: () => void): ReadingWatch {
  let fired = false;
  const timer = setInterval(() => {
    read().then((count) => {
      if (count !== undefined && count > bound && !fired) {
        fired = true;
        end();
      }
    }, () => {});
  }, WATCH_MS);
  (timer as { unref?: () => void }).unref?.();
  return { stop: () => clearInterval(timer), fired: () => fired };
}

/**
 * How many more open files the machine may hold while a command runs before
 * it is ended: half of the free part of the machine's file table
 * (`fs.file-max` less the files open at the start), or undefined where its
 * rlimits alone keep it below that (`processes` x `openFiles`: RLIMIT_NOFILE is
 * per process, and no cgroup counts open files). With the defaults a tree
 * could hold 1024 x 8192 files, past a 24 GiB machine's whole table (2.47
 * million), and once it is full every other user's open fails with ENFILE;
 * the memory cgroup does not stop it first (a file costs a few hundred bytes).
 */
export function fileTableBudget(
  processes: number,
  openFiles: number,
  table: { open: number; max: number },
): number | undefined {
  const budget = Math.floor(Math.max(0, table.max - table.open) / 2);
  return processes * openFiles > budget ? budget : undefined;
}

/** The machine's file table: files open now and `fs.file-max` (`/proc/sys/fs/file-nr`). */
export async function fileTable(): Promise<{ open: number; max: number } | undefined> {
  try {
    const [open, , max] = (await fsp.readFile("/proc/sys/fs/file-nr", "utf8")).trim().split(/\s+/).map(Number);
    return Number.isFinite(open) && Number.isFinite(max) && max > 0 ? { open, max } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A watch of the machine's open files while a command whose rlimits do not
 * bound its tree's below {@linkcode fileTableBudget} runs: once they pass
 * `start`'s count plus `budget`, `end` is called. Machine-wide, so another
 * program's burst can end the command too (it errs on the side of stopping,
 * as the task watch does). Returns the stop function and whether it fired.
 */
export function watchFileTable(start: { open: number }, budget: number, end: () => void): ReadingWatch {
  return watchReading(async () => (await fileTable())?.open, start.open + budget, end);
}

/**
 * The free bytes (for an unprivileged user) and free inodes of the file system holding `file`, and its size (blocks,
 * block size, inodes: part of its identity, see `diskFloors`), or undefined. `inodes` is undefined where the file
 * system does not count them (btrfs says 0 of 0). One system call (6 µs here), no trip through the thread pool.
 */
function freeSpace(file: string): { bytes: number; inodes?: number; size: string } | undefined {
  try {
    const info = fs.statfsSync(file);
    const bytes = info.bavail * info.bsize;
    if (!Number.isFinite(bytes)) return undefined;
    const size = `${info.blocks}:${info.bsize}:${info.files}`;
    return info.files > 0 && Number.isFinite(info.ffree) ? { bytes, inodes: info.ffree, size } : { bytes, size };
  } catch {
    return undefined;
  }
}

/** What a command starting below its file system's floor may still write: room for a cleanup (`rm`, `git gc`). */
export const DISK_SLACK = { bytes: 1 << 20, inodes: 64 };

// Each file system's floor, half of what was free when this process's first command on it started.
const floors = new Map<string, { bytes: number; inodes?: number }>();

/** The free bytes and inodes below which one folder's file system ends a command (see {@linkcode diskFloors}). */
export interface DiskFloor {
  file: string;
  bytes: number;
  inodes?: number;
}

/**
 * The floors of the file systems holding `paths` (the host folders a command writes: the workspace, the session temp
 * dir), read before the command starts: half of the bytes and inodes that were free when this process's first
 * command on that file system started, for every later command too, so that commands together leave half: a floor of
 * half of what is free at each command's own start let each command take half of what the one before it left (ten
 * commands, 1/1,024 of the disk left). A command starting below the floor may still write {@linkcode DISK_SLACK} (so
 * that a command removing files runs). Read before the spawn, not beside it: read once the command ran, under load,
 * what it wrote first (4 MiB in a few milliseconds) was already gone from the start, and a command starting below the
 * floor wrote its 4 MiB past the slack without being stopped. Undefined where the runtime may not read it (Deno's
 * `--allow-sys=statfs`) or none could be read.
 */
export function diskFloors(paths: readonly string[]): DiskFloor[] | undefined {
  if (!queryRuntimePermission("sys", "statfs").allowed) return undefined;
  const watched: DiskFloor[] = [];
  for (const file of new Set(paths)) {
    const free = freeSpace(file);
    let dev: number;
    try {
      dev = fs.statSync(file).dev;
    } catch {
      continue;
    }
    if (free === undefined) continue;
    // The file system's identity: its device and its size (a device number is reused once one is unmounted).
    const id = `${dev}:${free.size}`;
    let floor = floors.get(id);
    if (floor === undefined) {
      floor = { bytes: free.bytes / 2, ...(free.inodes !== undefined ? { inodes: free.inodes / 2 } : {}) };
      floors.set(id, floor);
    }
    watched.push({
      file,
      bytes: Math.min(floor.bytes, free.bytes - DISK_SLACK.bytes),
      ...(floor.inodes !== undefined && free.inodes !== undefined
        ? { inodes: Math.min(floor.inodes, free.inodes - DISK_SLACK.inodes) }
        : {}),
    });
  }
  return watched.length === 0 ? undefined : watched;
}

/**
 * The bytes the server may still write on the file system holding `file` before it passes its floor (see
 * {@linkcode diskFloors}; at least {@linkcode DISK_SLACK}), for a copy the server makes itself of what commands made:
 * a command's sparse files and links of one file cost it no disk, and their copy writes every byte. Undefined where
 * it cannot be read.
 */
export function diskRoom(file: string): number | undefined {
  const floor = diskFloors([file])?.[0];
  const free = freeSpace(file);
  return floor === undefined || free === undefined ? undefined : free.bytes - floor.bytes;
}

/**
 * A watch of the free space and free inodes of the file systems of `watched` (from {@linkcode diskFloors}) while a
 * command runs: once one holds less than its floor, `end` is called. No rlimit bounds the bytes or files a tree writes
 * (RLIMIT_FSIZE caps a file, not their number: 40 files of 1 MiB under a 1 MiB fileSize), and no cgroup counts a disk;
 * before, a loop of `head -c 1G` filled the host's disk, and a loop of empty files (`: > f$i`, 16,000 of a file
 * system's 20,000 inodes here) used up its inodes without a byte. Machine-wide, so another program's writes can end
 * the command too (it errs on the side of stopping, as the task watch does).
 */
export function watchDiskSpace(
  watched: readonly DiskFloor[],
  end: () => void,
): ReadingWatch & { lowest(): string | undefined } {
  // How far the emptiest file system is below a floor, as a part of that floor (positive once one is), and which
  // folder's it is.
  let lowest: string | undefined;
  const below = () => {
    let worst: number | undefined;
    for (const floor of watched) {
      const free = freeSpace(floor.file);
      if (free === undefined) continue;
      let short = (floor.bytes - free.bytes) / Math.max(floor.bytes, 1);
      if (floor.inodes !== undefined && free.inodes !== undefined) {
        short = Math.max(short, (floor.inodes - free.inodes) / Math.max(floor.inodes, 1));
      }
      if (worst !== undefined && short <= worst) continue;
      worst = short;
      if (worst > 0 && lowest === undefined) lowest = floor.file;
    }
    return Promise.resolve(worst);
  };
  return { ...watchReading(below, 0, end), lowest: () => lowest };
}

/** How the per-process rlimits are set: the shell's own `ulimit` (no exec), else `prlimit`. */
export type RlimitSetter =
  | { kind: "ulimit"; fileBlock: number; processFlag: "-u" | "-p" }
  | { kind: "prlimit"; path: string };

// Sets a few soft limits with the shell's ulimit and prints the process's
// limits: the units of -f (512 or 1024 bytes) and the flag of the process
// limit (-u in bash and busybox, -p in dash) are read back, not assumed.
const ULIMIT_PROBE = "ulimit -S -f 2 || exit 1; ulimit -S -d 8192 && ulimit -S -n 64 && ulimit -S -t 100 || exit 1; " +
  "if ulimit -S -u 77 2>/dev/null; then echo flag=-u >&2; elif ulimit -S -p 77 2>/dev/null; then echo flag=-p >&2; " +
  'else exit 1; fi; while IFS= read -r l; do echo "$l" >&2; done < /proc/self/limits';

let rlimitPromise: Promise<RlimitSetter | undefined> | undefined;

/**
 * How this machine sets rlimits for a command: the `/bin/sh` that starts it
 * (when its `ulimit` is verified to set every limit in known units), else
 * `prlimit`, else undefined. Probed once per process.
 */
export function findRlimitSetter(): Promise<RlimitSetter | undefined> {
  rlimitPromise ??= (async () => {
    const probe = await shell(ULIMIT_PROBE);
    const soft = (name: string) => new RegExp(`^${name}\\s+(\\d+)`, "m").exec(probe.text)?.[1];
    const flag = /^flag=(-[up])$/m.exec(probe.text)?.[1] as "-u" | "-p" | undefined;
    const fileBytes = Number(soft("Max file size"));
    if (
      probe.ok && flag && (fileBytes === 1024 || fileBytes === 2048) && soft("Max data size") === "8388608" &&
      soft("Max open files") === "64" && soft("Max cpu time") === "100" && soft("Max processes") === "77"
    ) {
      return { kind: "ulimit", fileBlock: fileBytes / 2, processFlag: flag };
    }
    const prlimit = await findPrlimit();
    return prlimit === undefined ? undefined : { kind: "prlimit", path: prlimit };
  })();
  return rlimitPromise;
}

/** The options of the rlimits: `withMemory: false` leaves RLIMIT_DATA out, `withCpu: false` RLIMIT_CPU. */
export interface RlimitOptions {
  withMemory: boolean;
  withCpu: boolean;
}

// The shell's ulimit commands for `limits`, joined by &&. `fileBlock` is the
// unit of -f in bytes; "bash": 512 in POSIX mode, else 1024 (bash's own rule).
// RLIMIT_NPROC counts every task of the user: the process limit is set to the
// machine's task count, the "running/total" field of /proc/loadavg in the
// variable `tasks`, plus the limit.
function ulimitChain(
  fileBlock: number | "bash",
  processFlag: "-u" | "-p",
  tasks: string,
  limits: KernelLimits,
  options: RlimitOptions,
): string {
  // Whole blocks at or past the kernel's file size (the policy's limit and a byte; see limitCommand).
  const fileSize = (block: number) => `ulimit -f ${Math.ceil(limits.fileSizeBytes / block)}`;
  return [
    fileBlock === "bash"
      ? `if shopt -oq posix; then ${fileSize(512)}; else ${fileSize(1024)}; fi`
      : fileSize(fileBlock),
    `ulimit -n ${limits.openFiles}`,
    "ulimit -c 0",
    ...(options.withMemory ? [`ulimit -d ${Math.floor(limits.memoryBytes / 1024)}`] : []),
    // SIGXCPU at the soft limit, SIGKILL two seconds later for a process that catches it.
    ...(options.withCpu ? [`ulimit -t ${limits.cpuSeconds + 2}`, `ulimit -S -t ${limits.cpuSeconds}`] : []),
    `ulimit ${processFlag} $((\${${tasks}#*/} + ${limits.processes}))`,
  ].join(" && ");
}

/**
 * Descriptors of the server that the command needs as its descriptors 3, 4,
 * ... (the sandbox's protected mounts): the shell in front opens each again
 * through `/proc/<pid>/fd/<fd>`, the very file the server holds open, so that
 * the spawn passes none. Under Deno, a spawn that passes descriptors past
 * stdio forks the whole server (a hook between fork and exec places them):
 * 7 to 8 ms per sandboxed command in a git checkout here, against 1 ms for
 * the plain spawn.
 */
export interface ReopenedDescriptors {
  /** The server's process id. */
  pid: number;
  /** The server's descriptors, in the order of the command's 3, 4, ... */
  fds: readonly number[];
}

/** The most descriptors the shell opens again: dash's redirections name descriptors 0 to 9 only. */
export const MAX_REOPENED = 7;

let reopenPromise: Promise<boolean> | undefined;

/**
 * Whether the shell in front of a command can open a descriptor of this
 * process again through `/proc/<pid>/fd` (a mounted /proc that shows this
 * process to its child, which a hardened /proc may not): probed once per
 * process, by the shell alone, on `fd`, a descriptor the caller holds open
 * (so that the probe needs no permission of the runtime's own: under Deno's
 * narrow flags this process may open little itself).
 */
export function reopensDescriptors(fd: number): Promise<boolean> {
  reopenPromise ??= shell(`command exec 3<${reopenPath({ pid: process.pid, fds: [fd] }, 0)} && [ -e /proc/self/fd/3 ]`)
    .then((outcome) => outcome.ok, () => false);
  return reopenPromise;
}

function reopenPath(reopened: ReopenedDescriptors, index: number): string {
  return `/proc/${reopened.pid}/fd/${reopened.fds[index]}`;
}

/**
 * The argv prefix for a command: a shell that moves itself into its cgroup
 * (when there is a group), ignores SIGXFSZ (so that a write past the file
 * size limit fails with `File too large`, which programs print, instead of a
 * silent kill), sets the per-process rlimits and execs the command.
 * RLIMIT_NPROC counts every task of the user, not the command's: the shell
 * sets it to the machine's task count (`/proc/loadavg`) plus the limit, so
 * that it stops a fork bomb without failing a user who already runs many
 * processes. Empty with neither a group nor a way to set rlimits.
 */
export function limitPrefix(
  setter: RlimitSetter | undefined,
  group: CommandGroup | undefined,
  limits: KernelLimits,
  options: RlimitOptions,
  reopened?: ReopenedDescriptors,
): string[] {
  if (setter === undefined && group === undefined) return [];
  if (reopened !== undefined && reopened.fds.length > MAX_REOPENED) {
    throw new RangeError(`The shell opens at most ${MAX_REOPENED} descriptors again`);
  }
  const nproc = "$((${t#*/} + " + limits.processes + "))";
  const exec = setter?.kind === "prlimit"
    ? `exec ${quote(setter.path)} --nproc=${nproc} ${
      [
        `--fsize=${limits.fileSizeBytes}`,
        `--nofile=${limits.openFiles}`,
        "--core=0",
        ...(options.withMemory ? [`--data=${limits.memoryBytes}`] : []),
        ...(options.withCpu ? [`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 2}`] : []),
      ].join(" ")
    } -- "$@"`
    : 'exec "$@"';
  const script = [
    ...(group ? [group.setup, group.attach].filter(Boolean) : []),
    "trap '' XFSZ",
    ...(setter ? ["t=0/0; read _ _ _ t _ < /proc/loadavg"] : []),
    ...(setter?.kind === "ulimit"
      ? [`${ulimitChain(setter.fileBlock, setter.processFlag, "t", limits, options)} || exit 126`]
      : []),
    ...(reopened?.fds.length
      ? [
        `command exec ${reopened.fds.map((_, i) => `${3 + i}<${reopenPath(reopened, i)}`).join(" ")} || ` +
        `{ echo "toolfence: the protected paths could not be opened again, so the command does not run" >&2; exit 126; }`,
      ]
      : []),
    exec,
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
