/**
 * The OS sandbox for shell commands and the programs built-in tools start.
 * Deno's and Node's permission flags stop at the process boundary: a program
 * started with `--allow-run` may do anything the user may. Where bubblewrap
 * works, every process sees one read view, deny by default: the system
 * folders read-only (credential files masked), the workspace and temp dir
 * writable, a private `/tmp`, the caller's home an empty private folder, and
 * nothing else of the host unless the policy file names it; only their own
 * processes in `/proc`, the workspace's protected and hidden paths read-only
 * or masked, no network unless allowed, and they die with the process that
 * started them. New options of the profile (resource limits, a network
 * namespace with a proxy) are fields of {@linkcode SandboxOptions}.
 *
 * @module
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import {
  closeMounts,
  hiddenMountArgs,
  hostProgramCandidates,
  isAbsoluteClean,
  isWithin,
  listOutside,
  openFolderConfined,
  protectedMountArgs,
  protectedMounts,
  quarantineCreated,
  type QuarantinedPath,
  readOnlyEntryMounts,
  readOnlyFolderMounts,
  releasePlaceholders,
  runProbe,
  secretMasks,
  secretMountArgs,
  type WorkspaceListing,
} from "@toolfence/internal";
import { DEFAULT_PROTECTED_PATHS } from "./protected_paths.ts";
import { openSeccompProgram, seccompSupported } from "./_seccomp.ts";
import { DEVPTS_BIND, type KernelObjectsHolder, NO_FRONT, NO_TERMINALS } from "./_kernel_objects.ts";
import { forwarderArgv, proxyMountArgs, type SandboxProxy } from "./egress/forwarder.ts";
import { isRuntimePermissionError, quickLstat, shellOutput, unseenBySandbox } from "@toolfence/internal";
import {
  DEFAULT_RESOURCE_LIMITS,
  knownLimitsState,
  type LimitsState,
  limitsState,
  type ResourceLimits,
  type TmpfsAtEnd,
  tmpfsSizeArgs,
} from "./limits.ts";
import { quote, TMPFS_FULL_EXIT, TMPFS_SLACK_BYTES } from "./_limits.ts";

export type { QuarantinedPath } from "@toolfence/internal";

/** `auto`: sandbox when bubblewrap works here; `required`: refuse to run without it; `off`: never. */
export type SandboxMode = "auto" | "required" | "off";

/** Whether bubblewrap can sandbox commands here, and why not. */
export interface BubblewrapStatus {
  /** Absolute path of a working `bwrap`. */
  path?: string;
  /** Why bubblewrap is unavailable (not installed, or cannot create namespaces here). */
  reason?: string;
}

const KNOWN_LOCATIONS = [
  "/usr/bin/bwrap",
  "/usr/local/bin/bwrap",
  "/bin/bwrap",
];
const PROBE_TIMEOUT_MS = 5000;

let statusPromise: Promise<BubblewrapStatus> | undefined;
let settledStatus: BubblewrapStatus | undefined;

// The system's own locations first, then PATH's absolute folders outside the server's working folder, never the
// bare name (see hostProgramCandidates): the server runs bubblewrap itself, outside any sandbox.
function candidates(): Promise<string[]> {
  return hostProgramCandidates("bwrap", KNOWN_LOCATIONS);
}

// The descriptor number the first protected-path handle gets in bubblewrap (after stdin, stdout, stderr).
const FIRST_MOUNT_FD = 3;

/**
 * The host folders every sandbox sees, read-only: the programs, their
 * libraries and the system configuration (its credential files masked). Nothing
 * else of the host is there unless named: not /home, /root, /srv, /opt, /var,
 * /mnt, /media, tenant roots, other workspaces or the server's own folder.
 * Measured with bash, git, rg, node, deno and chromium-headless-shell.
 *
 * @example
 * ```ts
 * import { SYSTEM_READ_VIEW } from "@toolfence/policy";
 * console.log(SYSTEM_READ_VIEW.includes("/srv")); // false
 * ```
 */
export const SYSTEM_READ_VIEW: readonly string[] = Object.freeze([
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
]);

// The sandbox's first process closes every descriptor above 2 before the command starts: one this process (or
// whoever started it) holds without close-on-exec would reach every command otherwise. Deno's node:net makes a
// unix listener that way (an egress proxy's): a command could accept another command's connections on it, or
// make it blocking and freeze this process's next accept. bubblewrap has closed its own handles by then. bash,
// since dash closes only descriptors 0 to 9; in the line of a `bash -c` command itself, so that it costs no start.
// Only those still open when the loop comes to them (the glob's own is gone); no redirection of the loop, which
// would have bash keep a copy of stderr above 2, closed by the loop, and leave stderr on /dev/null.
// Its variables are the shell's own (`toolfence_`, unset after), so that none of the command's is changed.
function closingLine(keep: readonly number[]): string {
  const kept = keep.length === 0 ? "" : ` && [[ " ${keep.join(" ")} " != *" $toolfence_fd "* ]]`;
  return "for toolfence_fd in /proc/self/fd/*; do toolfence_fd=${toolfence_fd##*/}; " +
    `((toolfence_fd > 2))${kept} && [[ -L /proc/self/fd/$toolfence_fd ]] && exec {toolfence_fd}<&-; done; ` +
    "unset toolfence_fd; ";
}

// `argv` behind `opening`, the shell text the sandbox's first process runs before anything else (its ready line and
// closingLine): in the line of a `bash -c` command itself, else in a bash that then execs the command.
function closingInherited(argv: readonly string[], opening: string): string[] {
  if (path.basename(argv[0]) === "bash" && argv[1] === "-c" && argv.length >= 3) {
    return [argv[0], "-c", opening + argv[2], ...argv.slice(3)];
  }
  return ["/bin/bash", "-c", `${opening}exec "$@"`, "bash", ...argv];
}

/**
 * What the sandbox's first process writes to stderr before anything else (where
 * {@linkcode SandboxOptions.announcesReady}): bubblewrap has made every mount by
 * then, and the command has not started. No text a program prints (NUL-framed).
 */
export const SANDBOX_READY = "\0toolfence:sandbox-ready\0";
// bash's printf of SANDBOX_READY, its NULs as octal escapes.
const READY_LINE = `printf '${SANDBOX_READY.replaceAll("\0", "\\000")}' >&2; `;

// The shell text of a `find` printing the first file of `folder` (shell words, expanded by the shell) larger than
// `over` bytes and smaller than `under`, by its absolute path (the command's PATH may name another), not across mounts
// (the session temp dir bound inside /tmp, whose captured outputs are no file the command wrote).
function findGrown(folder: string, over: string, under: string): string {
  return `/usr/bin/find ${folder} -xdev -type f -size +${over}c -size -${under}c -print -quit 2>/dev/null`;
}

/**
 * `argv` in a shell that, once it has ended, writes TMPFS_SLACK_BYTES to a new file of each of `folders` (the
 * sandbox's private tmpfs folders, each `limit` plus TMPFS_SLACK_BYTES): the write fits only where the folder holds at
 * most `limit`. Where one is refused (ENOSPC: its bytes or its inodes used up), the shell exits with TMPFS_FULL_EXIT,
 * saying so; else with the command's own status. A tmpfs that filled refuses the command's write with ENOSPC, which the
 * command may hide (`2>/dev/null || true`): before, such a command ended as a success with nothing named. The write is
 * the shell's own (`printf`, no program started: a `stat -f` cost 5 to 6 ms a command), to a name the command could not
 * have prepared: one that is there already, or is a link or not a plain file after the write, counts as full
 * (noclobber refuses an existing plain file). The shell is the command's parent inside the sandbox, runs `opening`
 * first (as closingInherited does), and hears the command's end on a copy of stderr kept from it (so that bash prints no
 * `Killed` line of its own); the files it writes go with the sandbox. What the folders hold at the end is judged: a
 * command that filled one and emptied it again before it ended is not seen. Needs RLIMIT_FSIZE past TMPFS_SLACK_BYTES.
 */
function tmpfsCheck(
  folders: readonly string[],
  limit: number,
  argv: readonly string[],
  opening: string,
  fileSize: number | undefined,
): string[] {
  // A file of a folder grown past the file size limit, no further than the kernel lets it (a block, 1 KiB, past it):
  // the process door's watch sees the workspace's files only, and before, `head -c 20M /dev/zero > /tmp/x
  // 2>/dev/null` under fileSize 8 MiB was a success. `find` (findGrown) only where the folder holds something (most
  // commands leave it empty). Only where a file of the folder
  // can pass the file size limit before the folder holds more than `limit` (the defaults are equal, and the check
  // below then names the tmpfs; the caller passes `fileSize` only then): the session's temp dir is always in /tmp,
  // and the `find` cost every writing line about 2 ms.
  const quoted = folders.map(quote).join(" ");
  const sizeCheck = fileSize === undefined ? "" : "shopt -s nullglob dotglob; " +
    `for toolfence_dir in ${quoted}; do set -- "$toolfence_dir"/*; ` +
    `if (($#)) && toolfence_big=$(${findGrown('"$toolfence_dir"', String(fileSize), String(fileSize + 1025))}` +
    ') && [ -n "$toolfence_big" ]; then ' +
    `echo "toolfence: $toolfence_big grew past sandbox.limits.fileSize (${fileSize} bytes) while the command ran; ` +
    `the command's exit status was $toolfence_rc" >&2; exit ${TMPFS_FULL_EXIT}; fi; done; `;
  const script = opening +
    '{ "$@" 2>&9 9>&-; toolfence_rc=$?; } 9>&2 2>/dev/null; set -C; ' + sizeCheck +
    "toolfence_name=.toolfence-tmpfs-check-$RANDOM$RANDOM$RANDOM; " +
    `for toolfence_dir in ${quoted}; do toolfence_file=$toolfence_dir/$toolfence_name; ` +
    'if [ -e "$toolfence_file" ] || [ -L "$toolfence_file" ] || ' +
    `! { printf '%${TMPFS_SLACK_BYTES}s' '' > "$toolfence_file"; } 2>/dev/null || ` +
    '[ -L "$toolfence_file" ] || [ ! -f "$toolfence_file" ]; then ' +
    `echo "toolfence: $toolfence_dir held more than sandbox.limits.tmpSize (${limit} bytes) when the command ended ` +
    `(a write of ${TMPFS_SLACK_BYTES} bytes more was refused); the command's exit status was $toolfence_rc" >&2; ` +
    `exit ${TMPFS_FULL_EXIT}; fi; done; exit $toolfence_rc`;
  // -p: no BASH_ENV and no functions from the environment (the command's to set), which could stand in for exit.
  return ["/bin/bash", "-p", "-c", script, "bash", ...argv];
}

// What of /proc a command may read but not write: the sysctls, and the machine's devices and buses.
const PROC_READ_ONLY = [
  "/proc/sys",
  "/proc/sysrq-trigger",
  "/proc/fs",
  "/proc/bus",
  "/proc/irq",
  "/proc/acpi",
  "/proc/scsi",
];
// What of /proc only root reads, and nothing in a sandbox needs: kernel memory, keyrings, timers, the scheduler; and
// the boot's identity, which the machine-id's mask would leave (the same in every tenant's sandbox until a reboot).
const PROC_MASKED = [
  "/proc/kcore",
  "/proc/keys",
  "/proc/key-users",
  "/proc/timer_list",
  "/proc/sched_debug",
  "/proc/sys/kernel/random/boot_id",
];

// Fresh kernel views and a private /tmp, in every sandbox.
const PRIVATE_MOUNTS = ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
// The root of the sandbox read-only once every mount point in it exists (not recursive: the mounts on it keep
// their own flags).
const ROOT_READ_ONLY = ["--remount-ro", "/"];
// And ends with this isolation: its own session, no capabilities, gone with its parent.
const CONFINEMENT = ["--die-with-parent", "--cap-drop", "ALL"];
// A session of the sandbox's own, so that nothing in it can push input into
// the caller's terminal with TIOCSTI.
const NEW_SESSION = ["--new-session"];
// No user namespace inside the sandbox: in one of its own a process holds every capability (CAP_SYS_ADMIN,
// CAP_NET_ADMIN) over the mount and network namespaces it makes there, the kernel's widest attack surface (nf_tables,
// the usual road of a local privilege escalation) and nothing a command or checker needs. Before 2026-12-05
// `unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWNET)` in a command gave CapEff 000001ffffffffff. bubblewrap 0.8 and
// later (`--disable-userns` needs `--unshare-user` named, which `--unshare-all` only tries).
const NO_NESTED_USERNS = ["--unshare-user", "--disable-userns"];

const usernsSupport = new Map<string, Promise<readonly string[]>>();

// NO_NESTED_USERNS where this bubblewrap takes it (probed once per bwrap), else nothing.
function noNestedUserns(bwrap: string): Promise<readonly string[]> {
  let known = usernsSupport.get(bwrap);
  if (known === undefined) {
    known = runProbe(
      bwrap,
      ["--ro-bind", "/", "/", "--unshare-all", ...NO_NESTED_USERNS, "--", "true"],
      PROBE_TIMEOUT_MS,
    )
      .then((outcome) => outcome.ok ? NO_NESTED_USERNS : []);
    usernsSupport.set(bwrap, known);
  }
  return known;
}

// The probe uses the same namespaces and mounts as real commands: in many
// containers bwrap is installed but user namespaces or /proc mounts are not allowed.
const probeArgs = (covers: readonly string[]) => [
  ...SYSTEM_READ_VIEW.flatMap((folder) => ["--ro-bind-try", folder, folder]),
  ...PRIVATE_MOUNTS.slice(0, -2),
  ...covers,
  ...PRIVATE_MOUNTS.slice(-2),
  "--unshare-all",
  ...CONFINEMENT,
  ...NEW_SESSION,
  "--",
  "true",
];

/**
 * Whether bubblewrap works here: found and able to start a sandbox like the ones
 * the policy's process door starts. Probed once per process and cached.
 *
 * Requires `--allow-run=bwrap`.
 *
 * @example
 * ```ts
 * import { bubblewrapStatus } from "@toolfence/policy";
 * const status = await bubblewrapStatus();
 * console.log(status.path ?? `no sandbox: ${status.reason}`);
 * ```
 */
export function bubblewrapStatus(): Promise<BubblewrapStatus> {
  statusPromise ??= (async () => {
    const files = await candidates();
    const failures: string[] = [];
    for (const file of files) {
      // Whether bubblewrap works: the covers of /proc as far as they can be known (commands fail closed on them).
      const covers = await procCovers().catch(() => PROC_READ_ONLY.flatMap((entry) => ["--ro-bind-try", entry, entry]));
      const probe = await runProbe(file, probeArgs(covers), PROBE_TIMEOUT_MS);
      if (probe.ok) return { path: file };
      failures.push(`${file}: ${probe.message}`);
    }
    // Every candidate missing, or refused by the runtime (narrow --allow-run): named by the flag that lifts it. Under
    // a narrow read each PATH folder is a candidate the server could not look at, tried by its path.
    const refused = failures.every((failure) => /Requires run access|No such file or directory/.test(failure));
    const reason = refused
      ? "bubblewrap (bwrap) is not installed, or the runtime may not run it (--allow-run=bwrap)"
      : "bubblewrap cannot create a sandbox here";
    return { reason: failures.length === 0 ? reason : `${reason}: ${failures.join("; ")}` };
  })().then((status) => settledStatus = status);
  return statusPromise;
}

/**
 * The path of a working `bwrap`, or `undefined` when bubblewrap is missing or
 * cannot run here (see {@linkcode bubblewrapStatus} for the reason).
 *
 * Requires `--allow-run=bwrap`.
 *
 * @example
 * ```ts
 * import { bubblewrapPath } from "@toolfence/policy";
 * console.log(await bubblewrapPath());
 * ```
 */
export async function bubblewrapPath(): Promise<string | undefined> {
  return (await bubblewrapStatus()).path;
}

/** The sandbox a session runs its commands in, as reported once at its start. */
export interface SandboxState {
  /** The configured mode. */
  mode: SandboxMode;
  /** Whether commands run under bubblewrap. */
  working: boolean;
  /** The `bwrap` that runs them, when working. */
  bwrap?: string;
  /** Why commands run without the sandbox (mode `off`, or the probe's own error). */
  reason?: string;
  /** How the resource limits hold (cgroup or rlimits), and their values. */
  limits: LimitsState;
  /** One line for a log or a model: the state and what it means. */
  summary: string;
}

/**
 * The sandbox state for `mode`: probes bubblewrap (once per process) unless
 * the mode is `off`. Sessions report it once at their start (`toolfence
 * serve` logs it, the MCP server's instructions say it).
 *
 * Requires `--allow-run=bwrap` (without it the state says so).
 *
 * @example
 * ```ts
 * import { sandboxState } from "@toolfence/policy";
 * const state = await sandboxState("auto");
 * console.error(state.summary);
 * ```
 */
export async function sandboxState(
  mode: SandboxMode,
  limits: ResourceLimits = DEFAULT_RESOURCE_LIMITS,
): Promise<SandboxState> {
  const status = mode === "off" ? {} : await bubblewrapStatus();
  return stateOf(mode, status, await limitsState(limits, status.path !== undefined));
}

/**
 * The sandbox state for `mode` when it is known without waiting (mode `off`,
 * or bubblewrap already probed in this process), else `undefined`.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { knownSandboxState, sandboxState } from "@toolfence/policy";
 * await sandboxState("auto");
 * console.log(knownSandboxState("auto")?.working);
 * ```
 */
export function knownSandboxState(
  mode: SandboxMode,
  limits: ResourceLimits = DEFAULT_RESOURCE_LIMITS,
): SandboxState | undefined {
  const status = mode === "off" ? {} : settledStatus;
  const state = status && knownLimitsState(limits, status.path !== undefined);
  return status && state && stateOf(mode, status, state);
}

function stateOf(mode: SandboxMode, status: BubblewrapStatus, limits: LimitsState): SandboxState {
  const state = sandboxOnly(mode, status);
  return { ...state, limits, summary: `${state.summary} ${limits.summary}` };
}

function sandboxOnly(mode: SandboxMode, status: BubblewrapStatus): Omit<SandboxState, "limits"> {
  if (mode === "off") {
    return {
      mode,
      working: false,
      reason: 'the sandbox is switched off (sandbox: "off")',
      summary: 'OS sandbox: off (sandbox: "off"). Shell commands and checkers run without bubblewrap, ' +
        "with the user's full access to files and network; commands that run project code ask first.",
    };
  }
  if (status.path !== undefined) {
    return {
      mode,
      working: true,
      bwrap: status.path,
      summary: `OS sandbox: on (bubblewrap ${status.path}, sandbox: "${mode}"). Commands see only the system ` +
        "folders (read-only) and the workspace and temp dir (writable), the home folder empty, credentials hidden, " +
        "protected paths (git configuration and hooks, package-manager and editor settings) read-only, " +
        "only their own processes visible, and no network.",
    };
  }
  return {
    mode,
    working: false,
    reason: status.reason,
    summary: mode === "required"
      ? `OS sandbox: unavailable, and required (sandbox: "required"): no shell command or checker will start. ` +
        `Why: ${status.reason}`
      : `OS sandbox: unavailable (sandbox: "auto"): commands run without it, and those that run project ` +
        `code ask first. Why: ${status.reason}`,
  };
}

/** Options of {@linkcode sandboxArgv}. */
export interface SandboxOptions {
  /** The folder the command starts in (absolute). */
  workdir: string;
  /**
   * Descriptors above 2 the command is handed on purpose (a browser's
   * DevTools pipe on 3 and 4); every other one is closed before it starts.
   */
  keepDescriptors?: readonly number[];
  /** Absolute real paths the command may write: the workspace and the temp dir. */
  writable: string[];
  /** Keep the network (default: only a private loopback). */
  allowNet?: boolean;
  /**
   * The network through the egress proxy alone (`shell` profile, without
   * `allowNet`): the namespace keeps only its private loopback, the proxy's
   * socket is bound inside, and a forwarder on 127.0.0.1:`proxy.port` relays
   * to it before the command starts (see `policy/egress/forwarder.ts`).
   */
  network?: { proxy: SandboxProxy };
  /** See {@linkcode SandboxMode}. */
  mode: SandboxMode;
  /**
   * The caller starts the sandbox as the leader of a session of its own with
   * no terminal, so bubblewrap need not make another one (`spawnGroup` does
   * where it cannot end a sandbox through its PID namespace: see
   * `sandboxMakesSession`). The sandboxed processes then stay in the caller's
   * process group, where one group signal reaches them all; with a session of
   * bubblewrap's own, a group signal that lands before bubblewrap's child has
   * set its parent-death signal leaves that child and everything under it
   * running.
   */
  callerSession?: boolean;
  /**
   * The folder whose protected paths are read-only inside, including those
   * that do not exist yet inside an existing protected folder such as `.git`
   * (placeholders, removed by `release()`). Without it, the existing
   * protected paths of the first writable path are read-only and nothing is
   * created.
   */
  workspace?: string;
  /**
   * A folder directly in the session temp dir where `release()` moves the
   * protected paths at the workspace root that did not exist and that the
   * command created (`.npmrc`, `.vscode`, ...). Needs `workspace`. The
   * workspace and the folder's parent are the roots the moves stay within.
   */
  quarantine?: string;
  /** Protected-path globs relative to `workspace`; default {@linkcode DEFAULT_PROTECTED_PATHS}. */
  protectedPaths?: readonly string[];
  /**
   * The session's listing of `workspace` (a window of `watchWorkspace`), read
   * for the protected paths instead of a walk before the command and after it,
   * and told of each placeholder as it is made, so that no look of the window
   * takes it for a change.
   */
  listing?: WorkspaceListing;
  /**
   * The session's user namespace for its sandboxes (see `KernelObjectsHolder`):
   * without it, bubblewrap starts without the bounds of the kernel objects
   * counted per user.
   */
  kernelObjects?: KernelObjectsHolder;
  /**
   * The policy's denied-path globs, relative to `workspace` (or absolute):
   * every existing entry they match is hidden inside (a file reads as empty,
   * a folder as an empty read-only one). Needs `workspace`.
   */
  hiddenPaths?: readonly string[];
  /**
   * Absolute host paths bound read-only at the same place, besides
   * {@linkcode SYSTEM_READ_VIEW}: the program to run when it lies elsewhere,
   * the workspace for a program that only reads it, the policy file's
   * `paths.roots` and `sandbox.read`. One that does not exist is left out.
   */
  readable?: string[];
  /** Host folders bound read-only at another place inside (a cache under the program's private folder). */
  readOnlyBinds?: readonly { from: string; to: string }[];
  /**
   * Folders inside a writable path that stay read-only inside (the output captures of the session temp dir, which
   * the server reads back as other calls' results): each bound by its descriptor, opened without following a link;
   * one that does not exist or is no folder is left out.
   */
  readOnlyFolders?: readonly string[];
  /**
   * Files and folders bound read-only by their descriptor, each opened without following a link on its way, where
   * they lie where the session's commands write (a program's file or folder in the workspace or the temp dir): bound
   * by path, bubblewrap followed a link a command had swapped in for a folder on the way since it was judged. One
   * that is gone or no longer what it was is left out.
   */
  readOnlyEntries?: readonly string[];
  /**
   * Folders bound writable by their descriptor, each opened where its real path is confirmed (a program's private
   * folder in the session temp dir, which the session's commands write): bound by path, bubblewrap followed a link
   * a background command had swapped in for it, and check_types wrote its cache into another tenant's workspace.
   */
  writableFolders?: readonly string[];
  /**
   * The caller's home folder as an empty writable private folder, so that
   * programs that keep settings there start (default `true`); `false`: no
   * home folder at all.
   */
  privateHome?: boolean;
  /**
   * Whether the command runs under the seccomp filter that refuses fallocate(2) (see `policy/_seccomp.ts`; the
   * process door's commands and checkers do): its descriptor is one of `fds`, which the caller must then pass.
   * Default `false`: a launcher script cannot pass a descriptor of this process.
   */
  seccomp?: boolean;
  /**
   * Whether the workspace folders above a hidden path are bound by descriptors (opened confined, each the very
   * folder that was walked), which are then among `fds` (default `true`). `false` where the argv outlives this
   * process's descriptors (a launcher script): they are bound by path, which bubblewrap resolves itself, so that a
   * folder a running command swaps for a link meanwhile (`p -> /srv/tenants/bob`) would bind where the link leads.
   */
  pinsByDescriptor?: boolean;
  /**
   * Bytes of each private tmpfs the command may write (`/tmp`, `/dev/shm` and the private home folder; size-capped
   * where bubblewrap takes `--size`); default uncapped.
   */
  tmpSize?: number;
  /**
   * Whether the sandbox checks its private tmpfs folders once the command ends (where each is size-capped): one
   * holding more than `tmpSize` makes the sandbox exit with `TMPFS_FULL_EXIT` (see `SandboxedCommand.tmpfsFolders`).
   * The check runs in a shell that waits for the command, so not for a program that must be the sandbox's only
   * process (a browser on its DevTools pipe), and writes `TMPFS_SLACK_BYTES` to each folder: the command's file size
   * limit must let it.
   */
  checkTmpfs?: boolean;
  /**
   * The command's file size limit in bytes: with `checkTmpfs`, a file of a private tmpfs that grew past it (no
   * further than a block, as the kernel stops it) makes the sandbox exit with `TMPFS_FULL_EXIT` as well, saying so.
   */
  fileSize?: number;
  /**
   * Whether the sandbox's first process writes {@linkcode SANDBOX_READY} to stderr before the command starts (the
   * process door's commands and checkers, whose capture takes it out again): a stderr that ends without it is
   * bubblewrap's failure to make the sandbox, before anything of the command ran, which the door may start again
   * (a mask's file of /etc gone since the masks were looked at). Default `false`: a browser's stderr is its own.
   */
  announcesReady?: boolean;
  /**
   * Look at the machine again (its secrets to mask) instead of taking the look kept from an earlier sandbox: for a
   * sandbox started again after bubblewrap failed to make it.
   */
  freshLooks?: boolean;
}

/** A command ready to start, from {@linkcode sandboxArgv}. */
export interface SandboxedCommand {
  /** The argv to start. */
  argv: string[];
  /** Whether it runs under bubblewrap. */
  sandboxed: boolean;
  /** Why it does not (mode `off`, or the probe's error under `auto`). */
  reason?: string;
  /**
   * Open descriptors bubblewrap binds (protected paths, opened without
   * following links): pass them to the child as its descriptors 3, 4, ... in
   * this order (e.g. `stdio: ["ignore", "pipe", "pipe", ...fds]`). Empty
   * when nothing is bound that way. `release()` closes them.
   */
  fds: number[];
  /**
   * Removes the placeholders made for protected paths that did not exist, and
   * moves the protected paths the command created into the quarantine folder;
   * call once the command (and every process it started) has ended. Returns
   * what was moved.
   */
  release(): Promise<QuarantinedPath[]>;
  /**
   * Releases a sandbox bubblewrap failed to make, in which nothing ran: its descriptors and placeholders, as
   * `release` does, but no quarantine and so no look at the workspace (the look after a command, which the
   * quarantine's list of what the command made is taken from, would come before the command it is for runs in its
   * next sandbox, and that command's changes would be reported nowhere). Either this or `release`, once.
   */
  discard(): Promise<void>;
  /**
   * Set where the sandbox checks its private tmpfs folders after the command (see {@linkcode SandboxOptions.checkTmpfs}):
   * its exit code `TMPFS_FULL_EXIT` then says one held more than `tmpSize`. The folders that check looks at, its
   * limit, and the file size it looks for where a file can pass it before the folder holds more than the limit: what
   * {@linkcode tmpfsAtEnd} reads.
   */
  tmpfsFolders?: { folders: readonly string[]; limit: number; fileSize?: number };
}

// statfs(2)'s f_type of a tmpfs.
const TMPFS_MAGIC = 0x01021994;
// One folder's statfs as `stat -f -c '%t %S %b %f %d'` prints it (type in hex, block size, blocks, free, free inodes).
const STAT_FORMAT = "%t %S %b %f %d";
// Each child's folders, a line each, the child first. The children file ends in no newline, so `read` fails on it
// while it sets `c`.
const READ_TMPFS = 'read -r c < "/proc/$1/task/$1/children"; shift; for p in $c; do ' +
  `for f; do printf '%s ' "$p"; /usr/bin/stat -f -c '${STAT_FORMAT}' "/proc/$p/root$f" 2>/dev/null || echo -; ` +
  "done; done";
// The first file of the folders given past $1 bytes, no further than the block the kernel lets it grow (see tmpfsCheck).
const FIND_GROWN = `n=$1; shift; for d; do ${findGrown('"$d"', '"$n"', "$((n + 1025))")}; done`;

/**
 * What the check after the command (see `tmpfsCheck`) would have found in the sandbox's private tmpfs folders
 * (`check`, see {@linkcode SandboxedCommand.tmpfsFolders}), read as the sandbox whose bubblewrap is `leader` is about
 * to be ended from outside (its timeout, the output limit, a stop, another limit's watch): that check never runs then,
 * as the whole namespace is killed. Before 2026-12-06 `head -c 6M /dev/zero > /tmp/x 2>/dev/null; sleep 60` ended as
 * `timeout`, the full tmpfs unnamed. Read through `/proc/<child>/root` of each child of bubblewrap (its init is in the
 * sandbox's mount namespace), and only a tmpfs of the size the sandbox gave it counts (another child, such as the
 * cgroup's watcher shell started before the leader became bubblewrap, shows the host's folders); by a shell where the
 * runtime may not read /proc (Deno's narrow flags). Empty where nothing is over, or nothing could be read.
 */
export async function tmpfsAtEnd(
  leader: number,
  check: { folders: readonly string[]; limit: number; fileSize?: number },
): Promise<TmpfsAtEnd> {
  const size = check.limit + TMPFS_SLACK_BYTES;
  const looks = await tmpfsLooks(leader, check.folders);
  // The sandbox's own tmpfs folders: of the size it gave them.
  const own = looks.filter((look) =>
    look.type === TMPFS_MAGIC && Math.abs(look.blocks * look.bsize - size) < look.bsize
  );
  const over = own.find((look) => (look.blocks - look.free) * look.bsize > check.limit || look.freeInodes === 0);
  if (over !== undefined) return { tmpfsOver: over.folder };
  if (check.fileSize === undefined || own.length === 0) return {};
  const dirs = own.map((look) => `/proc/${look.child}/root${look.folder}`);
  const grown = (await shellOutput(FIND_GROWN, [String(check.fileSize), ...dirs]))?.split("\n")[0];
  if (!grown) return {};
  return { grownFile: grown.replace(/^\/proc\/\d+\/root/, "") };
}

interface TmpfsLook {
  child: string;
  folder: string;
  type: number;
  bsize: number;
  blocks: number;
  free: number;
  freeInodes: number;
}

// The statfs of each of `folders` through /proc/<child>/root, for each child of `leader`.
async function tmpfsLooks(leader: number, folders: readonly string[]): Promise<TmpfsLook[]> {
  let children: string[] | undefined;
  try {
    children = fs.readFileSync(`/proc/${leader}/task/${leader}/children`, "utf8").split(" ").filter(Boolean);
  } catch (error) {
    if (!isRuntimePermissionError(error)) return [];
  }
  if (children !== undefined) {
    try {
      const looks: TmpfsLook[] = [];
      for (const child of children) {
        for (const folder of folders) {
          let info;
          try {
            info = fs.statfsSync(`/proc/${child}/root${folder}`);
          } catch (error) {
            if (isRuntimePermissionError(error)) throw error;
            continue;
          }
          looks.push({
            child,
            folder,
            type: info.type,
            bsize: info.bsize,
            blocks: info.blocks,
            free: info.bfree,
            freeInodes: info.ffree,
          });
        }
      }
      return looks;
    } catch (error) {
      if (!isRuntimePermissionError(error)) return [];
    }
  }
  const lines = (await shellOutput(READ_TMPFS, [String(leader), ...folders]))?.split("\n") ?? [];
  return lines.flatMap((line, i) => {
    const [child, type, bsize, blocks, free, freeInodes] = line.split(" ");
    return freeInodes === undefined ? [] : [{
      child,
      folder: folders[i % folders.length],
      type: parseInt(type, 16),
      bsize: Number(bsize),
      blocks: Number(blocks),
      free: Number(free),
      freeInodes: Number(freeInodes),
    }];
  });
}

/**
 * The machine's knobs in the fresh /proc read-only and its kernel secrets
 * masked, as container engines do. A new PID namespace's /proc still shows the
 * machine's sysctls, and a command run by root may write them with no
 * capability at all (the kernel asks only whether the file's owner is the
 * caller): `/proc/sys/kernel/core_pattern` runs a program as root outside the
 * sandbox. bubblewrap covers `/proc/sys` only where its access check finds the
 * folder writable, which a 0555 folder never is. Found once per process.
 */
function procCovers(): Promise<string[]> {
  if (coveredProc === undefined) {
    coveredProc = procCoversNow();
    coveredProc.catch(() => coveredProc = undefined);
  }
  return coveredProc;
}

let coveredProc: Promise<string[]> | undefined;

// Which of PROC_MASKED exist is the kernel's fact, not the runtime's: under a narrow --allow-read the server may
// not look at /proc (`deno task serve`'s flags), and a child process looks instead. Until 2026-12-04 an entry the
// server could not look at was taken for missing, and under those flags a command of a server run as root read
// /proc/timer_list and /proc/keys.
async function procCoversNow(): Promise<string[]> {
  const masked: string[] = [];
  const unseen: string[] = [];
  for (const entry of PROC_MASKED) {
    try {
      fs.lstatSync(entry);
      masked.push(entry);
    } catch (error) {
      if (isRuntimePermissionError(error)) unseen.push(entry);
    }
  }
  if (unseen.length > 0) {
    const script = 'for p; do [ -e "$p" ] && printf "%s\\0" "$p"; done; exit 0';
    const listed = await shellOutput(script, unseen);
    if (listed === undefined) {
      throw unseenBySandbox(unseen, "cover the kernel's secrets in /proc");
    }
    for (const entry of listed.split("\0")) if (unseen.includes(entry)) masked.push(entry);
  }
  return [
    // -try: a kernel without one of them has nothing to cover.
    ...PROC_READ_ONLY.flatMap((entry) => ["--ro-bind-try", entry, entry]),
    ...masked.flatMap((entry) => ["--ro-bind", "/dev/null", entry]),
  ];
}

// The system view: each folder that exists bound read-only, each that is a
// link (merged /usr) recreated as the link. One the runtime may not look at is
// bound if it exists (bubblewrap judges), so a narrow fence does not empty it.
// Synchronous: each asynchronous lstat waited its turn in the runtime's thread
// pool, 2 to 8 ms per command for these eight folders at load 3 to 4. Found
// once per process, as the system folders' shape is the machine's (0.1 ms per
// command here, two of the eight missing and each a thrown error).
function systemViewMounts(): readonly string[] {
  systemView ??= systemViewNow();
  return systemView;
}

let systemView: readonly string[] | undefined;

function systemViewNow(): string[] {
  const args: string[] = [];
  for (const folder of SYSTEM_READ_VIEW) {
    let info;
    try {
      info = fs.lstatSync(folder);
    } catch (error) {
      if (isRuntimePermissionError(error)) args.push("--ro-bind-try", folder, folder);
      continue;
    }
    if (info.isSymbolicLink()) args.push("--symlink", fs.readlinkSync(folder), folder);
    else if (info.isDirectory()) args.push("--ro-bind", folder, folder);
  }
  return args;
}

// Whether `p` lies in the system view or in one of `readable`.
function inReadView(p: string, readable: readonly string[]): boolean {
  return [...SYSTEM_READ_VIEW, ...readable].some((root) => isWithin(p, root));
}

// With the network kept, name resolution must still work where resolv.conf leads out of the view (into /run).
async function resolverOutsideView(readable: readonly string[]): Promise<string[]> {
  try {
    const real = await fsp.realpath("/etc/resolv.conf");
    return inReadView(real, readable) ? [] : ["--ro-bind", real, real];
  } catch {
    return [];
  }
}

function noRelease(): Promise<QuarantinedPath[]> {
  return Promise.resolve([]);
}

function noDiscard(): Promise<void> {
  return Promise.resolve();
}

// Whether a mask's entry is still there: one that went since the masks were looked up (a private file of /etc that
// visudo or useradd made and removed within the 10 s a look is kept) would make bubblewrap fail to mount over it, and
// with it every command. One the runtime may not look at (narrow --allow-read) is kept: the child's look stands.
function stillThere(entry: string): boolean {
  try {
    quickLstat(entry);
    return true;
  } catch (error) {
    return isRuntimePermissionError(error);
  }
}

/**
 * Wraps `argv` so that it runs under bubblewrap, in one read view for every
 * process a tool starts (shell commands, jobs, checkers, the browser), deny by
 * default: an empty root with only {@linkcode SYSTEM_READ_VIEW} (read-only,
 * credential files and folders under it masked), `/dev` and `/proc` fresh (a
 * new PID namespace: only the sandbox's own processes), a private `/tmp`, the
 * caller's home an empty private folder, the `readable` paths read-only
 * (credential folders and other users' homes inside them masked), then the
 * writable paths bound read-write (so a workspace under `/tmp` or the home
 * folder stays visible), the protected paths of the workspace read-only
 * (placeholders where they do not exist yet), the policy's hidden paths
 * masked, every namespace unshared (the network kept only with `allowNet`),
 * all capabilities dropped, a new session unless the caller made one
 * (`callerSession`; so the command cannot push input into the caller's
 * terminal with TIOCSTI; the price is no job control), and killed when its
 * parent dies. Nothing else of the host is there: other homes, /root, /srv,
 * /opt, /var, /mnt, /media, tenant roots, other workspaces.
 *
 * With `mode: "off"`, or `"auto"` where bubblewrap does not work, `argv` comes
 * back unchanged with `sandboxed: false` and the reason; `"required"` then
 * throws `sandbox_unavailable` with the probe's error.
 *
 * Requires `--allow-run=bwrap` to probe bubblewrap, and `--allow-read` /
 * `--allow-write` for the workspace (to find and place protected paths).
 * Not public: tools start processes through the policy's process door.
 */
export async function sandboxArgv(argv: string[], options: SandboxOptions): Promise<SandboxedCommand> {
  if (argv.length === 0) throw new TypeError("sandboxArgv needs a command");
  if (options.mode === "off") {
    return {
      argv: [...argv],
      sandboxed: false,
      reason: 'the sandbox is switched off (sandbox: "off")',
      fds: [],
      release: noRelease,
      discard: noDiscard,
    };
  }
  if (options.mode !== "auto" && options.mode !== "required") {
    throw new TypeError(`Unknown sandbox mode ${JSON.stringify(options.mode)}`);
  }
  const binds = options.readOnlyBinds ?? [];
  for (
    const p of [
      options.workdir,
      ...options.writable,
      ...(options.readable ?? []),
      ...binds.flatMap((b) => [b.from, b.to]),
      ...(options.workspace ? [options.workspace] : []),
    ]
  ) {
    if (!isAbsoluteClean(p)) {
      throw new TypeError(
        `Sandbox paths must be absolute, got ${JSON.stringify(p)}`,
      );
    }
  }
  const status = await bubblewrapStatus();
  if (status.path === undefined) {
    if (options.mode === "auto") {
      return {
        argv: [...argv],
        sandboxed: false,
        reason: status.reason,
        fds: [],
        release: noRelease,
        discard: noDiscard,
      };
    }
    throw sandboxUnavailable(status.reason ?? "bubblewrap does not work here");
  }
  // Parents before children, so that a nested bind is not hidden by its parent's.
  const byDepth = (a: string, b: string) => a.split("/").length - b.split("/").length;
  const writable = [...new Set(options.writable.map((p) => path.normalize(p)))].sort(byDepth);
  const readable = [...new Set((options.readable ?? []).map((p) => path.normalize(p)))]
    .filter((p) => !writable.some((w) => isWithin(p, w)))
    .sort(byDepth);
  const workdir = path.normalize(options.workdir);
  const entries = (options.readOnlyEntries ?? []).map((p) => path.normalize(p));
  const ownFolders = (options.writableFolders ?? []).map((p) => path.normalize(p));
  // A workdir outside every bound path would not exist inside.
  const readOnlyWorkdir = [...writable, ...ownFolders, ...readable, ...entries].some((p) => isWithin(workdir, p))
    ? []
    : ["--ro-bind", workdir, workdir];
  const found = await secretMasks(options.freshLooks === true);
  // Only the masks inside what is bound read-only matter: nothing else of the host is there.
  const masks = secretMountArgs({
    folders: found.folders.filter((folder) => inReadView(folder, readable) && stillThere(folder)),
    files: found.files.filter((file) => inReadView(file, readable) && stillThere(file)),
  });
  // A checked tmpfs holds TMPFS_SLACK_BYTES more than the limit, the room the check after the command writes into.
  const tmpSize = options.tmpSize === undefined
    ? []
    : await tmpfsSizeArgs(status.path, options.tmpSize + (options.checkTmpfs ? TMPFS_SLACK_BYTES : 0));
  const check = options.checkTmpfs && options.tmpSize !== undefined && tmpSize.length > 0
    ? { limit: options.tmpSize }
    : undefined;
  // The home folder first, so that a readable or writable path inside it stays visible. Capped like /tmp: a
  // tmpfs without a size may take half the machine's memory, which no rlimit counts where no cgroup does.
  const homeTmpfs = options.privateHome !== false ? found.home : undefined;
  const home = homeTmpfs !== undefined ? ["--perms", "0700", ...tmpSize, "--tmpfs", homeTmpfs] : [];
  const resolver = options.allowNet ? await resolverOutsideView(readable) : [];
  const proxy = options.allowNet ? undefined : options.network?.proxy;
  // What runs inside: the command, behind the forwarder where egress goes through a proxy, with its kept descriptors.
  const inner = proxy ? forwarderArgv(proxy, argv) : argv;
  // What the sandbox's first process runs before the command: its ready line, then the closing of what it inherited.
  const opening = (options.announcesReady ? READY_LINE : "") + closingLine(options.keepDescriptors ?? []);
  const protectedRoot = options.workspace ?? writable[0];
  const plan = protectedRoot === undefined
    ? { mounts: [], watched: [] }
    : await protectedMounts(path.normalize(protectedRoot), options.protectedPaths ?? DEFAULT_PROTECTED_PATHS, {
      placeholders: options.workspace !== undefined,
      ...(options.listing && options.workspace !== undefined ? { listing: options.listing } : {}),
    });
  const mounts = [
    ...plan.mounts,
    ...readOnlyFolderMounts(options.readOnlyFolders ?? []),
    ...readOnlyEntryMounts(entries),
  ];
  let released: Promise<QuarantinedPath[]> | undefined;
  const free = () => closeMounts(mounts).then(closeOwnDescriptors).then(() => releasePlaceholders(mounts));
  const release = () =>
    released ??= free().then(() =>
      options.quarantine === undefined || options.workspace === undefined
        ? []
        : quarantineCreated(plan, options.quarantine, [
          path.normalize(options.workspace),
          path.dirname(options.quarantine),
        ])
    );
  const discard = () => (released ??= free().then(() => [])).then(() => {});
  const bound = protectedMountArgs(mounts, FIRST_MOUNT_FD);
  // The seccomp filter's descriptor after the mounts' (see policy/_seccomp.ts).
  const seccomp = options.seccomp === true && await seccompSupported(status.path) ? openSeccompProgram() : undefined;
  if (seccomp !== undefined) {
    bound.args.push("--seccomp", String(FIRST_MOUNT_FD + bound.fds.length));
    bound.fds.push(seccomp);
  }
  // The descriptors of the hidden paths' pins (see pinsByDescriptor), closed with the seccomp filter's.
  const pinFds: number[] = [];
  const closeOwnDescriptors = () => {
    for (const fd of [...(seccomp === undefined ? [] : [seccomp]), ...pinFds.splice(0)]) {
      try {
        fs.closeSync(fd);
      } catch {
        // closed already
      }
    }
  };
  try {
    const view = [...SYSTEM_READ_VIEW, ...readable];
    const hidden = options.workspace !== undefined && options.hiddenPaths?.length
      ? hiddenMountArgs(
        path.normalize(options.workspace),
        options.hiddenPaths,
        view,
        // Folders of the view the runtime may not list (narrow --allow-read) are listed by a child process.
        await listOutside(path.normalize(options.workspace), options.hiddenPaths, view),
      )
      : { pins: [], covers: [] };
    // Each pin by a descriptor of the folder itself, opened where getcwd() confirms its real path (path_changed when a
    // folder of it is a link now): bubblewrap resolves a source path on its own, later, and a command of the session
    // running meanwhile may have swapped the folder for a link to another tenant's workspace (or /etc), which it
    // would then bind writable into this sandbox.
    const pins = options.pinsByDescriptor === false
      ? hidden.pins.flatMap((dir) => ["--bind", dir, dir])
      : hidden.pins.flatMap((dir) => {
        pinFds.push(openFolderConfined(dir));
        bound.fds.push(pinFds.at(-1)!);
        return ["--bind-fd", String(FIRST_MOUNT_FD + bound.fds.length - 1), dir];
      });
    // Likewise the writable folders the caller made for the command where the session's commands write.
    const owned = ownFolders.flatMap((dir) => {
      pinFds.push(openFolderConfined(dir));
      bound.fds.push(pinFds.at(-1)!);
      return ["--bind-fd", String(FIRST_MOUNT_FD + bound.fds.length - 1), dir];
    });
    const checked = ["/tmp", "/dev/shm", ...(homeTmpfs !== undefined ? [homeTmpfs] : [])];
    // The file size the check (and tmpfsAtEnd) looks for a file grown past: only where a file of a folder can pass it
    // before the folder holds more than the limit (the defaults are equal, and the folder's check then names it).
    const grownPast = check && options.fileSize !== undefined && options.fileSize < check.limit
      ? options.fileSize
      : undefined;
    const userns = await noNestedUserns(status.path);
    // The session's user namespace, entered in front, whose limits bound the kernel objects counted per user
    // (inotify, fanotify), with a devpts of a bounded size where it has one: see policy/_kernel_objects.ts.
    const front = await options.kernelObjects?.front(status.path, userns) ?? NO_FRONT;
    const wrapped = [
      ...front.argv,
      status.path,
      ...front.bwrapArgs,
      ...systemViewMounts(),
      ...PRIVATE_MOUNTS.slice(0, -2),
      ...(front.ptys !== undefined ? DEVPTS_BIND : front.noTerminals ? NO_TERMINALS : []),
      ...await procCovers(),
      ...tmpSize,
      ...PRIVATE_MOUNTS.slice(-2),
      // /dev/shm capped like /tmp, and the rest of the fresh /dev read-only (its devices stay writable): else
      // files there would fill memory past every limit.
      ...(tmpSize.length ? ["--perms", "1777", ...tmpSize, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"] : []),
      ...home,
      ...readable.flatMap((p) => ["--ro-bind-try", p, p]),
      ...masks.before,
      ...resolver,
      ...readOnlyWorkdir,
      ...writable.flatMap((p) => ["--bind", p, p]),
      ...owned,
      ...pins,
      // After the writable binds: they may lie inside one (a cache inside a private folder).
      ...binds.flatMap((b) => ["--ro-bind-try", path.normalize(b.from), path.normalize(b.to)]),
      ...bound.args,
      ...hidden.covers,
      ...masks.after,
      ...(proxy ? proxyMountArgs(proxy) : []),
      // Last of the mounts: bubblewrap's root is a tmpfs of no size, writable by a command run as root, where
      // files would fill memory past tmpSize and, where no cgroup counts it, past every limit.
      ...ROOT_READ_ONLY,
      "--unshare-all",
      ...userns,
      ...(options.allowNet ? ["--share-net"] : []),
      ...CONFINEMENT,
      ...(options.callerSession ? [] : NEW_SESSION),
      "--chdir",
      workdir,
      "--",
      // Outside the forwarder, whose relay stays running beside the command.
      ...(check ? tmpfsCheck(checked, check.limit, inner, opening, grownPast) : closingInherited(inner, opening)),
    ];
    return {
      argv: wrapped,
      sandboxed: true,
      fds: bound.fds,
      release,
      discard,
      ...(check
        ? {
          tmpfsFolders: {
            folders: checked,
            limit: check.limit,
            ...(grownPast !== undefined ? { fileSize: grownPast } : {}),
          },
        }
        : {}),
    };
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * The `sandbox_unavailable` refusal: the sandbox is required but cannot run
 * here, with the probe's own error.
 */
export function sandboxUnavailable(reason: string): ToolError {
  return new ToolError(`The OS sandbox is required but unavailable: ${reason}`, {
    code: "sandbox_unavailable",
    kind: "policy",
    recoverable: false,
    recoveryHint: "Ask the user to install bubblewrap or to allow running without the sandbox.",
    details: { reason },
  });
}
