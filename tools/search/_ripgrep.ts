// Finding and running ripgrep: the binary of the `@vscode/ripgrep` npm
// package, else an `rg` on the PATH or in the usual places. ripgrep walks the
// tree in parallel and lists the files that match; grep then reads those files
// itself, so both engines produce lines the same way.

import { spawn } from "node:child_process";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import { type Fence, runtimeFence } from "@toolfence/policy";

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
      if (err.length < 4000) err += chunk.toString();
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

/**
 * The files under `root` that ripgrep finds a match in, relative to `root`.
 * Hidden files are searched, `.git` never is, symlinks are not followed, and
 * only .gitignore files inside the workspace count (no global or parent
 * settings, no `.ignore`/`.rgignore`, no git repository required).
 */
export async function ripgrepMatchingFiles(rg: string, query: RipgrepQuery): Promise<string[]> {
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
  if (result.code === 2 && result.stdout.length === 0) {
    throw new ToolError(`ripgrep failed: ${result.stderr.trim().split("\n")[0] || "exit status 2"}`, {
      code: "search_failed",
      recoveryHint: "Simplify the pattern or the path.",
      details: { args, stderr: result.stderr },
    });
  }
  const prefix = rootRel === "" ? "./" : rootRel + "/";
  return result.stdout.toString("utf8").split("\0").filter((p) => p !== "").map((p) =>
    p.startsWith(prefix) ? p.slice(prefix.length) : p
  );
}
