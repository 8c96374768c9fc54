// Finding and running ripgrep: the binary of the `@vscode/ripgrep` npm
// package, else an `rg` on the PATH or in the usual places. ripgrep walks the
// tree in parallel and lists the files that match; grep then reads those files
// itself, so both engines produce lines the same way. It runs as a program
// request of the policy's process door, in the sandbox's read view (the
// workspace read-only, the hidden paths masked), never started here.

import { Buffer } from "node:buffer";
import fs from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import { runtimeFence } from "@toolfence/policy";
import type { Fence, ToolContext } from "@toolfence/core";
import { NOT_UTF8_REASON, PATH_MAX, type Skipped } from "./_walk.ts";
import { stopOnAbort } from "../_shared/abort.ts";

// ripgrep names each path it could not read on stderr; enough is kept to report them.
const STDERR_CHARS = 64_000;

// The door's bound on ripgrep's output (file names): past it the list would
// not be complete, and the built-in engine searches instead.
const OUTPUT_LIMIT_BYTES = 64 * 1024 * 1024;

const FALLBACK_PLACES = ["/usr/bin/rg", "/usr/local/bin/rg", "/opt/homebrew/bin/rg", "/bin/rg"];

async function candidates(): Promise<string[]> {
  const found: string[] = [];
  try {
    // Reading the module needs --allow-env (it looks at npm_config_arch) and
    // read access to node_modules; without them the PATH is next.
    const module = await import("@vscode/ripgrep") as { rgPath?: string };
    if (module.rgPath) found.push(module.rgPath);
  } catch {
    // not installed for this platform, or not readable under the fence
  }
  try {
    for (const dir of (process.env.PATH ?? "").split(path.delimiter)) if (dir) found.push(path.join(dir, "rg"));
  } catch {
    // no --allow-env for PATH
  }
  return [...new Set([...found, ...FALLBACK_PLACES])];
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/**
 * The first ripgrep binary that `fence` lets run and that exists; undefined
 * when there is none. Candidates the fence closes are never looked at, so no
 * runtime permission prompt can appear. Whether it runs (and is recent
 * enough) is learnt through the process door, see {@linkcode ripgrepMatchingFiles}.
 */
export async function findRipgrep(fence: Fence = runtimeFence): Promise<string | undefined> {
  for (const file of await candidates()) {
    if (!path.isAbsolute(file) || !fence.query("run", file).allowed) continue;
    if (await isFile(file)) return file;
  }
  return undefined;
}

interface RunResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/**
 * Runs ripgrep to its end through the process door (a program request, the
 * sandbox's read view; where the sandbox cannot run the door refuses and the
 * caller searches another way). Undefined when it gave no complete answer: its
 * output passed the door's bound, or a signal or resource limit ended it.
 */
async function run(
  ctx: ToolContext,
  rg: string,
  args: string[],
  cwd: string,
  stdin: string | undefined,
): Promise<RunResult | undefined> {
  const base = ctx.workspace.workdir;
  const started = await ctx.policy.processes.start({
    kind: "program",
    argv: [rg, ...args],
    cwd,
    // A search of the temp dir reads it; the workspace is in the view already.
    ...(path.relative(base, cwd).startsWith("..") ? { readable: [cwd] } : {}),
    ...(stdin === undefined ? {} : { stdin }),
    unconfined: "refuse",
    maxOutputBytes: OUTPUT_LIMIT_BYTES,
    outputFolder: "search",
  }, ctx.signal);
  const stopListening = stopOnAbort(ctx.signal, started.process);
  try {
    const exit = await started.process.exited;
    await started.gone;
    ctx.signal.throwIfAborted();
    if (exit.code === null || started.output.limitReached || await started.resourceLimit()) return undefined;
    // By the door's descriptors, never by path: another command of the session may write the folder they lie in.
    // And only the bytes the capture wrote there: that command may grow the files too.
    const { kept } = started.output;
    const stdout = readOutput(started.openOutput("stdout"), kept.stdout);
    // A character is at most 4 bytes of UTF-8: enough for STDERR_CHARS.
    const stderr = readOutput(started.openOutput("stderr"), Math.min(kept.stderr, 4 * STDERR_CHARS));
    return { code: exit.code, stdout, stderr: stderr.toString("utf8").slice(0, STDERR_CHARS) };
  } finally {
    stopListening();
    void started.process.terminate();
    await started.gone.catch(() => {});
    // Through the door, never by path: a command of the session may have made their folder a link.
    started.removeOutput();
  }
}

// The first `kept` bytes of an output file (what the door's capture wrote there: file names, bounded by its output
// limit), by its descriptor (closed here). Never the whole file: it lies in the session temp dir, where a sandboxed
// command of the session can write, and one that grew it to 1 GiB (a sparse truncate, instant) while ripgrep ran had
// the server read it all and split it at every NUL: 2.2 GiB of server memory and its event loop stalled 75 s a call.
function readOutput(fd: number, kept: number): Buffer {
  try {
    const buffer = Buffer.alloc(Math.min(kept, fs.fstatSync(fd).size));
    let done = 0;
    while (done < buffer.length) {
      const n = fs.readSync(fd, buffer, done, buffer.length - done, done);
      if (n === 0) break;
      done += n;
    }
    return buffer.subarray(0, done);
  } finally {
    fs.closeSync(fd);
  }
}

// Binaries whose version was read: whether each is recent enough.
const recentEnough = new Map<string, boolean>();

// ripgrep 11 or newer (for `--no-require-git`), asked once per binary; a
// refusal of the door is not remembered (another session's policy may differ).
async function requireRecent(ctx: ToolContext, rg: string): Promise<void> {
  let recent = recentEnough.get(rg);
  if (recent === undefined) {
    const version = await run(ctx, rg, ["--version"], ctx.workspace.workdir, undefined);
    recent = Number(/ripgrep (\d+)\./.exec(version?.stdout.toString() ?? "")?.[1]) >= 11;
    if (version !== undefined) recentEnough.set(rg, recent);
  }
  if (!recent) {
    throw new ToolError(`${rg} is not a ripgrep that runs here (11 or newer is needed)`, {
      code: "engine_unavailable",
      recoverable: false,
      recoveryHint: "Use the default engine, or install ripgrep 11 or newer.",
      details: { ripgrep: rg },
    });
  }
}

/** What ripgrep is asked for. */
export interface RipgrepQuery {
  /** The workspace area root; ripgrep runs there. */
  base: string;
  /** The folder to search, beneath `base`. */
  root: string;
  /** The pattern in ripgrep's syntax. */
  rust: string;
  /** Honour .gitignore files. */
  skipIgnored: boolean;
  /** The rules of .gitignore files above `root`, rebased to `base` (see `rebasedIgnoreText`). */
  parentRules: string;
  /** A file-name glob that ripgrep can pre-filter on (a superset of what grep keeps). */
  nameGlob?: string;
}

/** What ripgrep found: the matching files, and what it could not read. */
export interface RipgrepFiles {
  /** Paths relative to the root. */
  files: string[];
  /** Paths (relative to the root) ripgrep could not read or name, with why. */
  skipped: Skipped[];
}

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true });

function relativeTo(prefix: string, p: string): string {
  return p.startsWith(prefix) ? p.slice(prefix.length) : p === prefix.slice(0, -1) ? "" : p;
}

// "rg: ./a/b: Permission denied (os error 13)": the path and the reason. A name may hold line breaks, so an error
// runs from "rg: " at the start of a line to the first "(os error N)" that ends one, over as many lines as its path
// takes: read line by line, a folder named `x<LF>0` split the error of the masked `x<LF>0/.env` in two, the second half
// read as ripgrep's own failure, and the call answered search_failed with ripgrep's whole stderr in its details,
// naming every file the sandbox hid.
const PATH_ERRORS = /^rg: ([^]*?): ([^:\n]*?) \(os error (\d+)\)$/gm;

// ripgrep's stderr as the paths it could not read and the lines of its other errors.
function readStderr(stderr: string): { paths: { path: string; reason: string; errno: string }[]; other: string[] } {
  const paths = [...stderr.matchAll(PATH_ERRORS)].map((m) => ({ path: m[1], reason: m[2], errno: m[3] }));
  const other = stderr.replace(PATH_ERRORS, "").split("\n").filter((line) => line.trim() !== "");
  return { paths, other };
}

function stderrSkips(
  errors: readonly { path: string; reason: string; errno: string }[],
  prefix: string,
  complete: boolean,
): Skipped[] {
  const out: Skipped[] = [];
  for (const error of errors) {
    const reason = error.errno === "36"
      ? `its path is longer than the system limit of ${PATH_MAX} bytes, so it cannot be opened`
      : error.reason.toLowerCase();
    out.push({ path: relativeTo(prefix, error.path), reason });
  }
  if (!complete) out.push({ path: "", reason: "ripgrep reported more paths it could not read than are listed" });
  return out;
}

/**
 * The files under `root` that ripgrep finds a match in, relative to `root`.
 * Hidden files are searched, `.git` never is, symlinks are not followed, and
 * only .gitignore files inside the workspace count (no global or parent
 * settings, no `.ignore`/`.rgignore`, no git repository required). ripgrep
 * runs through the process door; undefined when it gave no complete answer
 * (see `run`). Throws the door's refusals (`sandbox_unavailable`, ...),
 * `engine_unavailable` for a ripgrep that is too old, and `search_failed`.
 */
export async function ripgrepMatchingFiles(
  ctx: ToolContext,
  rg: string,
  query: RipgrepQuery,
): Promise<RipgrepFiles | undefined> {
  await requireRecent(ctx, rg);
  const rootRel = path.relative(query.base, query.root);
  const args = ["--no-config", "--files-with-matches", "--null", "--hidden", "--crlf", "--glob", "!.git"];
  let stdin: string | undefined;
  if (query.skipIgnored) {
    args.push("--no-require-git", "--no-ignore-global", "--no-ignore-exclude", "--no-ignore-dot", "--no-ignore-parent");
    if (query.parentRules.trim() !== "") {
      args.push("--ignore-file", "/dev/stdin");
      stdin = query.parentRules;
    }
  } else args.push("--no-ignore");
  if (query.nameGlob) args.push("--type-add", `toolfence:${query.nameGlob}`, "--type", "toolfence");
  args.push("--regexp", query.rust, "--", rootRel === "" ? "." : rootRel);
  const result = await run(ctx, rg, args, query.base, stdin);
  if (result === undefined) return undefined;
  // Exit status 2 with paths it could not read is a search that went on around them; anything else failed.
  const { paths: pathErrors, other: otherErrors } = readStderr(result.stderr);
  // ripgrep exits 0 (matches), 1 (none, saying nothing) or 2 (errors). Another status, or a 1 with words that are no
  // path's error, is the sandbox's or the limits' own failure (bubblewrap exits 1 when it cannot set up): no answer,
  // and the caller searches another way. Before, a sandbox that failed to start read as "No matches".
  if (result.code > 2 || (result.code === 1 && otherErrors.length > 0)) return undefined;
  if (result.code === 2 && result.stdout.length === 0 && otherErrors.length > 0) {
    throw new ToolError(`ripgrep failed: ${otherErrors[0]}`, {
      code: "search_failed",
      recoveryHint: "Simplify the pattern or the path.",
      // Its own errors only: the paths it could not read include those the sandbox hides.
      details: { args, stderr: otherErrors.join("\n") },
    });
  }
  const prefix = rootRel === "" ? "./" : rootRel + "/";
  const files: string[] = [];
  const skipped = stderrSkips(pathErrors, prefix, result.stderr.length < STDERR_CHARS);
  let start = 0;
  for (let end = result.stdout.indexOf(0); end !== -1; start = end + 1, end = result.stdout.indexOf(0, start)) {
    const bytes = result.stdout.subarray(start, end);
    let name: string;
    try {
      name = fatalUtf8.decode(bytes);
    } catch {
      // A name that is not UTF-8: no string names it for the runtime's file functions.
      skipped.push({ path: relativeTo(prefix, bytes.toString("utf8")), reason: NOT_UTF8_REASON });
      continue;
    }
    // Only names beneath the searched folder are read: nothing ripgrep prints can lead grep elsewhere.
    const rel = relativeTo(prefix, name);
    if (name.startsWith(prefix) && !rel.split("/").includes("..")) files.push(rel);
  }
  return { files, skipped };
}
