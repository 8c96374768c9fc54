/**
 * The one door every process of a tool goes through (`ctx.policy.processes`):
 * a tool says what it wants to run, and the policy judges it, chooses the OS
 * sandbox's read view, spawns it in a process group of its own, bounds its
 * output and reports what it left behind. Two kinds of request, judged
 * differently: a shell line the model wrote (the command analysis, which may
 * ask a person), and a program the tool chose with its argv declared (no
 * shell analysis; the same read view, hidden-path masks, limits and output
 * bounds). No tool builds a sandbox or spawns by itself.
 *
 * @module
 */
import type { SandboxSetting } from "./services.ts";
import type { ToolContext } from "./context.ts";
import type { FileChange } from "./effects.ts";
/** How a process ended. */
export interface ProcessExit {
  /** The exit code, or null when a signal ended it. */
  code: number | null;
  /** The signal that ended it, or null. */
  signal: string | null;
}

/** A started process group. */
export interface RunningProcess {
  /** The leader's pid, which is also the group id. */
  readonly pid: number;
  /** Settles when the leader has exited. */
  readonly exited: Promise<ProcessExit>;
  /** The leader's exit once known. */
  readonly exit: ProcessExit | undefined;
  /** Ends every process left in the group: SIGTERM, then SIGKILL after `graceMs`. Resolves once it is gone. */
  terminate(graceMs?: number): Promise<void>;
}

/** Output being copied from a process's pipes into its files, within a byte limit. */
export interface BoundedOutput {
  /** The byte limit of stdout and stderr together. */
  readonly limitBytes: number;
  /** Whether the output passed the limit (the rest was dropped, the process stopped). */
  readonly limitReached: boolean;
  /** Bytes kept so far, per stream. */
  readonly kept: { stdout: number; stderr: number };
}

/** A resource limit (the policy file's `sandbox.limits`) a process hit, and what showed it. */
export interface ResourceLimitHit {
  /**
   * Which limit: `memory`, `cpuSeconds`, `fileSize`, `processes`, `openFiles` or `tmpSize`; or `disk`, the free
   * space and inodes of the host's file systems it writes (the workspace, the temp dir), kept above half of what
   * they were.
   */
  limit: "memory" | "cpuSeconds" | "fileSize" | "processes" | "openFiles" | "tmpSize" | "disk";
  /** Its value, as the message says it (`4GiB`, `120 s`). */
  value: string;
  /** What showed it: the signal, the exit code, the cgroup's counter, or the error line. */
  evidence: string;
}

/** A protected path a sandboxed command created, and where it was moved. */
export interface MovedPath {
  /** Where the command created it. */
  path: string;
  /** Where it is now. */
  movedTo: string;
}

/** What every request says about the process's output and start. */
export interface RequestCommon {
  /** Extra environment variables (judged: a variable that steers programs is refused). */
  env?: Record<string, string>;
  /** Byte limit of stdout and stderr together. */
  maxOutputBytes: number;
  /** Folder inside the session temp dir where the output files go. */
  outputFolder: string;
  /** Base name of the output files; default a random one. */
  name?: string;
}

/** A shell line the model wrote: judged by the command analysis (which may ask a person), run with `bash -c`. */
export interface ShellRequest extends RequestCommon {
  /** Which kind. */
  kind: "shell";
  /** The command line. */
  command: string;
  /**
   * The call it runs for: right before the spawn, after every check, the door
   * takes the workspace's "before" image for it, and reports what the command
   * changed to it (see {@linkcode StartedProcess.changes}).
   */
  call: ToolContext;
  /** Working folder, as the model gave it (relative to the workspace); default the workdir. */
  cwd?: string;
  /**
   * The command's egress proxy, when the policy gives commands one: the
   * sandbox's network option (the policy's own `SandboxProxy`) and the proxy
   * variables of its environment.
   */
  egress?: { readonly network: { readonly proxy: unknown }; readonly env: Readonly<Record<string, string>> };
}

/**
 * A program the tool chose, with its argv declared: no shell analysis, the
 * workspace read-only, a private writable folder, no network.
 */
export interface ProgramRequest extends RequestCommon {
  /** Which kind. */
  kind: "program";
  /** The argv; the first element is the program's absolute path. */
  argv: readonly string[];
  /** The folder it starts in (absolute, inside the workspace). */
  cwd: string;
  /** Absolute paths it reads besides the system folders and the workspace (bound read-only). */
  readable?: readonly string[];
  /** Host folders bound read-only at another place, e.g. a cache inside the private folder. */
  readOnlyBinds?: (privateDir: string) => Promise<readonly { from: string; to: string }[]>;
  /** Variables that name the private writable folder (inside the sandbox too). */
  privateEnv?: (privateDir: string) => Record<string, string>;
  /** Text given on its standard input (on a pipe), which is then closed; without it there is no input. */
  stdin?: string;
  /**
   * Where the sandbox does not run (`off`, or unavailable): `ask` asks a
   * person (never answered automatically); `refuse` throws
   * `sandbox_unavailable`.
   */
  unconfined: "ask" | "refuse";
}

/** What one request to run is. */
export type ProcessRequest = ShellRequest | ProgramRequest;

/** A started process, from {@linkcode ProcessDoor.start}. */
export interface StartedProcess {
  /** Its process group. */
  readonly process: RunningProcess;
  /** The output being kept, within its byte limit. */
  readonly output: BoundedOutput;
  /** Settles when the group is gone, its output is in the files and the sandbox is released. */
  readonly gone: Promise<void>;
  /** Protected paths the command created, moved into the session temp dir once `gone` settles. */
  readonly quarantined: MovedPath[];
  /** File with its standard output. */
  readonly stdoutPath: string;
  /** File with its standard error. */
  readonly stderrPath: string;
  /**
   * A descriptor, for reading, of the file with its standard output or error: the very file the door made,
   * opened without following a link and without blocking. Read the output through it, never by its path: the
   * file lies in the session temp dir, which the command may write, and a link put in its place would lead the
   * read wherever it points, past the sandbox. Throws `output_unavailable` when the file there is another one.
   * The caller closes it.
   */
  openOutput(stream: "stdout" | "stderr"): number;
  /**
   * Removes the two output files, each in its pinned folder, never through a link: remove them this way, never by
   * their paths, for the same reason as {@linkcode openOutput}. A folder that is a link now is left alone, as is
   * what it leads to; a file already gone is no error.
   */
  removeOutput(): void;
  /** Whether it runs under the OS sandbox. */
  readonly sandboxed: boolean;
  /** Why it runs without the sandbox, when it does. */
  readonly sandboxReason?: string;
  /** The working folder it started in (a real path). */
  readonly cwd: string;
  /**
   * Once `gone` has settled: what the process changed in the workspace (the
   * door compares the workspace from right before the spawn with now), each
   * change recorded in `reporter`'s call (default the shell request's
   * `call`: a job's changes go to the first call that sees it ended).
   * Reported once; later calls get `[]`, and so does a program (its
   * workspace is read-only).
   */
  changes(reporter?: ToolContext): Promise<FileChange[]>;
  /**
   * The resource limit it hit, if any: settles once `gone` has (the door
   * applies the limits to every process it starts, and reads what ended it).
   */
  resourceLimit(): Promise<ResourceLimitHit | undefined>;
}

/** A long-lived program another library starts (the browser): the launcher to give it. */
export interface LauncherRequest {
  /** The program's absolute path. */
  executable: string;
  /** Its own private folder (writable; its profile and downloads). */
  privateDir: string;
  /** Paths it reads besides the system folders (the workspace and the temp dir, read-only). */
  readable: readonly string[];
  /** Keep the network (the browser reaches it through its judging proxy). */
  network: boolean;
  /** The sandbox mode for this program (the developer's option); never weaker than a policy's `required`. */
  sandbox?: SandboxSetting;
}

/** A launcher from {@linkcode ProcessDoor.launcher}. */
export interface Launcher {
  /** The file to start instead of the program (the program itself when unconfined). */
  path: string;
  /** Whether the program runs under the OS sandbox. */
  sandboxed: boolean;
}

/**
 * The process door of a session's policy (`ctx.policy.processes`).
 * `@toolfence/policy`'s `Policy` implements it.
 */
export interface ProcessDoor {
  /**
   * Judges `request`, then starts it in the sandbox's one read view, in a
   * process group of its own, output to two files in the session temp dir
   * within the byte limit. Throws a `ToolError` (`permission_denied`,
   * `forbidden_env`, `sandbox_unavailable`, `fence_denied`, `spawn_failed`, ...)
   * and starts nothing when it may not run.
   */
  start(request: ProcessRequest, signal?: AbortSignal): Promise<StartedProcess>;
  /**
   * A launcher for a long-lived program another library starts (the
   * browser): the same read view (hidden paths masked), the program's own
   * folder added. Throws `sandbox_unavailable` under `sandbox: "required"`
   * where the sandbox cannot run.
   */
  launcher(request: LauncherRequest): Promise<Launcher>;
}
