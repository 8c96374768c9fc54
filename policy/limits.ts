/**
 * Resource limits of every process the tools start (shell commands, jobs,
 * checkers, the browser): memory, CPU time, file size, processes, open files,
 * and the size of the sandbox's private tmpfs folders. Where the server may make a
 * child cgroup (v2, else the v1 `pids` and `memory` hierarchies) the process
 * and memory limits hold for the command's whole tree; the per-process
 * limits are rlimits, set by a shell's own `ulimit` (under bubblewrap, the
 * command's own shell, inside) or by `prlimit`. A
 * command that hits one ends with `resource_limit`, naming the limit.
 *
 * @module
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import process from "node:process";
import { queryRuntimePermission } from "@toolfence/internal";
import { sizeBytes } from "./_size.ts";
import { PolicyRules } from "./config/rules.ts";
import type { ResourceLimitsInput } from "./config/schema.ts";
import { policySettings } from "./config/settings.ts";
import {
  type CgroupFinding,
  type CommandGroup,
  commandGroup,
  diskFloors,
  fileTable,
  fileTableBudget,
  findCgroup,
  findRlimitSetter,
  type GroupCounters,
  limitPrefix,
  MAX_REOPENED,
  memoryGap,
  reopensDescriptors,
  type RlimitSetter,
  SHARED_FACTOR,
  sharesCpu,
  TMPFS_FILE_SIZE_LINE,
  TMPFS_FULL_EXIT,
  TMPFS_FULL_LINE,
  tmpfsSizeSupported,
  watchDiskSpace,
  watchFileTable,
  watchTaskCount,
} from "./_limits.ts";

/** The name of a limit, as the policy file writes it under `sandbox.limits`. */
export type LimitName = "memory" | "cpuSeconds" | "fileSize" | "processes" | "openFiles" | "tmpSize";

/** The resource limits in force, resolved to numbers. */
export interface ResourceLimits {
  /** Memory of the command: the cgroup's memory of the tree (swap included), else RLIMIT_DATA of each process. */
  memoryBytes: number;
  /** CPU seconds of the command: its whole tree where a cgroup counts them, else each process (SIGXCPU). */
  cpuSeconds: number;
  /** The largest file a process may write (SIGXFSZ). */
  fileSizeBytes: number;
  /** Processes and threads of the command (the cgroup's pids.max; RLIMIT_NPROC beside it). */
  processes: number;
  /** Open files of each process (RLIMIT_NOFILE). */
  openFiles: number;
  /** The size of each private tmpfs of the sandbox: `/tmp`, `/dev/shm`, the home folder. */
  tmpBytes: number;
}

const GiB = 1024 ** 3;

/**
 * The defaults: 4 GiB of memory, 120 CPU seconds a process, files up to
 * 1 GiB, 1024 processes and threads, 8192 open files, a 1 GiB `/tmp` (see
 * docs/sandbox.md for why).
 */
export const DEFAULT_RESOURCE_LIMITS: Readonly<ResourceLimits> = Object.freeze({
  memoryBytes: 4 * GiB,
  cpuSeconds: 120,
  fileSizeBytes: GiB,
  processes: 1024,
  openFiles: 8192,
  tmpBytes: GiB,
});

function bytesOf(name: LimitName, size: number | string | undefined, fallback: number): number {
  if (size === undefined) return fallback;
  const bytes = sizeBytes(size);
  if (bytes === undefined) throw new TypeError(`sandbox.limits.${name}: ${JSON.stringify(size)} is not a size`);
  return bytes;
}

function countOf(name: LimitName, count: number | undefined, fallback: number): number {
  if (count === undefined) return fallback;
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new TypeError(`sandbox.limits.${name}: ${count} is not a positive whole number`);
  }
  return count;
}

/**
 * The limits for `input` (the policy file's `sandbox.limits`), the defaults
 * where it says nothing. Throws a TypeError for a value that is not a size
 * or a positive whole number.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { resourceLimits } from "@toolfence/policy";
 * console.log(resourceLimits({ memory: "2GiB", cpuSeconds: 30 }).memoryBytes); // 2147483648
 * ```
 */
export function resourceLimits(input: ResourceLimitsInput = {}): ResourceLimits {
  const d = DEFAULT_RESOURCE_LIMITS;
  return {
    memoryBytes: bytesOf("memory", input.memory, d.memoryBytes),
    cpuSeconds: countOf("cpuSeconds", input.cpuSeconds, d.cpuSeconds),
    fileSizeBytes: bytesOf("fileSize", input.fileSize, d.fileSizeBytes),
    processes: countOf("processes", input.processes, d.processes),
    openFiles: countOf("openFiles", input.openFiles, d.openFiles),
    tmpBytes: bytesOf("tmpSize", input.tmpSize, d.tmpBytes),
  };
}

const byRules = new WeakMap<PolicyRules, ResourceLimits>();

/**
 * The limits of a session's policy: its policy files' `sandbox.limits` over
 * the defaults; the defaults for a policy without rules.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { limitsOfPolicy, PolicyRules } from "@toolfence/policy";
 * const rules = PolicyRules.fromLayers([{ name: "project", config: { sandbox: { limits: { processes: 64 } } } }], "/w");
 * console.log(limitsOfPolicy({ rules }).processes); // 64
 * ```
 */
export function limitsOfPolicy(policy: object): ResourceLimits {
  const rules = (policy as { rules?: unknown }).rules;
  if (!(rules instanceof PolicyRules)) return { ...DEFAULT_RESOURCE_LIMITS };
  let limits = byRules.get(rules);
  if (limits === undefined) {
    limits = resourceLimits(policySettings(rules).limits);
    byRules.set(rules, limits);
  }
  return limits;
}

/** How a size reads in a message: the largest binary unit it is a whole number of. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [["TiB", 1024 ** 4], ["GiB", GiB], ["MiB", 1024 ** 2], ["KiB", 1024]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return `${bytes}B`;
}

/** The value of one limit as the messages say it (`2GiB`, `30 s`, `512`). */
export function limitValue(limits: ResourceLimits, name: LimitName): string {
  switch (name) {
    case "memory":
      return formatBytes(limits.memoryBytes);
    case "cpuSeconds":
      return `${limits.cpuSeconds} s`;
    case "fileSize":
      return formatBytes(limits.fileSizeBytes);
    case "processes":
      return String(limits.processes);
    case "openFiles":
      return String(limits.openFiles);
    case "tmpSize":
      return formatBytes(limits.tmpBytes);
  }
}

/** How the limits are enforced here. */
export interface LimitsState {
  /**
   * `cgroup2` or `cgroup1`: a child cgroup per command holds its processes
   * and memory, and rlimits the rest; `rlimits`: only `prlimit`; `none`:
   * neither works here.
   */
  mechanism: "cgroup2" | "cgroup1" | "rlimits" | "none";
  /** The limits in force. */
  limits: ResourceLimits;
  /** The limits that do not hold here, each with why. */
  gaps: { limit: LimitName | "disk"; reason: string }[];
  /** Why no cgroup is used, when none is. */
  cgroupReason?: string;
  /** One line for a log or a model. */
  summary: string;
}

function isRoot(): boolean {
  try {
    return process.getuid?.() === 0;
  } catch {
    return false;
  }
}

/**
 * How `limits` hold on this machine: detects (once per process) a cgroup the
 * server may make child groups in, and `prlimit`.
 *
 * Requires `--allow-read=/proc,/sys/fs/cgroup,/usr/bin` and
 * `--allow-write=/sys/fs/cgroup` for the cgroup (without them the state says
 * rlimits only).
 *
 * @example
 * ```ts
 * import { DEFAULT_RESOURCE_LIMITS, limitsState } from "@toolfence/policy";
 * console.log((await limitsState(DEFAULT_RESOURCE_LIMITS)).summary);
 * ```
 */
export async function limitsState(limits: ResourceLimits, sandboxed = true): Promise<LimitsState> {
  return describe(limits, sandboxed, await mechanism());
}

/**
 * {@linkcode limitsState} when the mechanism is already known in this
 * process (after a first `limitsState` or command), else `undefined`.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { DEFAULT_RESOURCE_LIMITS, knownLimitsState, limitsState } from "@toolfence/policy";
 * await limitsState(DEFAULT_RESOURCE_LIMITS);
 * console.log(knownLimitsState(DEFAULT_RESOURCE_LIMITS)?.mechanism);
 * ```
 */
export function knownLimitsState(limits: ResourceLimits, sandboxed = true): LimitsState | undefined {
  return settledMechanism && describe(limits, sandboxed, settledMechanism);
}

interface Mechanism {
  cgroup: CgroupFinding;
  rlimits: RlimitSetter | undefined;
  /** Whether the server reads /proc/loadavg (the task watch where RLIMIT_NPROC does not bind). */
  taskWatch: boolean;
}

let settledMechanism: Mechanism | undefined;
let mechanismPromise: Promise<Mechanism> | undefined;

// Found once per process, as its parts are: each command asks for it, and reading /proc/loadavg again
// for every one cost several trips through the runtime's thread pool.
function mechanism(): Promise<Mechanism> {
  mechanismPromise ??= Promise.all([
    findCgroup(),
    findRlimitSetter(),
    fsp.readFile("/proc/loadavg", "utf8").then((text) => /^\S+ \S+ \S+ \d+\/\d+ /.test(text), () => false),
  ]).then(([cgroup, rlimits, taskWatch]) => settledMechanism = { cgroup, rlimits, taskWatch });
  return mechanismPromise;
}

function describe(limits: ResourceLimits, sandboxed: boolean, { cgroup, rlimits, taskWatch }: Mechanism): LimitsState {
  const root = "root" in cgroup ? cgroup.root : undefined;
  const gaps: LimitsState["gaps"] = [];
  if (rlimits === undefined) {
    for (const limit of ["cpuSeconds", "fileSize", "openFiles"] as const) {
      gaps.push({ limit, reason: "neither the shell's ulimit nor prlimit (util-linux) sets rlimits here" });
    }
  } else if (!(root?.version === 2 || root?.cpuacct)) {
    gaps.push({
      limit: "cpuSeconds",
      reason: "no cgroup counts the CPU of the tree: it holds per process (RLIMIT_CPU), and a process it " +
        "ends inside $(...) or a pipeline is reported only when its parent says so",
    });
  }
  const tasks = isRoot() ? (taskWatch ? "watched" : "none") : "rlimit";
  const memory = memoryGap(root, rlimits);
  if (memory !== undefined) gaps.push({ limit: "memory", reason: memory });
  if (root === undefined) {
    if (rlimits === undefined || tasks === "none") {
      gaps.push({
        limit: "processes",
        reason: rlimits === undefined
          ? "neither a cgroup nor an rlimit"
          : "root is exempt from RLIMIT_NPROC and the server cannot read /proc/loadavg",
      });
    }
  }
  if (!taskWatch) {
    // The same /proc the task watch reads holds the file table the open-files watch reads.
    gaps.push({
      limit: "openFiles",
      reason: "it holds per process only: the server cannot read /proc to watch the machine's file table, so a " +
        "command's processes together may hold processes x openFiles files",
    });
  }
  if (!sandboxed) gaps.push({ limit: "tmpSize", reason: "commands run without bubblewrap, so /tmp is shared" });
  if (!queryRuntimePermission("sys", "statfs").allowed) {
    gaps.push({
      limit: "disk",
      reason: "the runtime may not read the free space of the workspace's disk (--allow-sys=statfs), so nothing " +
        "ends a command that would fill it",
    });
  }
  const mechanism = root ? (root.version === 2 ? "cgroup2" : "cgroup1") : rlimits ? "rlimits" : "none";
  const setter = rlimits?.kind === "ulimit" ? "the shell's ulimit" : "prlimit";
  const how = root
    ? `a cgroup ${root.version === 2 ? "v2" : "v1"} group per command (processes${
      root.version === 2 || root.memory ? ", memory" : ""
    }${root.version === 2 || root.cpuacct ? ", CPU" : ""} of the whole tree${
      sharesCpu(root) ? "; each workspace's commands together one share of the processor" : ""
    }) and rlimits`
    : rlimits
    ? `rlimits (${setter})${
      tasks === "watched"
        ? "; root is exempt from RLIMIT_NPROC, so a command is ended once the machine's task count passes its " +
          "count at the start plus the process limit"
        : ""
    }`
    : "nothing";
  const values = (["memory", "cpuSeconds", "fileSize", "processes", "openFiles", "tmpSize"] as const)
    .map((name) => `${name} ${limitValue(limits, name)}`).join(", ");
  const summary = `Resource limits (${how}): ${values}; a command past one fails with resource_limit.` +
    (gaps.length ? ` Not enforced here: ${gaps.map((g) => `${g.limit} (${g.reason})`).join(", ")}.` : "");
  return {
    mechanism,
    limits,
    gaps,
    ...("reason" in cgroup ? { cgroupReason: cgroup.reason } : {}),
    summary,
  };
}

/** A limit a command hit, and what showed it. */
export interface LimitHit {
  /**
   * Which limit: one of the policy file's, or `disk`, the free space and inodes of the file systems it writes on the
   * host (the workspace, the session temp dir), which it may not take below half of what they had at its start.
   */
  limit: LimitName | "disk";
  /** Its value, as the message says it. */
  value: string;
  /** What showed it: the signal, the exit code, the cgroup's counter, or the error line. */
  evidence: string;
}

/** What `tmpfsAtEnd` (sandbox.ts) found as a sandbox was ended: a folder over `tmpSize`, or a file of one grown past `fileSize`. */
export interface TmpfsAtEnd {
  /** The private tmpfs folder that held more than the limit. */
  tmpfsOver?: string;
  /** The file of one grown past the file size limit, as the command saw it (`/tmp/x`). */
  grownFile?: string;
}

/** A command under its limits, from {@linkcode limitCommand}. */
export interface LimitedCommand {
  /**
   * The argv to start: a shell that moves itself into the command's cgroup,
   * sets the rlimits and execs the command (for a sandboxed command,
   * bubblewrap, so that bubblewrap's own processes are in the group and
   * under the rlimits too).
   */
  argv: string[];
  /**
   * Starts the watch of the started command: the server kills its group once
   * the kernel refused a fork for the process limit (a fork bomb never ends
   * by itself), its out-of-memory killer ended a process of the group, or the
   * group used its CPU seconds; without a group, as root,
   * `end` is called once the machine's task count passes the process limit;
   * with or without one, once the machine's open files grew by half of its
   * free file table where the rlimits would let the tree hold more.
   */
  watch(end: () => void): void;
  /**
   * The limit the ended command hit, judged from its end, its cgroup's
   * counters (read by `counted()` or `release()`: await one first) and its
   * error output, read through the descriptor `stderrFile` gives (the process
   * door's, of the very file it made: never by a path the command could make a link), and the files it wrote
   * (`written`: one larger than the file size limit met the kernel's RLIMIT_FSIZE, set just past the limit, whatever
   * the command printed). `ended`: what the sandbox's private tmpfs folders held as the command was ended from outside
   * (see `tmpfsAtEnd` in sandbox.ts), where the check after it never ran: a folder over `tmpSize`, a file of one grown
   * past `fileSize`.
   */
  hit(
    exit: { code: number | null; signal: string | null },
    stderrFile?: () => number,
    written?: readonly WrittenFile[],
    ended?: TmpfsAtEnd,
  ): Promise<LimitHit | undefined>;
  /**
   * Starts the release (see `release()`) and resolves once the cgroup's
   * counters are read and whatever was left in it is sent SIGKILL, before
   * its folders are gone: what a result waits for, so that the kernel's
   * unlinking of exited tasks (which keeps the folders busy a moment) does
   * not delay it. The removal goes on; {@linkcode groupsRemoved} waits for it.
   */
  counted(): Promise<void>;
  /** Reads the cgroup's counters, kills what is left in it and removes it; call once the command is gone. */
  release(): Promise<void>;
  /**
   * Of `options.descriptors`, those the spawn must still pass as the
   * command's descriptors 3, 4, ...: none where the shell in front opens
   * them again itself (see {@linkcode LimitCommandOptions.descriptors}).
   */
  descriptors: readonly number[];
}

/** A file a command created or grew, as {@linkcode LimitedCommand.hit} reads it. */
export interface WrittenFile {
  /** Its path, as the message shows it. */
  path: string;
  /** Its size after the command, in bytes. */
  size: number;
}

/** Options of {@linkcode limitCommand}. */
export interface LimitCommandOptions {
  /** Whether the command runs with the sandbox's private, size-capped `/tmp`. */
  privateTmp: boolean;
  /**
   * Whether the sandbox checks its private tmpfs folders once the command ends (`SandboxedCommand.tmpfsFolders`): its
   * exit code TMPFS_FULL_EXIT, with the check's line (TMPFS_FULL_LINE) in its error output, then says one held more
   * than `tmpSize`, whatever the command printed. The exit code alone is the command's own (`exit 251`).
   */
  tmpfsChecked?: boolean;
  /**
   * `browser`: leave out the per-process memory and CPU rlimits (Chromium
   * reserves far more address space than it uses, and lives for a session).
   */
  profile?: "command" | "browser";
  /**
   * false: no cgroup, rlimits only (for a process that outlives any one call,
   * like the browser of a session, whose group nobody would remove).
   */
  cgroup?: boolean;
  /**
   * Descriptors of this process the command gets as its descriptors 3, 4,
   * ... (a sandbox's protected mounts). Where there is a shell in front, it
   * opens them again through `/proc/<pid>/fd` (at most 7, where /proc lets
   * it), so that the spawn need not pass them: under Deno a spawn that
   * passes descriptors forks the whole server, several milliseconds. Keep
   * them open until the command has started its sandbox; `descriptors` of
   * the result says which the spawn must still pass.
   */
  descriptors?: readonly number[];
  /**
   * The host folders the command writes (the workspace, the session temp dir): it is ended once a file system
   * holding one of them has less than half of the free space or inodes it had when the first command on it started
   * (see `diskFloors`, read as limitCommand returns, before the command starts).
   */
  disks?: readonly string[];
  /**
   * The workspace (its real path) whose commands share a parent cgroup
   * bounded at twice `memory` and `processes`
   * (where there is a cgroup): a session's commands, its sub-agents' and
   * every session of a tenant together, not only each command. Without it,
   * the command's group sits alone under the server's.
   */
  share?: string;
}

const STDERR_TAIL_BYTES = 64 * 1024;
// The largest unit a shell's `ulimit -f` counts in: the kernel's file size is at most this past the limit.
const MAX_FILE_BLOCK = 1024;

// Error lines that show a limit: the kernel's refusals as programs print them
// (ENOMEM, EAGAIN on fork, EMFILE, ENOSPC) and the shell's words for the
// signals. They count even when the command went on and exited 0
// (`echo $(yes) | wc -c`): its output is not what it would have been.
// The words of the open files and tmpfs limits (EMFILE, ENOSPC) are also what the kernel answers when a sandbox has
// used its share of inotify instances and watches or of pseudo-terminals (policy/_kernel_objects.ts), which no
// setting of sandbox.limits raises: a line that names those is not read as either limit. Before, a command past its
// 384 pseudo-terminals (48 now) was told it "hit the size of a private tmpfs (sandbox.limits.tmpSize = 4MiB): OSError: [Errno
// 28] No space left on device: '/dev/ptmx'" with /tmp empty, and one past its 16 inotify instances, through Node's
// `EMFILE: too many open files, watch`, that it hit the open files limit.
const KERNEL_OBJECT_WORDS =
  /inotify|fanotify|file watchers?|, watch\b|\bwatch '|\/dev\/ptmx|\/dev\/pts|pseudo-?terminal|\bptys?\b|openpty|forkpty|posix_openpt/i;

const HINTS: { limit: LimitName; pattern: RegExp; unless?: RegExp }[] = [
  // SIGXFSZ is ignored in every command (see limitPrefix), so a write past the limit fails with EFBIG.
  // Node and libuv spell errors in lower case after their code (`EFBIG: file too large, write`), or by the code
  // alone (`code: 'EFBIG'`, `spawn sleep EMFILE`): before, each of these ended as a success after `; echo done`.
  { limit: "fileSize", pattern: /File size limit exceeded|File too large|(?:code: '|spawn \S+ )EFBIG\b/i },
  { limit: "cpuSeconds", pattern: /CPU time limit exceeded/ },
  {
    limit: "memory",
    pattern: new RegExp(
      [
        // bash: `xmalloc: cannot allocate N bytes`, `xrealloc: subst.c:42: cannot allocate N bytes` (before, the
        // pattern read `x(?:re)?malloc`, which no bash prints for xrealloc: `x=$x$x` grown ended as command_failed)
        "\\bx(?:m|re)alloc:[^\\n]*cannot allocate",
        // strerror(ENOMEM): coreutils, sort, most C programs; jq in lower case (`error: cannot allocate memory`,
        // before unread: under RLIMIT_DATA alone `... | jq -R . > out; echo done` ended as a success)
        "[Cc]annot allocate memory",
        // git's xmalloc (`fatal: Out of memory, realloc failed`: before, command_failed with the limit unnamed)
        "Out of memory, (?:m|re|c)alloc failed",
        "(?:code: '|spawn \\S+ )ENOMEM\\b|ENOMEM: not enough memory", // Node, libuv
        // the JVM: its heap or a thread stack refused (its fatal report goes to stdout, this warning to stderr)
        "os::commit_memory\\([^\\n]*\\(errno=12\\)|insufficient memory for the Java Runtime Environment",
        "memory exhausted", // gnulib's xalloc_die: awk, grep, sed, diff
        // V8 (Node, Deno); the last two, newer V8's, when a worker's heap or a page cannot be reserved
        // ("Fatal process OOM in AlignedAlloc": one run in 13 of node's workers under the memory limit was a success)
        "Fatal process out of memory|JavaScript heap out of memory|Fatal javascript OOM|Fatal process OOM",
        // V8's ArrayBuffer whose backing store is refused (`new Uint8Array(n)` in a loop, Node or Deno): before, a
        // success after `; echo done`, 20 of 20 runs of Deno's under 1 GiB
        "RangeError: Array buffer allocation failed",
        // V8's heap OOM report, whose first line alone was printed before the process died of SIGSEGV (2 runs in 100
        // of node's 200 workers under 256 MiB ended as a success)
        "^<--- Last few GCs --->",
        // Node's worker whose thread the kernel refuses (EAGAIN from pthread_create: its stack is private writable
        // memory, which RLIMIT_DATA counts; a refused task where a cgroup counts them is seen by its counter first)
        "Worker initialization failure: (?:EAGAIN|ENOMEM)|^Error: (?:EAGAIN|ENOMEM)\\n\\s+at new Worker",
        // Python: a thread's stack is private writable memory, which RLIMIT_DATA counts (a refusal of the process
        // limit where a cgroup counts tasks is seen by its counter first)
        "can't start new thread",
        "std::bad_alloc", // C++
        "MemoryError", // Python
        "^Out of memory!|^Out of memory in perl:", // Perl (the second from 5.38 on)
        "runtime: out of memory", // Go
        "memory allocation of \\d+ bytes failed", // Rust
        "failed to allocate memory \\(NoMemoryError\\)", // Ruby
        "java\\.lang\\.OutOfMemoryError", // the JVM
      ].join("|"),
      "m",
    ),
  },
  {
    limit: "processes",
    pattern: /(?:fork|clone|thread|spawn)[^\n]*Resource temporarily unavailable|Cannot fork|spawn \S+ EAGAIN\b/i,
  },
  {
    limit: "openFiles",
    pattern: /Too many open files|(?:code: '|spawn \S+ )E[MN]FILE\b/gi,
    unless: KERNEL_OBJECT_WORDS,
  },
  {
    limit: "tmpSize",
    pattern: /No space left on device|(?:code: '|spawn \S+ )ENOSPC\b/gi,
    unless: KERNEL_OBJECT_WORDS,
  },
];

const SIGNALS: Record<string, LimitName> = { SIGXCPU: "cpuSeconds", SIGXFSZ: "fileSize" };
// A shell (and bubblewrap) reports a child killed by signal N as exit 128 + N.
const SIGNAL_EXITS: Record<number, [LimitName, string]> = {
  152: ["cpuSeconds", "SIGXCPU"],
  153: ["fileSize", "SIGXFSZ"],
};

// Synchronously: at most 64 KiB of a file just written, where each asynchronous step (open, stat, read,
// close) waited its turn in the runtime's thread pool after every command. `open` gives the descriptor of the very
// file the process door made (never a link put in its place: the command may write the folder it lies in, and the
// line around a hint's match is shown).
function stderrTail(open: () => number): string {
  try {
    const fd = open();
    try {
      const { size } = fs.fstatSync(fd);
      const start = Math.max(0, size - STDERR_TAIL_BYTES);
      const buffer = new Uint8Array(size - start);
      const read = fs.readSync(fd, buffer, 0, buffer.length, start);
      return new TextDecoder().decode(buffer.subarray(0, read));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return "";
  }
}

// The removals of command groups still under way (see LimitedCommand.counted).
const removals = new Set<Promise<void>>();

/**
 * Resolves once every command group whose removal has started is gone (or
 * given up on): a session waits for it as it closes, so that no group of a
 * finished command outlives it. A removal takes a few milliseconds, at most
 * about half a second while the kernel keeps a group busy.
 *
 * @example
 * ```ts
 * import { DEFAULT_RESOURCE_LIMITS, groupsRemoved, limitCommand } from "@toolfence/policy";
 * const limited = await limitCommand(["true"], DEFAULT_RESOURCE_LIMITS, { privateTmp: false });
 * await limited.counted();
 * await groupsRemoved();
 * ```
 */
export async function groupsRemoved(): Promise<void> {
  while (removals.size > 0) await Promise.all(removals);
}

/**
 * Puts `argv` under `limits`: a cgroup of its own where one can be made (see
 * {@linkcode limitsState}), and `prlimit`'s rlimits. With neither, `argv`
 * comes back as is (the state says so). The cgroup's folders are made now:
 * call `release()` once the command is gone, or if it never starts.
 *
 * Requires `--allow-run=prlimit,sh`, and for the cgroup
 * `--allow-read=/proc,/sys/fs/cgroup` and `--allow-write=/sys/fs/cgroup`.
 *
 * @example
 * ```ts
 * import { DEFAULT_RESOURCE_LIMITS, limitCommand } from "@toolfence/policy";
 * const limited = await limitCommand(["bash", "-c", "ls"], DEFAULT_RESOURCE_LIMITS, { privateTmp: false });
 * console.log(limited.argv);
 * await limited.release();
 * ```
 */
export async function limitCommand(
  argv: readonly string[],
  limits: ResourceLimits,
  options: LimitCommandOptions,
): Promise<LimitedCommand> {
  const { cgroup, rlimits, taskWatch } = await mechanism();
  const group: CommandGroup | undefined = "root" in cgroup && options.cgroup !== false
    ? commandGroup(cgroup.root, limits, options.share)
    : undefined;
  // Where the group counts the tree's CPU, it alone judges the limit, and RLIMIT_CPU is a backstop a second
  // later. At the limit itself, the rlimit (charged by the scheduler's tick) ended a lone loop just before the
  // group had counted the limit, and a loop inside $(...) ended with nobody saying so: the call passed.
  // RLIMIT_FSIZE one byte past the limit (one block past it where the shell's ulimit counts in blocks): a write past
  // the limit then leaves a file larger than it, which `hit` sees in the files the command wrote whatever the command
  // printed. At the limit itself, a write refused with its error discarded (`2>/dev/null`, `2>&1 | tail -1`) or
  // printed in no words of HINTS (tar's `Wrote only 2048 of 10240 bytes`) left a file cut at exactly the limit and a
  // call that passed; a file of exactly the limit is written whole, and is no hit.
  const kernel = {
    ...limits,
    fileSizeBytes: limits.fileSizeBytes + 1,
    ...(group?.countsCpu ? { cpuSeconds: limits.cpuSeconds + 1 } : {}),
  };
  const browser = options.profile === "browser";
  // Where the group bounds the tree's memory, it alone judges `memory`: no RLIMIT_DATA. The rlimit refused an
  // allocation with ENOMEM before the group filled, and most programs die of that without a word that says memory
  // (sed read a 600 MB line as the end of its input and printed nothing, exit 0; python3, perl and node with their
  // error output discarded exited 1, 12 and 1 as plain failures): the group's OOM kill is seen and named.
  const rlimitOptions = { withMemory: !browser && !group?.countsMemory, withCpu: !browser };
  const passed = options.descriptors ?? [];
  const reopened = passed.length > 0 && passed.length <= MAX_REOPENED && (rlimits !== undefined || group) &&
      await reopensDescriptors(passed[0])
    ? { pid: process.pid, fds: passed }
    : undefined;
  const limitedArgv = [...limitPrefix(rlimits, group, kernel, rlimitOptions, reopened), ...argv];
  let released: { counted: Promise<void>; removed: Promise<void> } | undefined;
  const closing = () => {
    if (released) return released;
    tasks?.stop();
    files?.stop();
    disk?.stop();
    if (group === undefined) return released = { counted: Promise.resolve(), removed: Promise.resolve() };
    const closed = group.close();
    const read = closed.counters.then((events) => void (counted = events));
    const removed = Promise.all([read, closed.removed]).then(() => {});
    removals.add(removed);
    void removed.finally(() => removals.delete(removed));
    return released = { counted: read, removed };
  };
  let tasks: Awaited<ReturnType<typeof watchTaskCount>>;
  let files: ReturnType<typeof watchFileTable> | undefined;
  let disk: ReturnType<typeof watchDiskSpace> | undefined;
  // The disk's floors as the command starts (see diskFloors).
  const diskFloor = !browser && options.disks?.length ? diskFloors(options.disks) : undefined;
  // What the cgroup counted, read right before its folders go.
  let counted: GroupCounters = { processes: false, memory: false, cpu: false, sharedProcesses: false };
  // Whether a limit's words on the error output of a command that exited 0 go unwitnessed where the kernel counts that
  // limit: no fork refused by the group or the shared parent, a memory peak below half the limit. The command
  // writes its error output and may print any words (before, `echo 'Cannot allocate memory' >&2; echo ok` ended as
  // resource_limit). A failed command's words stand (a runtime's refusal the group did not count, an allocation past
  // the machine's overcommit), and so do those of limits no kernel counter sees (open files, tmpfs, file size).
  const unwitnessed = (limit: LimitName, exit: { code: number | null; signal: string | null }): boolean => {
    if (exit.code !== 0 || exit.signal !== null || group === undefined) return false;
    if (limit === "processes") return !counted.processes && !counted.sharedProcesses;
    return limit === "memory" && group.countsMemory && !counted.memory && counted.memoryPeakBytes !== undefined &&
      counted.memoryPeakBytes < limits.memoryBytes / 2;
  };
  return {
    argv: limitedArgv,
    descriptors: reopened ? [] : passed,
    watch(end) {
      // The machine's file table, with or without a group: no cgroup counts open files.
      // (Where /proc/loadavg could not be read, neither can the table: the state lists the gap.)
      if (!browser && taskWatch) {
        void fileTable().then((table) => {
          const budget = table && fileTableBudget(limits.processes, limits.openFiles, table);
          if (budget !== undefined && !released) files = watchFileTable(table!, budget, end);
        });
      }
      // The host's disk, with or without a group: no cgroup counts it.
      if (diskFloor !== undefined && !released) disk = watchDiskSpace(diskFloor, end);
      if (group) return group.watch();
      if (!taskWatch || !isRoot() || browser) return;
      void watchTaskCount(limits.processes, end).then((watch) => {
        if (released) watch?.stop();
        else tasks = watch;
      });
    },
    // deno-lint-ignore require-await -- async: a failure stays a rejected promise, never a throw.
    async hit(exit, stderrFile, written = [], ended = {}) {
      const found = (limit: LimitName, evidence: string): LimitHit => ({
        limit,
        value: limitValue(limits, limit),
        evidence,
      });
      // Of the command's group, or of the parent its workspace's commands share (twice the limit together).
      const shared = group !== undefined && options.share !== undefined
        ? ` of the command, or of its workspace's commands together (${SHARED_FACTOR} times the limit)`
        : "";
      if (counted.processes) return found("processes", `the cgroup${shared} refused a fork (pids.max)`);
      if (tasks?.fired()) {
        return found("processes", "the machine's task count passed the process limit while it ran");
      }
      if (disk?.fired()) {
        return {
          limit: "disk",
          value: "half of the free space and inodes found by the first command on the file system",
          evidence:
            `the free space or free inodes of the file system of ${disk.lowest() ?? options.disks!.join(" or ")} ` +
            "fell below half of what they were when the first command on it started (commands together leave that " +
            "half free; a command starting below it may write 1 MiB, enough to remove files)",
        };
      }
      if (files?.fired()) {
        return found("openFiles", "its processes held more than half of the machine's free file table (fs.file-max)");
      }
      if (counted.memory) return found("memory", `the out-of-memory killer of the cgroup${shared} ended a process`);
      if (counted.cpu) return found("cpuSeconds", "its processes used the CPU seconds of the limit (cgroup)");
      if (exit.signal && SIGNALS[exit.signal]) return found(SIGNALS[exit.signal], exit.signal);
      // The sandbox's check after the command: a private tmpfs held more than the limit. Before, a write refused with
      // ENOSPC whose error was discarded (`head -c 20M /dev/zero > /tmp/big 2>/dev/null || true`) ended as a success.
      // The error output's tail, read once for both the check's line and the hints below.
      let tail: string | undefined;
      const readTail = (open: () => number) => tail ??= stderrTail(open);
      const checked = options.tmpfsChecked && exit.code === TMPFS_FULL_EXIT && stderrFile !== undefined
        ? readTail(stderrFile)
        : "";
      const grown = TMPFS_FILE_SIZE_LINE.exec(checked);
      if (grown) return found("fileSize", lineAround(checked, grown.index));
      if (TMPFS_FULL_LINE.test(checked)) {
        return found(
          "tmpSize",
          "a private tmpfs of the sandbox (/tmp, /dev/shm or the home folder) held more than the limit when the " +
            `command ended (the sandbox's check after it, exit code ${TMPFS_FULL_EXIT}), whatever the command printed`,
        );
      }
      if (ended.grownFile !== undefined) {
        return found(
          "fileSize",
          `${ended.grownFile}, a file of a private tmpfs of the sandbox, had grown past the limit when the command was ` +
            "ended (its timeout, the output limit, a stop or another limit), read before the sandbox went",
        );
      }
      if (ended.tmpfsOver !== undefined) {
        return found(
          "tmpSize",
          `${ended.tmpfsOver}, a private tmpfs of the sandbox, held more than the limit when the command was ended ` +
            "(its timeout, the output limit, a stop or another limit), read before the sandbox went",
        );
      }
      if (exit.code !== null && SIGNAL_EXITS[exit.code]) {
        const [limit, signal] = SIGNAL_EXITS[exit.code];
        return found(limit, `exit code ${exit.code} (${signal})`);
      }
      // Past the limit, and no further than the kernel lets a file grow (a block past it): a larger one was not
      // written by the command but renamed or linked there (a file the watch saw go and come back, `touch a; mv a b`).
      const past = written.find((file) =>
        file.size > limits.fileSizeBytes && file.size <= limits.fileSizeBytes + MAX_FILE_BLOCK
      );
      if (past !== undefined) {
        return found(
          "fileSize",
          `${past.path} grew to ${past.size} bytes, more than the limit's ${limits.fileSizeBytes} (the kernel ` +
            "stops a file within a block past the limit, with File too large), whatever the command printed",
        );
      }
      if (stderrFile === undefined) return undefined;
      const text = readTail(stderrFile);
      for (const hint of HINTS) {
        if (hint.limit === "tmpSize" && !options.privateTmp) continue;
        if (unwitnessed(hint.limit, exit)) continue;
        const line = hintLine(hint, text);
        if (line !== undefined) return found(hint.limit, line);
      }
      return undefined;
    },
    counted() {
      return closing().counted;
    },
    release() {
      return closing().removed;
    },
  };
}

/**
 * The model's message for a hit limit: which one, its value, and what to do.
 */
export function limitMessage(what: string, hit: LimitHit): string {
  const names: Record<LimitName, string> = {
    memory: "memory limit",
    cpuSeconds: "CPU time limit",
    fileSize: "file size limit",
    processes: "process limit",
    openFiles: "open files limit",
    tmpSize: "size of a private tmpfs (/tmp, /dev/shm, the home folder)",
  };
  if (hit.limit === "disk") return `${what} was ended to keep the host's disk from filling: ${hit.evidence}`;
  return `${what} hit the ${names[hit.limit]} (sandbox.limits.${hit.limit} = ${hit.value}): ${hit.evidence}`;
}

/**
 * What the model may do about a hit limit, for a recovery hint: ask the user
 * to raise it in the policy file, or (the host's disk) to free space there.
 *
 * @example
 * ```ts
 * import { limitRemedy } from "@toolfence/policy";
 * console.log(limitRemedy({ limit: "memory", value: "4GiB", evidence: "" }));
 * ```
 */
export function limitRemedy(hit: LimitHit): string {
  return hit.limit === "disk"
    ? "write less to the workspace and the temp dir (remove what is not needed), or ask the user to free disk space"
    : `ask the user to raise sandbox.limits.${hit.limit} in the policy file`;
}

// The line of the first match of a hint whose line does not hold the words it is not read in.
function hintLine(hint: (typeof HINTS)[number], text: string): string | undefined {
  const matches = hint.unless === undefined ? [hint.pattern.exec(text)] : text.matchAll(hint.pattern);
  for (const match of matches) {
    if (match === null) continue;
    if (!hint.unless?.test(lineOf(text, match.index))) return lineAround(text, match.index);
  }
  return undefined;
}

// The line of `text` around `at`, trimmed and cut to a sane length.
function lineAround(text: string, at: number): string {
  return lineOf(text, at).trim().slice(0, 300);
}

// The whole line of `text` that holds `at`.
function lineOf(text: string, at: number): string {
  const start = text.lastIndexOf("\n", at) + 1;
  const end = text.indexOf("\n", at);
  return text.slice(start, end === -1 ? undefined : end);
}

/**
 * The bubblewrap options that cap the next `--tmpfs` at `bytes`: `--size`
 * where this bubblewrap takes it (0.7 and later, probed once), else none.
 *
 * Requires `--allow-run=bwrap`.
 *
 * @example
 * ```ts
 * import { bubblewrapPath, tmpfsSizeArgs } from "@toolfence/policy";
 * const bwrap = await bubblewrapPath();
 * if (bwrap) console.log(await tmpfsSizeArgs(bwrap, 1024 ** 3)); // ["--size", "1073741824"]
 * ```
 */
export async function tmpfsSizeArgs(bwrap: string, bytes: number): Promise<string[]> {
  return await tmpfsSizeSupported(bwrap) ? ["--size", String(bytes)] : [];
}
