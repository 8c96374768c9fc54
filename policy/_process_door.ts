/**
 * The policy's process door (`ctx.policy.processes`): every process a
 * built-in tool starts is judged, sandboxed, spawned, bounded and released
 * here, in one order. A shell line goes through the command analysis; a
 * program the tool chose goes through the fence and, where it would run
 * unconfined, a person. Both get the sandbox's one read view (see
 * `sandbox.ts`) with the policy's hidden paths masked and the policy file's
 * extra read folders (`sandbox.read`, `paths.roots`).
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import {
  type ChoiceOutcome,
  type ConfirmRequest,
  type Fence,
  type Launcher,
  type LauncherRequest,
  type ProcessDoor,
  type ProcessRequest,
  type ProgramRequest,
  requireFence,
  type SandboxSetting,
  type StartedProcess,
  ToolError,
} from "@toolfence/core";
import type { Workspace } from "./workspace.ts";
import { commandEnvironment, envAssignments } from "./_process_env.ts";
import {
  captureOutput,
  createAllConfined,
  type GroupProcess,
  isExecutableFile,
  lstatConfined,
  mkdirsConfined,
  type OutputCapture,
  REPOSITORY_STORE_GLOBS,
  sandboxMakesSession,
  settlesWithin,
  spawnGroup,
  unlinkConfined,
  watchWorkspace,
  type WorkspaceWatch,
} from "@toolfence/internal";
import type { SandboxProxy } from "./egress/forwarder.ts";
import type { CommandAuthorization } from "./shell/authorize_command.ts";
import { isReadOnlyLine } from "./shell/read_only_line.ts";
import { limitCommand, type LimitedCommand, type ResourceLimits, type TmpfsAtEnd, type WrittenFile } from "./limits.ts";
import { TMPFS_SLACK_BYTES } from "./_limits.ts";
import { KernelObjectsHolder } from "./_kernel_objects.ts";
import {
  bubblewrapStatus,
  type QuarantinedPath,
  SANDBOX_READY,
  sandboxArgv,
  type SandboxedCommand,
  sandboxUnavailable,
  tmpfsAtEnd,
} from "./sandbox.ts";

/** What the door needs of its policy. */
export interface ProcessDoorDeps {
  /** The session's workspace. */
  workspace: Workspace;
  /** The runtime fence. */
  fence: Fence;
  /** The sandbox mode. */
  sandbox: SandboxSetting;
  /** The hidden globs, masked in every sandbox. */
  hiddenPaths: readonly string[];
  /** The protected-path globs and the read-only rules' (relative), read-only inside a shell command's sandbox. */
  protectedPaths: readonly string[];
  /** The resource limits of every process the door starts (`sandbox.limits`). */
  limits: ResourceLimits;
  /** Host folders the policy file names for the sandbox to show read-only. */
  sandboxRead: () => readonly string[];
  /** The real path of a model-given path for reading. */
  resolveForRead(path: string): Promise<string>;
  /** The command analysis of a line that runs in `cwd` (absolute); throws when the line may not run. */
  authorizeCommand(command: string, signal: AbortSignal | undefined, cwd: string): Promise<CommandAuthorization>;
  /** Asks a person a yes/no question. */
  confirm(req: ConfirmRequest, signal?: AbortSignal): Promise<ChoiceOutcome<boolean>>;
}

// What the start needs once the request is judged.
interface Judged {
  wrapped: SandboxedCommand;
  /** The command wrapped again, on a new look at the machine: for a sandbox bubblewrap failed to make. */
  rewrap(): Promise<SandboxedCommand>;
  /** The argv the sandbox wraps: the last elements of `wrapped.argv`. */
  command: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Whether the command runs with the workspace read-only (a reader's line, in the sandbox): nothing to compare. */
  readOnly: boolean;
  /** The window on the workspace that tells what the command changed (a shell line that may write). */
  watch?: WorkspaceWatch;
}

/**
 * The folder of the session temp dir that holds every output folder, the quarantine of created protected paths
 * (`protected-created`) and the browser's kept downloads (`downloads`, `tools/browser`) (`ProcessRequest.outputFolder`): read-only inside
 * each shell command's sandbox, bound by one descriptor. One mount for all of them: a writing line in a git checkout
 * already has five protected-path mounts, and past seven descriptors the shell in front cannot open them again, so
 * the spawn passes them and forks the whole server (a command there took 62 ms against 33 with one folder a mount).
 */
const CAPTURES = "output";

// How many times a command is started where bubblewrap fails to make its sandbox (see setupFailed).
const SANDBOX_ATTEMPTS = 2;
// How long the start waits for the sandbox to be made (its first process's SANDBOX_READY) before it hands the
// process on as started: a sandbox that takes longer on a loaded machine is not started again if it fails.
const READY_WAIT_MS = 10_000;

// Whether bubblewrap failed to make the sandbox of `process`: its stderr ended without SANDBOX_READY, after
// bubblewrap's own error, and it exited. Nothing of the command ran then: the ready line is the sandbox's first
// process's first act, before the command starts, so no command can forge a failure (and be run twice). Waits at
// most READY_WAIT_MS, and not past an abort.
async function setupFailed(process: GroupProcess, output: OutputCapture, signal?: AbortSignal): Promise<boolean> {
  let stop!: () => void;
  const stopped = new Promise<undefined>((done) => (stop = () => done(undefined)));
  const timer = setTimeout(stop, READY_WAIT_MS);
  signal?.addEventListener("abort", stop, { once: true });
  try {
    const outcome = await Promise.race([output.ready, stopped]);
    if (outcome === undefined || outcome.ready || !outcome.before.startsWith("bwrap: ")) return false;
    return await settlesWithin(process.exited, READY_WAIT_MS) && process.exit?.code !== 0;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
  }
}

// How long the end of a sandbox waits for the look at its tmpfs folders (see tmpfsAtEnd): a shell's spawn on a loaded
// machine, or a `find` through a tmpfs of many files, must not keep a command past its timeout.
const TMPFS_LOOK_MS = 2_000;

/** The door; see the module. */
export class PolicyProcessDoor implements ProcessDoor {
  readonly #deps: ProcessDoorDeps;
  /** The hidden globs and the repository's stores (one array: the glob matchers are cached by array). */
  readonly #hiddenWithStores: readonly string[];

  /** The user namespace of the session's sandboxes (see `KernelObjectsHolder`), made at the first. */
  readonly #kernelObjects: KernelObjectsHolder;

  /** A door for a policy's `deps`. */
  constructor(deps: ProcessDoorDeps) {
    this.#deps = deps;
    this.#kernelObjects = new KernelObjectsHolder(deps.workspace.workdir);
    this.#hiddenWithStores = Object.freeze([...deps.hiddenPaths, ...REPOSITORY_STORE_GLOBS]);
  }

  // The hidden paths of a process's sandbox: while paths are hidden, so is what the repository keeps of them, unless
  // a person allowed the process (a shell line a person confirmed). A checker or the browser no person allows: before,
  // their sandboxes showed the stores, and check_types of a file importing a link to `.svn/text-base/.env.svn-base`
  // named the hidden .env's words in its diagnostics ("Cannot find name 'TOKEN'").
  #hiddenPaths(personAllowed: boolean): readonly string[] {
    return this.#deps.hiddenPaths.length > 0 && !personAllowed ? this.#hiddenWithStores : this.#deps.hiddenPaths;
  }

  /** Ends what the door keeps for the session's sandboxes (their user namespace); the session's close calls it. */
  close(): Promise<void> {
    return this.#kernelObjects.close();
  }

  async start(request: ProcessRequest, signal?: AbortSignal): Promise<StartedProcess> {
    const tempDir = await this.#deps.workspace.tempDir();
    if (!/^[A-Za-z0-9_-]+$/.test(request.outputFolder)) {
      throw new TypeError(`An output folder is one plain name, got ${JSON.stringify(request.outputFolder)}`);
    }
    const judged = request.kind === "shell"
      ? await this.#judgeShell(request, tempDir, signal)
      : await this.#judgeProgram(request, tempDir, signal);
    const { cwd, env, watch } = judged;
    let wrapped = judged.wrapped;
    let limited: LimitedCommand | undefined;
    // The cgroup goes first (its counters are read as it goes), then the sandbox's placeholders. Only the
    // counters are waited for: the removal of the group's folders goes on (the session waits for it as it closes).
    const counted = () => Promise.resolve(limited?.counted());
    const release = () => counted().then(() => wrapped.release());
    try {
      const dir = path.join(tempDir, CAPTURES, request.outputFolder);
      const name = request.name ?? randomUUID();
      const stdoutPath = path.join(dir, `${name}.stdout`);
      const stderrPath = path.join(dir, `${name}.stderr`);
      const removeOutput = () => {
        for (const file of [stdoutPath, stderrPath]) removeOutputFile(file);
      };
      let process!: GroupProcess;
      let files!: OutputFiles;
      let output!: OutputCapture;
      for (let attempt = 1; attempt <= SANDBOX_ATTEMPTS; attempt++) {
        requireFence(this.#deps.fence, "run", wrapped.argv[0]);
        limited = await limitCommand(wrapped.argv, this.#deps.limits, {
          privateTmp: wrapped.sandboxed,
          tmpfsChecked: wrapped.tmpfsFolders !== undefined,
          descriptors: wrapped.fds,
          // The workspace's commands share a parent group (twice the limits): before, a session held 16 commands'
          // worth at once (four 100 MiB commands of one session ran together under memory 128 MiB).
          share: this.#deps.workspace.workdir,
          // The host folders it may write, whose disk it may not fill (no rlimit or cgroup bounds their bytes).
          disks: [this.#deps.workspace.workdir, tempDir],
        });
        requireFence(this.#deps.fence, "run", limited.argv[0]);
        signal?.throwIfAborted();
        files = openOutputFiles(dir, name, this.#deps.workspace.roots());
        try {
          process = await spawnGroup(limited.argv, {
            cwd,
            env,
            extraFds: limited.descriptors,
            diesWithLeader: wrapped.sandboxed,
            ...(request.kind === "program" && request.stdin !== undefined ? { input: request.stdin } : {}),
          });
        } catch (error) {
          closeOutputFiles(files);
          throw error;
        }
        // An abort that came while it was being started (the spawn waits a turn) stops it here: the caller's
        // listener is added only once this returns, and an aborted signal never fires again.
        if (signal?.aborted) {
          await process.terminate().catch(() => {});
          await process.exited;
          closeOutputFiles(files);
          removeOutput();
          signal.throwIfAborted();
        }
        const spawned = process;
        output = captureOutput(
          process,
          files,
          request.maxOutputBytes,
          () => void spawned.terminate(),
          wrapped.sandboxed ? SANDBOX_READY : undefined,
        );
        if (attempt === SANDBOX_ATTEMPTS || !await setupFailed(process, output, signal)) break;
        // bubblewrap could not make the sandbox, so nothing of the command ran: a mount's path it was planned on went
        // meanwhile (a private file of /etc masked on a look kept 10 s, a hidden file of the workspace a command of
        // the session removed). Before, the command failed with bubblewrap's error ("Can't create file at
        // /etc/ssh/ssh_host_..._key: Read-only file system"); now it starts again once, on a new look at the machine.
        await output.finished(spawned.exited.then(() => spawned.terminate()));
        closeOutputFiles(files);
        removeOutput();
        await counted().then(() => wrapped.discard());
        limited = undefined;
        wrapped = await judged.rewrap();
      }
      // What the sandbox's tmpfs folders hold as it is ended from outside (see tmpfsAtEnd), read before the end.
      let ended: TmpfsAtEnd = {};
      const folders = wrapped.tmpfsFolders;
      if (folders !== undefined) {
        const end = process.terminate.bind(process);
        const leader = process.pid;
        const started = process;
        let looked: Promise<unknown> | undefined;
        process.terminate = (graceMs) => {
          looked ??= started.exit !== undefined ? Promise.resolve() : settlesWithin(
            tmpfsAtEnd(leader, folders).then((found) => void (ended = found)),
            TMPFS_LOOK_MS,
          );
          return looked.then(() => end(graceMs));
        };
      }
      const bounded = limited!;
      bounded.watch(() => void process.terminate());
      // A process's group never outlives its leader: whatever it left running is ended.
      const groupGone = process.exited.then(() => process.terminate());
      const quarantined: QuarantinedPath[] = [];
      const gone = output.finished(groupGone)
        .finally(() => closeOutputFiles(files))
        .then(release)
        .then((moved) => void quarantined.push(...moved));
      const hit = bounded.hit;
      const call = request.kind === "shell" ? request.call : undefined;
      let reported = false;
      // The files the command created or grew, from its change report: one past the file size limit shows a write
      // the kernel refused, which the command may not have said (see LimitedCommand.hit).
      let written: WrittenFile[] = [];
      return {
        changes: (reporter) =>
          gone.then(async () => {
            if (watch === undefined || reported) return [];
            reported = true;
            const changes = await watch.finish(reporter ?? call!);
            written = changes.flatMap(({ path, before, after }) =>
              after?.type === "file" && (before === null || before.type !== "file" || before.size < after.size)
                ? [{ path, size: after.size }]
                : []
            );
            return changes;
          }),
        process,
        output,
        gone,
        quarantined,
        stdoutPath,
        stderrPath,
        openOutput: (stream) => openOutputFile(stream === "stdout" ? stdoutPath : stderrPath, files[stream].identity),
        removeOutput,
        sandboxed: wrapped.sandboxed,
        ...(wrapped.reason !== undefined && !wrapped.sandboxed ? { sandboxReason: wrapped.reason } : {}),
        cwd,
        resourceLimit: () =>
          gone.then(() =>
            hit(
              process.exit ?? { code: null, signal: null },
              () => openOutputFile(stderrPath, files.stderr.identity),
              written,
              ended,
            )
          ),
      };
    } catch (error) {
      await release();
      await watch?.abandon();
      throw error;
    }
  }

  // Whether the sandbox checks its tmpfs folders after a command: its write there must pass the file size limit.
  #checksTmpfs(): boolean {
    return this.#deps.limits.fileSizeBytes >= TMPFS_SLACK_BYTES;
  }

  async launcher(request: LauncherRequest): Promise<Launcher> {
    const { workspace } = this.#deps;
    const mode = this.#deps.sandbox === "required" ? "required" : request.sandbox ?? this.#deps.sandbox;
    let real = request.executable;
    try {
      real = fs.realpathSync(request.executable);
    } catch {
      // the path as given
    }
    const wrapped = await sandboxArgv([request.executable], {
      kernelObjects: this.#kernelObjects,
      workdir: request.privateDir,
      writable: [request.privateDir],
      // The program's own folders, when they lie outside the system folders (a downloaded build).
      readable: [
        ...new Set([path.dirname(real), path.dirname(request.executable)]),
        ...request.readable,
        ...this.#deps.sandboxRead(),
      ],
      workspace: workspace.workdir,
      hiddenPaths: this.#hiddenPaths(false),
      protectedPaths: [],
      privateHome: false,
      // Playwright talks to the browser over a pipe on descriptors 3 and 4 (--remote-debugging-pipe).
      keepDescriptors: [3, 4],
      // The argv lives in a launcher script, which cannot pass this process's descriptors.
      pinsByDescriptor: false,
      allowNet: request.network,
      mode,
      tmpSize: this.#deps.limits.tmpBytes,
    });
    // Nothing is bound by descriptor (no protected paths), so the argv can live in a script.
    await wrapped.release();
    if (!wrapped.sandboxed) {
      if (mode === "required") throw sandboxUnavailable(wrapped.reason ?? "bubblewrap does not work");
      return { path: request.executable, sandboxed: false };
    }
    // The rlimits a browser tolerates (file size, open files, processes), and no
    // cgroup: it outlives every call, so nobody would remove its group.
    const limited = await limitCommand(wrapped.argv.slice(0, -1), this.#deps.limits, {
      privateTmp: true,
      profile: "browser",
      cgroup: false,
    });
    requireFence(this.#deps.fence, "run", limited.argv[0]);
    const argv = limited.argv;
    const script = `#!/bin/sh\nexec ${argv.map(quote).join(" ")} ${quote(request.executable)} "$@"\n`;
    const file = path.join(request.privateDir, "launcher.sh");
    await writeFile(file, script, { mode: 0o700 });
    return { path: file, sandboxed: true };
  }

  async #judgeShell(request: ProcessRequest & { kind: "shell" }, tempDir: string, signal?: AbortSignal) {
    const { workspace } = this.#deps;
    // The environment is checked first, so that nobody is asked about a command
    // that would be refused anyway.
    const env = commandEnvironment(this.#deps.fence, tempDir, request.env, workspace.workdir);
    const cwd = await this.#deps.resolveForRead(request.cwd ?? ".");
    // A cwd that is missing (or below a file) is the model's to fix, as a file tool's path is: before, the stat's
    // raw ENOENT went out as command_start_failed, without a hint. Looked at in its pinned folder, never through a
    // link: a stat by the path followed a folder of it that a command swapped for a link after the resolution, and
    // "does not exist", "is not a folder" or a run told what lay where the link led (another tenant's path).
    // A root of the workspace is the real path fixed when the session began: no folder of it lies inside for a command
    // to swap, and its parent may lie outside what the runtime lets this process read (`--allow-read=W`), where a
    // pinned look-up would be refused.
    const stat = workspace.roots().includes(cwd) ? statOrUndefined(cwd) : lstatConfined(cwd);
    if (stat === undefined) {
      throw new ToolError(`cwd ${request.cwd} does not exist`, {
        code: "not_found",
        recoveryHint: "Pass an existing folder inside the workspace as cwd (make it with mkdir), or leave it out.",
        details: { cwd },
      });
    }
    if (!stat.isDirectory()) {
      throw new ToolError(`cwd ${request.cwd} is not a folder`, {
        code: "not_a_directory",
        kind: "semantic",
        recoveryHint: "Pass a folder inside the workspace as cwd, or leave it out.",
        details: { cwd },
      });
    }
    // Variables from the model are judged as assignments before the command; its paths from the folder it runs in.
    const authorization = await this.#deps.authorizeCommand(
      envAssignments(request.env) + request.command,
      signal,
      cwd,
    );
    // A reader's line sees the workspace read-only: it can change nothing there, so nothing needs protecting
    // from it or comparing after it.
    const reader = isReadOnlyLine(authorization);
    const shell = await findShell(env.PATH);
    if (request.egress) Object.assign(env, request.egress.env);
    const command = [shell, "-c", request.command];
    // The output captures of every call (this one's, other commands', jobs', searches', checkers') lie in the temp
    // dir the command may write: their folder is made before it starts and read-only inside, so that it cannot
    // rewrite what the server reads back as another call's output. Before, `printf 'all 120 tests passed' > <a job's
    // stdout_path>` turned that job's "TESTS FAILED" into a pass in bash_read.
    const captures = path.join(tempDir, CAPTURES);
    mkdirsConfined(captures, workspace.roots());
    // The window on the workspace opens before the sandbox is planned, so that the plan reads the session's listing
    // of the workspace for its protected paths (and what the command made of them) instead of walking it twice.
    const sandboxes = this.#deps.sandbox !== "off" && (await bubblewrapStatus()).path !== undefined;
    const watch = reader && sandboxes ? undefined : await watchWorkspace(request.call, { sandboxed: sandboxes });
    const sandbox = (fresh: boolean) =>
      sandboxArgv(command, {
        kernelObjects: this.#kernelObjects,
        readOnlyFolders: [captures],
        ...(request.egress ? { network: request.egress.network as { proxy: SandboxProxy } } : {}),
        workdir: cwd,
        writable: reader ? [tempDir] : [workspace.workdir, tempDir],
        readable: [...this.#deps.sandboxRead(), ...(reader ? [workspace.workdir] : [])],
        workspace: workspace.workdir,
        // In the captures' folder, read-only inside: the result names each moved file for a person to look at, and
        // before, the next command rewrote it there (`echo forged > <moved_to>`).
        ...(reader ? {} : { quarantine: path.join(captures, "protected-created") }),
        mode: this.#deps.sandbox,
        protectedPaths: reader ? [] : this.#deps.protectedPaths,
        ...(watch && !reader ? { listing: watch.listing } : {}),
        // An automatic yes or the MCP client's is no person's (before, under autoConfirm any line that asked, `eval
        // 'grep -ra TOKEN .'`, printed the plain copy Subversion keeps of a hidden .env).
        hiddenPaths: this.#hiddenPaths(authorization.via === "confirmed" && authorization.source === "user"),
        // Unless spawnGroup starts it in a session of its own, with no terminal (see sandboxMakesSession).
        callerSession: !sandboxMakesSession(),
        tmpSize: this.#deps.limits.tmpBytes,
        // A tmpfs that filled is named whatever the command printed (see LimitedCommand.hit). Not after a reader's line,
        // which writes nothing but its output (and what sort spills to its temp files, whose refusal sort says): the
        // check is one more shell in the sandbox, about 2 ms of every command (bubblewrap's `echo hello` 7.05 against
        // 9.18 ms), and most of an agent's lines read.
        checkTmpfs: this.#checksTmpfs() && !reader,
        fileSize: this.#deps.limits.fileSizeBytes,
        // fallocate refused: it reserves the host's disk faster than the disk watch reads it.
        seccomp: true,
        announcesReady: true,
        freshLooks: fresh,
      });
    const wrapped = await sandbox(false).catch(async (error) => {
      await watch?.abandon();
      throw error;
    });
    // Temporary files (mktemp, sort's spills, Python's tempfile, Node's os.tmpdir()) go to the sandbox's private
    // /tmp, capped at tmpSize, as a checker's do: the session temp dir lies on the host's disk with no bound (before,
    // mktemp and tempfile wrote 40 MiB there under tmpSize 4 MiB). It stays writable by its own path.
    if (wrapped.sandboxed) env.TMPDIR = "/tmp";
    return {
      wrapped,
      rewrap: () => sandbox(true),
      command,
      cwd,
      env,
      readOnly: reader && wrapped.sandboxed,
      ...(watch ? { watch } : {}),
    } satisfies Judged;
  }

  async #judgeProgram(request: ProgramRequest, tempDir: string, signal?: AbortSignal): Promise<Judged> {
    const { workspace } = this.#deps;
    const argv = request.argv;
    if (argv.length === 0 || !path.isAbsolute(argv[0])) {
      throw new TypeError(`A program request needs the program's absolute path, got ${JSON.stringify(argv[0])}`);
    }
    requireFence(this.#deps.fence, "run", argv[0]);
    if (workspace.areaOf(request.cwd) === undefined) {
      throw new ToolError(`A program may start only inside the workspace, not in ${request.cwd}`, {
        code: "outside_workspace",
        kind: "policy",
        recoverable: false,
        details: { cwd: request.cwd },
      });
    }
    const privateDir = path.join(tempDir, "checks", "private");
    // As the output folder (see start): made without following a link a command put in its place.
    mkdirsConfined(privateDir, workspace.roots(), 0o700);
    // The program is bound and started under a spelling of its path that is not
    // Deno's execPath: Deno's node:child_process rewrites the arguments of any
    // command line that contains its own executable (adding `run -A`).
    const program = `${path.dirname(argv[0])}/./${path.basename(argv[0])}`;
    const command = [program, ...argv.slice(1)];
    const readOnlyBinds = request.readOnlyBinds ? await request.readOnlyBinds(privateDir) : [];
    const sandbox = (fresh: boolean) =>
      sandboxArgv(command, {
        kernelObjects: this.#kernelObjects,
        workdir: request.cwd,
        writable: [],
        // By descriptor: a background command of the session swapped it for a link to another tenant's workspace
        // (checks/private -> ../../tenants/bob), and bound by path the checker's cache was written there.
        writableFolders: [privateDir],
        readable: [
          workspace.workdir,
          // Its folder, not the file: an argument that is Deno's own execPath would be rewritten (see above).
          path.dirname(argv[0]),
          ...this.#deps.sandboxRead(),
        ],
        // What it reads in the workspace or the temp dir, by descriptor: bound by path, a folder on the way that a
        // background command swapped for a link (d -> ../bob/sub) after the judge had bubblewrap bind another tenant's
        // file, which check_types then parsed (a syntax error at bob's line 1, column 14).
        readOnlyEntries: request.readable ?? [],
        readOnlyBinds,
        workspace: workspace.workdir,
        hiddenPaths: this.#hiddenPaths(false),
        protectedPaths: [],
        privateHome: false,
        mode: this.#deps.sandbox,
        // Unless spawnGroup starts it in a session of its own, with no terminal (see sandboxMakesSession).
        callerSession: !sandboxMakesSession(),
        tmpSize: this.#deps.limits.tmpBytes,
        checkTmpfs: this.#checksTmpfs(),
        fileSize: this.#deps.limits.fileSizeBytes,
        seccomp: true,
        announcesReady: true,
        freshLooks: fresh,
      });
    const wrapped = await sandbox(false);
    if (!wrapped.sandboxed) {
      await this.#allowUnconfined(request, wrapped.reason ?? "the sandbox is off", signal);
    }
    const env = {
      ...commandEnvironment(this.#deps.fence, tempDir, {}, workspace.workdir),
      NO_COLOR: "1",
      ...(wrapped.sandboxed ? { HOME: privateDir, TMPDIR: "/tmp" } : {}),
      ...(request.privateEnv ? request.privateEnv(privateDir) : {}),
      ...request.env,
    };
    return {
      wrapped: wrapped.sandboxed ? wrapped : { ...wrapped, argv: [...argv] },
      rewrap: () => sandbox(true),
      command,
      cwd: request.cwd,
      env,
      readOnly: false,
    };
  }

  async #allowUnconfined(request: ProgramRequest, reason: string, signal?: AbortSignal): Promise<void> {
    if (request.unconfined === "refuse") throw sandboxUnavailable(reason);
    const program = path.basename(request.argv[0]);
    const outcome = await this.#deps.confirm({
      title: "Run a checker without the OS sandbox",
      message: `${program} would run without the OS sandbox (${reason}). It would see every file you can read ` +
        "and could use the network (registries named in the project's configuration). Run it anyway?",
      defaultChoice: false,
      requirePerson: true,
    }, signal);
    if (outcome.choice && outcome.source === "user") return;
    throw new ToolError(
      `${program} was not run: it needs the OS sandbox, and the user did not allow running it without`,
      {
        code: "permission_denied",
        kind: "policy",
        status: "skipped",
        recoverable: false,
        recoveryHint: "Do not retry; ask the user to install bubblewrap, or check another way.",
        details: { program: request.argv[0], reason },
      },
    );
  }
}

function quote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

// A command's two output files, by descriptor, with which file each is (device and inode).
interface OutputFiles {
  stdout: { fd: number; identity: string };
  stderr: { fd: number; identity: string };
}

const READ_CAPTURE = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);

function identityOf(stat: fs.Stats): string {
  return `${stat.dev}:${stat.ino}`;
}

// Removes an output file in its pinned folder: the command may have made the folder a link (to a folder outside
// holding a file of the same name), which a removal by path would follow. Then, with the file gone, or with a
// folder of the command's in its place, nothing is removed: what is left in the temp dir goes with it.
function removeOutputFile(file: string): void {
  try {
    unlinkConfined(file);
  } catch {
    // path_changed, ENOENT, EISDIR: see above
  }
}

// The output file at `file` for reading, if it is still the one made for the command (`identity`). The command can
// write the session temp dir: it may have put a link there (to a file outside its sandbox, which the server can
// read), a FIFO, or another file of its own, in place of the file or of the folder above it.
function openOutputFile(file: string, identity: string): number {
  let fd: number;
  try {
    fd = fs.openSync(file, READ_CAPTURE);
  } catch (error) {
    throw outputReplaced(file, error);
  }
  let stat: fs.Stats;
  try {
    stat = fs.fstatSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    throw outputReplaced(file, error);
  }
  if (!stat.isFile() || identityOf(stat) !== identity) {
    fs.closeSync(fd);
    throw outputReplaced(file, new Error("another file is in its place"));
  }
  return fd;
}

function outputReplaced(file: string, error: unknown): ToolError {
  return new ToolError(`The command's output could not be read back: ${(error as Error)?.message ?? error}`, {
    code: "output_unavailable",
    recoverable: false,
    recoveryHint: "Do not touch the output files of the session temp dir while a command runs; run it again.",
    details: { file, cause: String(error) },
    cause: error,
  });
}

// Synchronously, as the folder made before them and the working folder's
// check: one system call each, where each asynchronous one waited its turn in
// the runtime's thread pool before every command.
// Never through a link: the temp dir is the commands' to change, and a folder they made a link would lead the
// output files (a job's stay while it runs) out of the workspace. Both files in one pinned step; the folder is made
// (confined too) only when it is missing, before the first command that uses it.
function openOutputFiles(dir: string, name: string, roots: readonly string[]): OutputFiles {
  const names = [`${name}.stdout`, `${name}.stderr`];
  let fds: number[];
  try {
    fds = createAllConfined(dir, names, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    mkdirsConfined(dir, roots);
    fds = createAllConfined(dir, names, 0o600);
  }
  const [stdout, stderr] = fds;
  return {
    stdout: { fd: stdout, identity: identityOf(fs.fstatSync(stdout)) },
    stderr: { fd: stderr, identity: identityOf(fs.fstatSync(stderr)) },
  };
}

// Once, when the command's output is drained (or it never started).
function closeOutputFiles(files: OutputFiles): void {
  for (const { fd } of [files.stdout, files.stderr]) {
    try {
      fs.closeSync(fd);
    } catch {
      // A failed close loses nothing: every byte was written synchronously.
    }
  }
}

const shells = new Map<string, string>();

// bash when it is on the PATH the command gets, else the POSIX shell. Under a
// fence that hides the folders, the name is left for the runtime to find.
async function findShell(searchPath: string | undefined): Promise<string> {
  const key = searchPath ?? "";
  const known = shells.get(key);
  if (known) return known;
  const found = await searchShell(searchPath);
  shells.set(key, found);
  return found;
}

async function searchShell(searchPath: string | undefined): Promise<string> {
  let hidden = false;
  for (const dir of (searchPath ?? "").split(":")) {
    if (!path.isAbsolute(dir)) continue;
    try {
      if (await isExecutableFile(path.join(dir, "bash"))) return "bash";
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === undefined) hidden = true;
    }
  }
  return hidden ? "bash" : "/bin/sh";
}

// The folder's stat, or undefined where nothing is (ENOENT) or a part of the path is a file (ENOTDIR).
function statOrUndefined(at: string): fs.Stats | undefined {
  try {
    return fs.statSync(at);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}
