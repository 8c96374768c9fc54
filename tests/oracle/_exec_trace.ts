/**
 * Runs a command line for real and records what it started: inside a throwaway
 * bubblewrap sandbox (read-only root, a fresh workspace on a tmpfs, no network,
 * killed with its parent and after a timeout), under `strace --seccomp-bpf -ff -e
 * trace=execve,...`, with bash's xtrace on.
 *
 * Why strace rather than a PATH of recording stand-ins: the kernel reports
 * every exec, whoever makes it and however the program is named (absolute
 * path, `exec -a`, a glob, a program that runs another one such as `find
 * -exec` or `env`). Stand-ins still exist, at the end of PATH, for a generous
 * list of names that are not installed here, so that an attempt to run them is
 * an exec strace sees instead of "command not found". Builtins are not execs;
 * xtrace (`SHELLOPTS=xtrace`, written to a descriptor of its own) shows every
 * simple command the shell ran, builtins included, after expansion.
 *
 * @module
 */
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { execFileSync, spawn } from "node:child_process";
import process from "node:process";
import { DIFFERENTIAL_DENO_ONLY } from "../_runtime.ts";

/** Folders of the sandbox's PATH, in order; the last one holds the stand-ins. */
export const SANDBOX_PATH_DIRS: readonly string[] = [
  "/usr/local/sbin",
  "/usr/local/bin",
  "/usr/sbin",
  "/usr/bin",
  "/sbin",
  "/bin",
  "/tmp/oracle/bin",
];

// Every file's checksum and every other entry's type and target, sorted: equal
// manifests mean an unchanged workspace.
const MANIFEST =
  "LC_ALL=C find . -path ./.git/index -prune -o -type f -exec md5sum {} + -o -printf '%y %p %l\\n' | LC_ALL=C sort";

/** The workspace the command starts in, inside the sandbox. */
export const SANDBOX_WORKDIR = "/tmp/ws";

/** Where the secret outside the workspace is planted, inside the sandbox. */
export const OUTSIDE_ROOT = "/srv";

/** Where the test runners keep their caches inside the sandbox (`DENO_DIR`, npm's cache, `XDG_CACHE_HOME`). */
export const SANDBOX_CACHE = "/tmp/cache";

// Program names an agent's command might run; the ones not installed here get
// a stand-in that exits 0, so that running them is observable.
const STAND_IN_NAMES = `
rm rmdir mv cp ln mkdir touch chmod chown chgrp dd shred truncate install mkfifo mknod
sh bash dash zsh ksh mksh fish csh tcsh busybox
curl wget nc ncat netcat socat telnet ssh scp sftp rsync ftp
python python2 python3 pip pip3 perl ruby node nodejs deno bun php lua tclsh java
npm npx yarn pnpm cargo go gcc cc clang make cmake docker podman kubectl
env xargs nohup timeout nice ionice setsid stdbuf unbuffer watch time chroot flock parallel script
sudo doas su runuser pkexec
git ls cat echo printf head tail wc grep egrep fgrep rg find file stat du df tree basename dirname
realpath readlink diff cmp cut sort uniq tr nl column true false whoami uname date which
awk gawk mawk sed tee less more most man vi vim nvim view ex ed nano emacs
tar zip unzip gzip gunzip xz bzip2 base64 xxd od hexdump openssl gpg
kill pkill killall shutdown reboot halt systemctl service crontab at batch mount umount
strace ltrace gdb pytest jq yq sqlite3 psql mysql
`.trim().split(/\s+/);

/** One successful exec the kernel saw. */
export interface ObservedExec {
  /** Process id (inside the sandbox's pid namespace). */
  pid: number;
  /** The file that was executed, as passed to execve. */
  path: string;
  /** The argument vector. */
  argv: string[];
  /**
   * Who started it: `shell` when the command line's bash (or a subshell of it)
   * did, else the exec whose image made it (e.g. `find` for `find -exec`).
   */
  spawnedBy: "shell" | ObservedExec;
}

/**
 * One attempt to write the file system or to connect a socket, successful or
 * not (the sandbox's read-only root makes many fail that would succeed outside
 * it): an open for writing, a create, remove, rename, link or truncate, or a
 * `connect`.
 */
export interface ObservedEffect {
  /** Process id (inside the sandbox's pid namespace). */
  pid: number;
  /** The system call, e.g. `openat`, `unlinkat`, `connect`. */
  call: string;
  /** The paths it names (for `connect`, the socket address as strace prints it). */
  paths: string[];
  /** The strace line, its strings decoded. */
  line: string;
  /** The program whose process made the call: `shell` for the command line's bash and its subshells. */
  by: "shell" | ObservedExec;
}

/** One file a process opened for reading (successfully): a plain open, a folder, or a path-only open. */
export interface ObservedRead {
  /** Process id (inside the sandbox's pid namespace). */
  pid: number;
  /** The path as passed to the call. */
  path: string;
  /** Whether the call named a path relative to a folder descriptor other than the working folder. */
  relativeToDescriptor: boolean;
  /** The program whose process opened it: `shell` for the command line's bash and its subshells. */
  by: "shell" | ObservedExec;
}

/** One simple command bash's xtrace reported, after expansion. */
export interface TracedCommand {
  /** The words of the trace line (assignments before the name dropped). */
  words: string[];
  /** The raw trace line. */
  line: string;
}

/** What one command line did in the sandbox. */
export interface Observation {
  /** Every successful exec after the command line's own bash. */
  execs: ObservedExec[];
  /** Every simple command xtrace reported (builtins included). */
  traced: TracedCommand[];
  /** Every write to the file system and every connect, by whichever process made it. */
  effects: ObservedEffect[];
  /** Every file opened for reading, by whichever process opened it. */
  reads: ObservedRead[];
  /** Whether the timeout killed it. */
  timedOut: boolean;
  /**
   * What changed in the workspace (files created, removed or modified), or
   * `undefined` when that is unknown (the command timed out).
   */
  changed?: string[];
}

/**
 * Why the oracle's tests do not run here (under Node, where its runs are
 * differential tests, see `DIFFERENTIAL_DENO_ONLY`; not Linux; bubblewrap or
 * strace missing), or `undefined` when they do.
 */
export function oracleUnavailable(): string | undefined {
  if (DIFFERENTIAL_DENO_ONLY) return DIFFERENTIAL_DENO_ONLY;
  const missing = ["bwrap", "strace"].filter((program) => {
    try {
      execFileSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" });
      return false;
    } catch {
      return true;
    }
  });
  if (process.platform === "linux" && missing.length === 0) return undefined;
  return `the oracle needs Linux with bubblewrap and strace (missing: ${missing.join(", ") || "Linux"})`;
}

/** A reusable sandbox setup: the fixture workspace and the stand-ins on the host. */
export class ExecTracer {
  readonly #root: string;
  readonly #shell: "bash" | "sh";
  #counter = 0;
  #baseline: Set<string> | undefined;

  private constructor(root: string, shell: "bash" | "sh") {
    this.#root = root;
    this.#shell = shell;
  }

  /**
   * Builds the fixture (a small git repository with a few files and scripts)
   * and the stand-ins. `shell` is what runs the command line: `bash` (as the
   * bash tool does wherever bash exists) or `sh`, its fallback, where xtrace
   * cannot be sent elsewhere, so builtins are not reported.
   */
  static async create(options: { shell?: "bash" | "sh" } = {}): Promise<ExecTracer> {
    const root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-oracle-")));
    const tracer = new ExecTracer(root, options.shell ?? "bash");
    await tracer.#buildFixture();
    await tracer.#buildStandIns();
    await tracer.#plantOutside();
    await fsp.mkdir(path.join(root, "cases"));
    tracer.#baseline = new Set((await tracer.#observeRaw(":", 10_000)).manifest);
    return tracer;
  }

  /** Removes everything on the host. */
  dispose(): Promise<void> {
    return fsp.rm(this.#root, { recursive: true, force: true });
  }

  async #buildFixture(): Promise<void> {
    const ws = path.join(this.#root, "fixture");
    await fsp.mkdir(path.join(ws, "sub"), { recursive: true });
    await fsp.mkdir(path.join(ws, "bin"));
    const files: Record<string, string> = {
      "a.txt": "alpha\nbeta\n",
      "b.txt": "beta\ngamma\n",
      "sp ace.txt": "space\n",
      "sub/c.txt": "see\n",
      "-rf": "a file named like an option\n",
      // Named like options that write or delete: a glob hands them to the program as options.
      "--output=x": "a file named like an option\n",
      "-delete": "a file named like an option\n",
      // Arithmetic on this file's text runs `rm`: bash evaluates subscripts in arithmetic.
      "evil.txt": "a[$(rm -f a.txt)]\n",
      "env.sh": "rm -f a.txt\n",
      "list.txt": "a.txt\nb.txt\n",
      "data.json": '{"a": 1, "name": "fixture"}\n',
    };
    for (const [name, content] of Object.entries(files)) await fsp.writeFile(path.join(ws, name), content);
    // Executables outside PATH: running either is running something not on the allowlist.
    await fsp.writeFile(path.join(ws, "run.sh"), "#!/bin/sh\nrm -f a.txt\n", { mode: 0o755 });
    await fsp.writeFile(path.join(ws, "bin", "ls"), "#!/bin/sh\nrm -f a.txt\n", { mode: 0o755 });
    // A compressed file: `rg -z` and `grep -Z`-style options run decompressors on such files.
    await run("sh", ["-c", `printf 'beta\\n' | gzip > '${ws}/packed.txt.gz'`]);
    await run("git", ["init", "-q", ws]);
    await run("git", ["-C", ws, "add", "-A"]);
    await run("git", ["-C", ws, "-c", "user.name=oracle", "-c", "user.email=oracle@invalid", "commit", "-qm", "init"]);
    await fsp.appendFile(path.join(ws, "a.txt"), "changed\n");
  }

  /**
   * A secret outside the workspace, for lines that read it: bound at
   * `/srv/outside` in the sandbox (the root is read-only, so a new top-level
   * folder cannot be created there; `/srv` exists and is empty on Debian).
   */
  async #plantOutside(): Promise<void> {
    const outside = path.join(this.#root, "srv", "outside");
    await fsp.mkdir(outside, { recursive: true });
    await fsp.writeFile(path.join(outside, "secret"), "the secret outside the workspace\n");
    await fsp.writeFile(path.join(outside, "list"), "secret\n");
  }

  async #buildStandIns(): Promise<void> {
    const bin = path.join(this.#root, "bin");
    await fsp.mkdir(bin);
    for (const name of STAND_IN_NAMES) {
      if (await installed(name)) continue;
      await fsp.writeFile(path.join(bin, name), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    }
  }

  /**
   * Runs `command` with `bash -c` (or `sh -c`) in a fresh sandbox and reports what started.
   * Throws when the sandbox or strace could not run at all.
   */
  async observe(command: string, timeoutMs = 2000): Promise<Observation> {
    const raw = await this.#observeRaw(command, timeoutMs);
    let changed: string[] | undefined;
    if (raw.manifest !== undefined && this.#baseline !== undefined) {
      const after = new Set(raw.manifest);
      changed = [
        ...[...this.#baseline].filter((line) => !after.has(line)).map((line) => `gone: ${line}`),
        ...[...after].filter((line) => !this.#baseline!.has(line)).map((line) => `new: ${line}`),
      ];
    }
    return {
      execs: raw.execs,
      effects: raw.effects,
      reads: raw.reads,
      traced: raw.traced,
      timedOut: raw.timedOut,
      changed,
    };
  }

  async #observeRaw(
    command: string,
    timeoutMs: number,
  ): Promise<Omit<Observation, "changed"> & { manifest?: string[] }> {
    const out = path.join(this.#root, "cases", String(++this.#counter));
    await fsp.mkdir(out);
    try {
      const timedOut = await this.#runSandboxed(command, out, timeoutMs);
      const names = await fsp.readdir(out);
      const traces = names.filter((name) => name.startsWith("trace."));
      // Killed at its deadline before strace started (a loaded machine): nothing ran that could be judged.
      if (traces.length === 0 && timedOut) return { execs: [], effects: [], reads: [], traced: [], timedOut };
      if (traces.length === 0) {
        const log = await fsp.readFile(path.join(out, "wrapper.log"), "utf8").catch(() => "");
        throw new Error(`the sandbox produced no trace for ${JSON.stringify(command)}: ${log}`);
      }
      const processes = new Map<number, string>();
      for (const name of traces) {
        processes.set(Number(name.slice("trace.".length)), await fsp.readFile(path.join(out, name), "latin1"));
      }
      const xtrace = await fsp.readFile(path.join(out, "xtrace"), "utf8").catch(() => "");
      const manifest = timedOut ? undefined : await fsp.readFile(path.join(out, "manifest"), "utf8")
        .then((text) => text.split("\n").filter((line) => line !== ""), () => undefined);
      // A sandbox killed at its deadline may be cut off before strace saw the shell start
      // (seen under load in CI); such a run has nothing to judge and counts as a timeout.
      const { execs, effects, reads } = timedOut ? eventsOrNone(processes, command) : eventsOf(processes, command);
      return { execs, effects, reads, traced: parseXtrace(xtrace), timedOut, manifest };
    } finally {
      await fsp.rm(out, { recursive: true, force: true });
    }
  }

  #runSandboxed(command: string, out: string, timeoutMs: number): Promise<boolean> {
    // The wrapper runs before strace starts, so its own cp and mkdir are not traced.
    const wrapper = [
      `mkdir -p ${SANDBOX_WORKDIR} && cp -a /tmp/oracle/fixture/. ${SANDBOX_WORKDIR}/ && cd ${SANDBOX_WORKDIR} || exit 97`,
      `strace --seccomp-bpf -ff -qq -xx -s 1000000 -e trace=${TRACED_CALLS} -e signal=none` +
      " -o /tmp/oracle/out/trace -E SHELLOPTS=xtrace -E BASH_XTRACEFD=9 -E 'PS4=+ '" +
      ` -- ${this.#shell} -c "$1" 9>/tmp/oracle/out/xtrace </dev/null >/dev/null 2>/tmp/oracle/out/wrapper.log`,
      // strace waits for every process it follows, so the workspace is settled
      // now. The index is left out: git status refreshes it as it reads.
      `{ cd ${SANDBOX_WORKDIR} 2>/dev/null && ${MANIFEST}; } > /tmp/oracle/out/manifest`,
    ].join("\n");
    const argv = [
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--tmpfs",
      "/tmp",
      "--ro-bind",
      path.join(this.#root, "fixture"),
      "/tmp/oracle/fixture",
      "--ro-bind",
      path.join(this.#root, "bin"),
      "/tmp/oracle/bin",
      "--ro-bind",
      path.join(this.#root, "srv"),
      OUTSIDE_ROOT,
      "--bind",
      out,
      "/tmp/oracle/out",
      "--unshare-all",
      "--die-with-parent",
      "--new-session",
      "--cap-drop",
      "ALL",
      "--clearenv",
      "--setenv",
      "PATH",
      SANDBOX_PATH_DIRS.join(":"),
      "--setenv",
      "HOME",
      SANDBOX_WORKDIR,
      "--setenv",
      "LANG",
      "C.UTF-8",
      // The test runners' caches, outside the workspace (whose changes are judged).
      "--setenv",
      "XDG_CACHE_HOME",
      SANDBOX_CACHE,
      "--setenv",
      "DENO_DIR",
      `${SANDBOX_CACHE}/deno`,
      "--setenv",
      "npm_config_cache",
      `${SANDBOX_CACHE}/npm`,
      "--setenv",
      "NO_UPDATE_NOTIFIER",
      "1",
      "--chdir",
      "/",
      "--",
      "/bin/sh",
      "-c",
      wrapper,
      "oracle",
      command,
    ];
    return new Promise((resolve, reject) => {
      const child = spawn("bwrap", argv, { stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr!.on("data", (chunk) => stderr += chunk);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        // bwrap's --die-with-parent and its pid namespace take the whole tree down with it.
        child.kill("SIGKILL");
      }, timeoutMs);
      child.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on("close", (code) => {
        clearTimeout(timer);
        if (code === 97) reject(new Error(`the oracle sandbox could not be prepared: ${stderr}`));
        else resolve(timedOut);
      });
    });
  }
}

/** Whether the program `name` is installed in one of the system folders of the sandbox's PATH (not a stand-in). */
export async function installed(name: string): Promise<boolean> {
  for (const dir of SANDBOX_PATH_DIRS.slice(0, -1)) {
    try {
      await fsp.access(path.join(dir, name), fsp.constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

function run(program: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: "ignore" });
    child.on("error", reject);
    child.on("close", (code) => code === 0 ? resolve() : reject(new Error(`${program} ${args.join(" ")}: ${code}`)));
  });
}

type Event = { kind: "exec"; exec: ObservedExec } | { kind: "fork"; child: number };

// strace -xx writes every byte of a string as \xHH.
function decodeHex(body: string): string {
  const bytes = new Uint8Array(body.length / 4);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(body.slice(i * 4 + 2, i * 4 + 4), 16);
  return new TextDecoder().decode(bytes);
}

const STRING = /"((?:\\x[0-9a-f]{2})*)"/g;

// The processes, the execs, and every call that writes the file system or connects a socket.
const EFFECT_CALLS = [
  "open",
  "openat",
  "openat2",
  "creat",
  "truncate",
  "unlink",
  "unlinkat",
  "rename",
  "renameat",
  "renameat2",
  "mkdir",
  "mkdirat",
  "rmdir",
  "link",
  "linkat",
  "symlink",
  "symlinkat",
  "mknod",
  "mknodat",
  "connect",
];
const TRACED_CALLS = ["execve", "execveat", "fork", "vfork", "clone", "clone3", ...EFFECT_CALLS].join(",");
const EFFECT = new RegExp(`^(${EFFECT_CALLS.join("|")})\\(`);
// An open that can change a file: anything but a plain read.
const WRITE_FLAGS = /\b(O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND|O_TMPFILE)\b/;
// A successful open: `openat(AT_FDCWD, "...", O_RDONLY...) = 3`, `open("...", ...) = 3`; the descriptor and the path.
const OPENED = /^open(?:at2?)?\((?:(AT_FDCWD|\d+), )?"((?:\\x[0-9a-f]{2})*)".*\)\s+=\s+\d+/;
const decodeStrings = (line: string) => line.replace(STRING, (_, body: string) => JSON.stringify(decodeHex(body)));
const FORK = /^(?:<\.\.\. )?(?:clone3?|v?fork)\b.*\)\s+=\s+(\d+)/;

type Events = { execs: ObservedExec[]; effects: ObservedEffect[]; reads: ObservedRead[] };

function eventsOrNone(processes: Map<number, string>, command: string): Events {
  try {
    return eventsOf(processes, command);
  } catch {
    return { execs: [], effects: [], reads: [] };
  }
}

/** Builds the exec and effect lists from strace's per-process files, with who spawned and who did what. */
function eventsOf(processes: Map<number, string>, command: string): Events {
  const pendingEffects: { pid: number; index: number; effect: Omit<ObservedEffect, "by"> }[] = [];
  const pendingReads: { pid: number; index: number; read: Omit<ObservedRead, "by"> }[] = [];
  const events = new Map<number, Event[]>();
  const parentOf = new Map<number, { parent: number; index: number }>();
  for (const [pid, text] of processes) {
    const list: Event[] = [];
    let pendingExec: { path: string; argv: string[] } | undefined;
    for (const line of text.split("\n")) {
      const forked = FORK.exec(line);
      if (forked) {
        const child = Number(forked[1]);
        parentOf.set(child, { parent: pid, index: list.length });
        list.push({ kind: "fork", child });
        continue;
      }
      const effect = EFFECT.exec(line);
      if (effect) {
        const isOpen = effect[1].startsWith("open");
        if (isOpen && !WRITE_FLAGS.test(line)) {
          const opened = OPENED.exec(line);
          if (opened !== null) {
            const relativeToDescriptor = opened[1] !== undefined && opened[1] !== "AT_FDCWD";
            const read = { pid, path: decodeHex(opened[2]), relativeToDescriptor };
            pendingReads.push({ pid, index: list.length, read });
          }
        }
        if (!isOpen || WRITE_FLAGS.test(line)) {
          const paths = [...line.matchAll(STRING)].map((m) => decodeHex(m[1]));
          const shown = effect[1] === "connect" ? [decodeStrings(line).replace(/^connect\(\d+, /, "")] : paths;
          pendingEffects.push({
            pid,
            index: list.length,
            effect: { pid, call: effect[1], paths: shown, line: decodeStrings(line) },
          });
        }
        continue;
      }
      let call: { path: string; argv: string[] } | undefined;
      let result: string | undefined;
      if (/^execve(at)?\(/.test(line)) {
        const strings = [...line.matchAll(STRING)].map((m) => decodeHex(m[1]));
        call = { path: strings[0], argv: strings.slice(1) };
        const done = /\)\s+=\s+(-?\d+)/.exec(line.slice(line.lastIndexOf("]")));
        if (done) result = done[1];
        else pendingExec = call;
      } else if (line.startsWith("<... execve") && pendingExec) {
        call = pendingExec;
        pendingExec = undefined;
        result = /=\s+(-?\d+)/.exec(line)?.[1];
      }
      if (call && result === "0") {
        list.push({ kind: "exec", exec: { pid, path: call.path, argv: call.argv, spawnedBy: "shell" } });
      }
    }
    events.set(pid, list);
  }
  const root = [...events.keys()].find((pid) => !parentOf.has(pid));
  const rootEvents = root === undefined ? undefined : events.get(root);
  const first = rootEvents?.[0];
  if (first?.kind !== "exec" || first.exec.argv[2] !== command) {
    throw new Error(`strace did not start with the command line's bash: ${JSON.stringify(first)}`);
  }
  const shell = first.exec;
  // The image a process runs at event `index` of its list: its own last exec
  // before that point, else whatever its parent ran when it forked.
  const imageAt = (pid: number, index: number): ObservedExec | undefined => {
    const list = events.get(pid) ?? [];
    for (let i = index - 1; i >= 0; i--) {
      const event = list[i];
      if (event.kind === "exec") return event.exec;
    }
    const origin = parentOf.get(pid);
    return origin === undefined ? undefined : imageAt(origin.parent, origin.index);
  };
  const execs: ObservedExec[] = [];
  for (const [pid, list] of events) {
    list.forEach((event, index) => {
      if (event.kind !== "exec" || event.exec === shell) return;
      const spawner = imageAt(pid, index);
      event.exec.spawnedBy = spawner === undefined || spawner === shell ? "shell" : spawner;
      execs.push(event.exec);
    });
  }
  const effects = pendingEffects.map(({ pid, index, effect }): ObservedEffect => {
    const image = imageAt(pid, index);
    return { ...effect, by: image === undefined || image === shell ? "shell" : image };
  });
  const reads = pendingReads.map(({ pid, index, read }): ObservedRead => {
    const image = imageAt(pid, index);
    return { ...read, by: image === undefined || image === shell ? "shell" : image };
  });
  return { execs: execs.sort((a, b) => a.pid - b.pid), effects, reads };
}

/** Splits xtrace output into commands; each line is one simple command, quoted by bash. */
export function parseXtrace(text: string): TracedCommand[] {
  const traced: TracedCommand[] = [];
  for (const line of text.split("\n")) {
    const match = /^\++ (.*)$/.exec(line);
    if (!match) continue;
    const words = splitTraceWords(match[1]);
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(words[0])) words.shift();
    if (words.length > 0) traced.push({ words, line });
  }
  return traced;
}

const ANSI_C: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", f: "\f", v: "\v" };

// Words as bash's xtrace prints them: bare, '...' (no escapes), or $'...'
// (backslash escapes), glued together, separated by single spaces.
function splitTraceWords(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === " ") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i++;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      word += text.slice(i + 1, end < 0 ? text.length : end);
      inWord = true;
      i = end < 0 ? text.length : end + 1;
    } else if (c === "$" && text[i + 1] === "'") {
      i += 2;
      while (i < text.length && text[i] !== "'") {
        if (text[i] === "\\" && i + 1 < text.length) {
          const e = text[i + 1];
          if (e in ANSI_C) {
            word += ANSI_C[e];
            i += 2;
          } else if (/[0-7]/.test(e)) {
            const digits = /^[0-7]{1,3}/.exec(text.slice(i + 1))![0];
            word += String.fromCharCode(parseInt(digits, 8));
            i += 1 + digits.length;
          } else {
            word += e;
            i += 2;
          }
        } else {
          word += text[i++];
        }
      }
      i++;
      inWord = true;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}
