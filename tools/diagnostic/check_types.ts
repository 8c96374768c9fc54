/**
 * The `check_types` tool.
 *
 * @module
 */

import * as v from "valibot";
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { runChecker } from "./_files.ts";
import { openFileOnly } from "../_shared/fs_open.ts";
import { INHERITED_VARIABLES } from "@toolfence/policy";
import { SPAWN_ENV } from "@toolfence/policy";
import { isExecutableFile } from "@toolfence/policy";
import { CHECK_TYPES_OUTPUT } from "./_outputs.ts";

/** Arguments of `check_types`. */
export interface CheckTypesArgs {
  /** The file to check, relative to the workspace. */
  path: string;
  /** Seconds before giving up. */
  timeout_s: number;
}

/** One diagnostic of `deno check`. */
export interface TypeDiagnostic {
  /** e.g. `TS2322`, or `SyntaxError`. */
  code: string;
  /** The first line of the message. */
  message: string;
  /** The file, relative to the workspace when inside it. */
  file: string;
  /** Line, from 1. */
  line: number;
  /** Column, from 1. */
  column: number;
}

/** What `check_types` returns. */
export interface CheckTypesResult {
  /** Absolute path of the file checked. */
  path: string;
  /** Whether `deno check` passed. */
  ok: boolean;
  /** The diagnostics found in its output. */
  diagnostics: TypeDiagnostic[];
  /** `deno check`'s error output, when it failed with nothing recognisable in it. */
  output?: string;
}

interface DenoExecLike {
  execPath(): string;
}

// Under Deno the running executable; under Node the first `deno` on PATH.
async function denoExecutable(ctx: ToolContext): Promise<string> {
  const deno = (globalThis as { Deno?: DenoExecLike }).Deno;
  if (typeof deno?.execPath === "function") return deno.execPath();
  const searchPath = ctx.policy.fence.query("env", "PATH").allowed ? process.env.PATH ?? "" : "";
  for (const dir of searchPath.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    try {
      if (await isExecutableFile(path.join(dir, "deno"))) return path.join(dir, "deno");
    } catch {
      // not in this folder
    }
  }
  throw new ToolError("check_types needs Deno, and no deno executable was found on PATH", {
    code: "deno_not_found",
    recoverable: false,
    recoveryHint: "Check types another way (e.g. run tsc through bash), or ask the user to install Deno.",
  });
}

// The public downloads of the user's Deno cache (remote modules, npm packages),
// bound read-only into the checker's private cache; never the rest of it (the
// emitted code and check caches of the user's other projects).
async function denoCacheMounts(ctx: ToolContext, privateDenoDir: string): Promise<{ from: string; to: string }[]> {
  const env = (name: string) => ctx.policy.fence.query("env", name).allowed ? process.env[name] : undefined;
  const home = env("HOME");
  const hostDir = env("DENO_DIR") ??
    (env("XDG_CACHE_HOME") ? path.join(env("XDG_CACHE_HOME")!, "deno") : home ? path.join(home, ".cache", "deno") : "");
  if (!path.isAbsolute(hostDir)) return [];
  const binds: { from: string; to: string }[] = [];
  for (const part of ["remote", "npm"]) {
    const source = path.join(hostDir, part);
    try {
      if (!(await stat(source)).isDirectory()) continue;
    } catch {
      continue;
    }
    binds.push({ from: source, to: path.join(privateDenoDir, part) });
  }
  return binds;
}

const FILE_URL = /file:\/\/\/[^\s'"`)]+/g;

// Local modules the output names that lie outside the workspace (and are not the
// checked file itself): imports the sandbox kept from being read.
function importsOutside(output: string, ctx: ToolContext, file: string): string[] {
  const outside = new Set<string>();
  for (const match of output.matchAll(FILE_URL)) {
    let local: string;
    try {
      local = fileURLToPath(match[0].replace(/:\d+:\d+$/, ""));
    } catch {
      continue;
    }
    if (local === file || ctx.workspace.areaOf(local) === "workdir") continue;
    outside.add(local);
  }
  return [...outside];
}

const DIAGNOSTIC = /^(?:error: )?(TS\d+|[A-Za-z]*Error)(?: \[(?:ERROR|WARNING)\])?: (.*)$/;
const LOCATION = /^\s*at (file:\/\/\S+?):(\d+):(\d+)\s*$/;

/** Reads the diagnostics out of `deno check`'s output (colours off). */
export function parseDenoCheckOutput(output: string, shown: (file: string) => string): TypeDiagnostic[] {
  const diagnostics: TypeDiagnostic[] = [];
  let pending: { code: string; message: string } | undefined;
  for (const line of output.split("\n")) {
    const head = DIAGNOSTIC.exec(line);
    if (head) {
      pending = { code: head[1], message: head[2].trim() };
      continue;
    }
    const at = LOCATION.exec(line);
    if (at && pending) {
      let file = at[1];
      try {
        file = shown(fileURLToPath(at[1]));
      } catch {
        // not a file URL after all; keep it as printed
      }
      diagnostics.push({ ...pending, file, line: Number(at[2]), column: Number(at[3]) });
      pending = undefined;
    }
  }
  return diagnostics;
}

/**
 * `check_types(path, timeout_s = 120)`: runs `deno check` on a file of the
 * workspace (from the workspace folder, so its deno.json applies) and returns
 * the diagnostics with file, line and column. It type-checks without running
 * the code, confined like a command: under the OS sandbox it sees only its own
 * binary, the system libraries, the workspace (read-only), and the public
 * downloads of the Deno cache (read-only); it has no network and runs with
 * `--cached-only`, so no registry (not even one an `.npmrc` names) is
 * contacted. An import that leaves the workspace is refused with
 * `import_outside_workspace`. Without a working sandbox it asks a person
 * first (`sandbox: "required"`: refused). Under Node it needs a `deno` on
 * PATH and says so clearly when there is none.
 *
 * Requires `--allow-run` for the deno executable, `--allow-env`, and
 * `--allow-read` / `--allow-write` for the workspace and the temp folder.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { checkTypesTool } from "@toolfence/tools";
 * const session = new Session({ workspace: Deno.cwd() });
 * const result = await new ToolBox().register(checkTypesTool).call(session, "check_types", { path: "mod.ts" });
 * console.log(result.output);
 * await session.close();
 * ```
 */
export const checkTypesTool: Tool<CheckTypesArgs> = tool({
  name: "check_types",
  description: "Type-check a TypeScript (or JavaScript) file with `deno check`, without running it.\n" +
    "Returns ok and each diagnostic with its code, message, file, line and column.",
  input: v.object({
    path: v.pipe(v.string(), v.description("The file to check, relative to the workspace.")),
    timeout_s: v.optional(
      v.pipe(v.number(), v.minValue(1), v.maxValue(600), v.description("Seconds before giving up. Default 120.")),
      120,
    ),
  }),
  output: CHECK_TYPES_OUTPUT,
  readOnly: true,
  idempotent: true,
  openWorld: true,
  effects: ["reads", "runs_processes"],
  needs: { run: ["deno"], signal: true, read: ["workspace", "temp"], write: ["temp"], env: SPAWN_ENV },
  optionalNeeds: { run: ["bwrap"], env: INHERITED_VARIABLES },
  async run({ path: input, timeout_s }, ctx): Promise<CheckTypesResult> {
    const target = await ctx.policy.files.resolve(input);
    const file = target.path;
    // A file, as the file door opens it (in its pinned folder, never following a link), not as a stat of the path:
    // that followed a link a command swapped in after the resolution, and whether the call went on or answered "not
    // a file" told what lay where the link led (another tenant's file, folder or nothing).
    await (await openFileOnly(ctx.policy.files, target, ctx.workspace.relative(file))).handle.close();
    const deno = await realpath(await denoExecutable(ctx)).catch(() => denoExecutable(ctx));
    // --cached-only: no registry or server is asked for anything; the sandbox has no network either.
    const run = await runChecker(ctx, [deno, "check", "--quiet", "--cached-only", file], {
      cwd: ctx.workspace.workdir,
      timeoutMs: timeout_s * 1000,
      readable: [file],
      unconfined: "ask",
      privateEnv: (dir) => ({ DENO_DIR: path.join(dir, "deno"), DENO_NO_UPDATE_CHECK: "1", DENO_NO_PROMPT: "1" }),
      readOnlyBinds: (dir) => denoCacheMounts(ctx, path.join(dir, "deno")),
    });
    const outside = importsOutside(`${run.stdout}\n${run.stderr}`, ctx, file);
    if (outside.length > 0) {
      throw new ToolError(
        `${ctx.workspace.relative(file)} imports files outside the workspace, which check_types does not read: ` +
          outside.slice(0, 5).join(", "),
        {
          code: "import_outside_workspace",
          kind: "policy",
          recoverable: false,
          recoveryHint: "Check only files whose imports stay inside the workspace.",
          details: { imports: outside },
        },
      );
    }
    if (run.timedOut) {
      throw new ToolError(`deno check did not finish within ${timeout_s} s`, {
        code: "timeout",
        recoveryHint: "Try again with a larger timeout_s.",
      });
    }
    const output = `${run.stdout}\n${run.stderr}`;
    const diagnostics = parseDenoCheckOutput(output, (f) => ctx.workspace.relative(f));
    const ok = run.exit.code === 0;
    return {
      path: file,
      ok,
      diagnostics,
      ...(!ok && diagnostics.length === 0 ? { output: run.stderr.trim() || run.stdout.trim() } : {}),
    };
  },
});
