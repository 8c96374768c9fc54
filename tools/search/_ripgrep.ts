// Finding and running ripgrep: the binary of the `@vscode/ripgrep` npm
// package, else an `rg` on the PATH or in the usual places. ripgrep walks the
// tree in parallel and lists the files that match; grep then reads those files
// itself, so both engines produce lines the same way.

import { spawn } from "node:child_process";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import { runtimeFence } from "@toolfence/policy";
import type { Fence } from "@toolfence/core";
import { NOT_UTF8_REASON, PATH_MAX, type Skipped } from "./_walk.ts";

// ripgrep names each path it could not read on stderr; enough is kept to report them.
const STDERR_CHARS = 64_000;

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

// Candidates that were tried: whether each ran and is recent enough.
const verified = new Map<string, Promise<boolean>>();

function verify(file: string): Promise<boolean> {
  let answer = verified.get(file);
  if (!answer) {
    answer = run(file, ["--version"], undefined, undefined, new AbortController().signal).then(
      (result) => Number(/ripgrep (\d+)\./.exec(result.stdout.toString())?.[1]) >= 11,
      () => false,
    );
    verified.set(file, answer);
  }
  return answer;
}

/**
 * The first ripgrep (11 or newer, for `--no-require-git`) that `fence` lets
 * run and that starts; undefined when there is none. Candidates the fence
 * closes are never started, so no runtime permission prompt can appear.
 */
export async function findRipgrep(fence: Fence = runtimeFence): Promise<string | undefined> {
  for (const file of await candidates()) {
    if (!path.isAbsolute(file) || !fence.query("run", file).allowed) continue;
    if (await verify(file)) return file;
  }
  return undefined;
}

interface RunResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

function run(file: string, args: string[], cwd: string | undefined, stdin: string | undefined, signal: AbortSignal) {
  return new Promise<RunResult>((resolve, reject) => {
    const child = spawn(file, args, { cwd, env: {}, stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    const onAbort = () => child.kill("SIGKILL");
    signal.addEventListener("abort", onAbort, { once: true });
    child.stdout!.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr!.on("data", (chunk: Buffer) => {
      if (err.length < STDERR_CHARS) err += chunk.toString();
    });
    child.on("error", (error) => {
      signal.removeEventListener("abort", onAbort);
      reject(error);
    });
    child.on("close", (code) => {
      signal.removeEventListener("abort", onAbort);
      if (signal.aborted) reject(signal.reason);
      else resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
    if (stdin !== undefined) {
      // ripgrep may exit before reading its ignore rules (a pattern it refuses); its exit code and stderr say why,
      // and the broken pipe must not become an uncaught error (Node raises it; Deno does not).
      child.stdin!.on("error", () => {});
      child.stdin!.end(stdin);
    }
  });
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
  signal: AbortSignal;
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

// "rg: ./a/b: Permission denied (os error 13)": the path and the reason.
const PATH_ERROR = /^rg: (.*): ([^:]*?) \(os error (\d+)\)$/;

function stderrSkips(stderr: string, prefix: string, complete: boolean): Skipped[] {
  const out: Skipped[] = [];
  for (const line of stderr.split("\n")) {
    const m = PATH_ERROR.exec(line);
    if (!m) continue;
    const reason = m[3] === "36"
      ? `its path is longer than the system limit of ${PATH_MAX} bytes, so it cannot be opened`
      : m[2].toLowerCase();
    out.push({ path: relativeTo(prefix, m[1]), reason });
  }
  if (!complete) out.push({ path: "", reason: "ripgrep reported more paths it could not read than are listed" });
  return out;
}

/**
 * The files under `root` that ripgrep finds a match in, relative to `root`.
 * Hidden files are searched, `.git` never is, symlinks are not followed, and
 * only .gitignore files inside the workspace count (no global or parent
 * settings, no `.ignore`/`.rgignore`, no git repository required).
 */
export async function ripgrepMatchingFiles(rg: string, query: RipgrepQuery): Promise<RipgrepFiles> {
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
  const result = await run(rg, args, query.base, stdin, query.signal);
  // Exit status 2 with paths it could not read is a search that went on around them; anything else failed.
  const otherErrors = result.stderr.split("\n").filter((line) => line.trim() !== "" && !PATH_ERROR.test(line));
  if (result.code === 2 && result.stdout.length === 0 && otherErrors.length > 0) {
    throw new ToolError(`ripgrep failed: ${otherErrors[0]}`, {
      code: "search_failed",
      recoveryHint: "Simplify the pattern or the path.",
      details: { args, stderr: result.stderr },
    });
  }
  const prefix = rootRel === "" ? "./" : rootRel + "/";
  const files: string[] = [];
  const skipped = stderrSkips(result.stderr, prefix, result.stderr.length < STDERR_CHARS);
  let start = 0;
  for (let end = result.stdout.indexOf(0); end !== -1; start = end + 1, end = result.stdout.indexOf(0, start)) {
    const bytes = result.stdout.subarray(start, end);
    try {
      files.push(relativeTo(prefix, fatalUtf8.decode(bytes)));
    } catch {
      // A name that is not UTF-8: no string names it for the runtime's file functions.
      skipped.push({ path: relativeTo(prefix, bytes.toString("utf8")), reason: NOT_UTF8_REASON });
    }
  }
  return { files, skipped };
}
