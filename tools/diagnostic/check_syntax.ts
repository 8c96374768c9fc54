/**
 * The `check_syntax` tool.
 *
 * @module
 */

import * as v from "valibot";
import path from "node:path";
import process from "node:process";
import { realpath, stat } from "node:fs/promises";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { isRuntimePermissionError } from "@toolfence/policy";
import { parseBash } from "@toolfence/policy";
import { readTextFile, runChecker } from "./_files.ts";
import { locateJsonError } from "./_json_locate.ts";
import { SPAWN_ENV } from "@toolfence/policy";
import { CHECK_SYNTAX_OUTPUT } from "./_outputs.ts";

// The variables the typescript package reads when it loads (6.0).
const TYPESCRIPT_ENV = [
  "TSC_WATCHFILE",
  "TSC_NONPOLLING_WATCHER",
  "TSC_WATCHDIRECTORY",
  "TSC_WATCH_POLLINGINTERVAL_LOW",
  "TSC_WATCH_POLLINGINTERVAL_MEDIUM",
  "TSC_WATCH_POLLINGINTERVAL_HIGH",
  "TSC_WATCH_POLLINGCHUNKSIZE_LOW",
  "TSC_WATCH_POLLINGCHUNKSIZE_MEDIUM",
  "TSC_WATCH_POLLINGCHUNKSIZE_HIGH",
  "TSC_WATCH_UNCHANGEDPOLLTHRESHOLDS_LOW",
  "TSC_WATCH_UNCHANGEDPOLLTHRESHOLDS_MEDIUM",
  "TSC_WATCH_UNCHANGEDPOLLTHRESHOLDS_HIGH",
  "NODE_INSPECTOR_IPC",
  "VSCODE_INSPECTOR_OPTIONS",
  "NODE_ENV",
];

/** The languages `check_syntax` knows. */
export const SYNTAX_LANGUAGES = ["json", "typescript", "tsx", "javascript", "jsx", "bash"] as const;

/** A language `check_syntax` knows. */
export type SyntaxLanguage = typeof SYNTAX_LANGUAGES[number];

/** Arguments of `check_syntax`. */
export interface CheckSyntaxArgs {
  /** The file, relative to the workspace. */
  path: string;
  /** The language; when absent, from the file extension or shebang. */
  language?: SyntaxLanguage;
}

/** One syntax error; line and column count from 1. */
export interface SyntaxProblem {
  /** Line of the error, from 1. */
  line: number;
  /** Column of the error, from 1. */
  column: number;
  /** What is wrong, as the checker words it. */
  message: string;
}

/** What `check_syntax` returns. */
export interface CheckSyntaxResult {
  /** Absolute path of the file. */
  path: string;
  /** The language it was checked as. */
  language: SyntaxLanguage;
  /** Whether no syntax error was found. */
  valid: boolean;
  /** The errors, first first (JSON and bash stop at the first). */
  errors: SyntaxProblem[];
  /** What judged it: `JSON.parse`, `typescript`, `bash -n` or `tree-sitter-bash`. */
  checker: string;
}

const MAX_ERRORS = 50;

const EXTENSIONS: Record<string, SyntaxLanguage> = {
  ".json": "json",
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "tsx",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "jsx",
  ".sh": "bash",
  ".bash": "bash",
};

function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split("\n");
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

function checkJson(text: string): SyntaxProblem[] {
  try {
    JSON.parse(text);
    return [];
  } catch (error) {
    const found = locateJsonError(text);
    if (!found) return [{ ...position(text, text.length), message: (error as Error).message }];
    return [{ ...position(text, found.offset), message: found.message }];
  }
}

async function checkScript(text: string, file: string, language: SyntaxLanguage): Promise<SyntaxProblem[]> {
  let ts: typeof import("typescript");
  try {
    ts = (await import("typescript")).default;
  } catch (error) {
    // On npm, typescript is an optional peer of @toolfence/tools: only this check needs it.
    if ((error as { code?: unknown })?.code === "ERR_MODULE_NOT_FOUND") {
      throw new ToolError("Checking TypeScript or JavaScript needs the typescript package, which is not installed", {
        code: "engine_unavailable",
        recoveryHint: "Ask the user to install typescript (npm install typescript), or check the file another way.",
        details: { language },
      });
    }
    if (!isRuntimePermissionError(error)) throw error;
    throw new ToolError(
      "Checking TypeScript or JavaScript needs environment access: the typescript package reads TSC_* variables when it loads",
      {
        code: "fence_denied",
        kind: "policy",
        recoverable: false,
        recoveryHint: "Ask the user to allow --allow-env, or check the file another way.",
        details: { permission: "env", cause: (error as Error).message },
      },
    );
  }
  const kind = {
    typescript: ts.ScriptKind.TS,
    tsx: ts.ScriptKind.TSX,
    javascript: ts.ScriptKind.JS,
    jsx: ts.ScriptKind.JSX,
  }[language as "typescript" | "tsx" | "javascript" | "jsx"];
  const source = ts.createSourceFile(path.basename(file), text, ts.ScriptTarget.Latest, false, kind);
  const diagnostics = (source as unknown as { parseDiagnostics: readonly import("typescript").Diagnostic[] })
    .parseDiagnostics;
  return diagnostics.slice(0, MAX_ERRORS).map((d) => {
    const { line, character } = source.getLineAndCharacterOfPosition(d.start ?? 0);
    return { line: line + 1, column: character + 1, message: ts.flattenDiagnosticMessageText(d.messageText, "\n") };
  });
}

async function treeSitterBash(text: string): Promise<SyntaxProblem[]> {
  const tree = await parseBash(text);
  if (!tree) {
    return [{
      line: 1,
      column: 1,
      message: "the script is too complex to parse (it took too long, or nests too deeply)",
    }];
  }
  try {
    const problems: SyntaxProblem[] = [];
    const visit = (node: import("web-tree-sitter").Node) => {
      if (problems.length >= MAX_ERRORS) return;
      if (node.isMissing || node.type === "ERROR") {
        problems.push({
          line: node.startPosition.row + 1,
          column: node.startPosition.column + 1,
          message: node.isMissing ? `syntax error: missing ${node.type}` : "syntax error",
        });
        return;
      }
      for (const child of node.children) if (child) visit(child);
    };
    visit(tree.rootNode);
    return problems;
  } finally {
    tree.delete();
  }
}

async function checkBash(ctx: ToolContext, file: string, text: string): Promise<[SyntaxProblem[], string]> {
  if (!ctx.policy.fence.query("run", "bash").allowed) return [await treeSitterBash(text), "tree-sitter-bash"];
  const bash = await findProgram(ctx, "bash");
  if (bash === undefined) return [await treeSitterBash(text), "tree-sitter-bash"];
  let run;
  try {
    // -n reads the script without running any of it; the sandbox keeps it to the file all the same.
    run = await runChecker(ctx, [bash, "-n", "--", file], {
      cwd: path.dirname(file),
      timeoutMs: 10_000,
      readable: [file],
      unconfined: "refuse",
    });
  } catch (error) {
    // Without a sandbox (or a startable bash) the embedded parser judges, and no program starts.
    if (error instanceof ToolError && (error.code === "spawn_failed" || error.code === "sandbox_unavailable")) {
      return [await treeSitterBash(text), "tree-sitter-bash"];
    }
    throw error;
  }
  if (run.timedOut) throw new ToolError("bash -n did not finish within 10 s", { code: "timeout" });
  if (run.exit.code === 0) return [[], "bash -n"];
  // bash -n says a syntax error with status 2. Another status is what runs it failing (bubblewrap exits 1 when it
  // cannot set the sandbox up): its words are no syntax error of the file, and the embedded parser judges instead.
  if (run.exit.code !== 2) return [await treeSitterBash(text), "tree-sitter-bash"];
  const lines = text.split("\n");
  const first = /line (\d+): (.*)/.exec(run.stderr);
  if (!first) return [[{ line: 1, column: 1, message: run.stderr.trim() || "syntax error" }], "bash -n"];
  let line = Math.min(Number(first[1]), lines.length);
  let column = 1;
  const token = /unexpected token `(.+)'/.exec(first[2])?.[1];
  if (token !== undefined) {
    const found = lines[line - 1]?.indexOf(token) ?? -1;
    if (found >= 0) column = found + 1;
  } else if (/unexpected end of file/.test(first[2])) {
    line = lines.length;
    column = (lines[line - 1]?.length ?? 0) + 1;
  }
  return [[{ line, column, message: first[2].trim() }], "bash -n"];
}

// The real path of `name` on the PATH commands get, or undefined.
async function findProgram(ctx: ToolContext, name: string): Promise<string | undefined> {
  const searchPath = ctx.policy.fence.query("env", "PATH").allowed ? process.env.PATH : undefined;
  for (const dir of (searchPath ?? "/usr/local/bin:/usr/bin:/bin").split(":")) {
    if (!path.isAbsolute(dir)) continue;
    try {
      const candidate = await realpath(path.join(dir, name));
      const info = await stat(candidate);
      if (info.isFile() && (info.mode & 0o111) !== 0) return candidate;
    } catch {
      // not here, or not visible under the fence
    }
  }
  return undefined;
}

function languageOf(file: string, text: string): SyntaxLanguage | undefined {
  const byExtension = EXTENSIONS[path.extname(file).toLowerCase()];
  if (byExtension) return byExtension;
  if (/^#!\s*\S*\/(env\s+)?(ba|da|k)?sh\b/.test(text)) return "bash";
  return undefined;
}

/**
 * `check_syntax(path, language?)`: whether a file parses, with each error's
 * line and column (from 1). JSON through `JSON.parse`; TypeScript, TSX,
 * JavaScript and JSX through the TypeScript parser (every parse error, no type
 * checking); bash through `bash -n` (which reads the script without running
 * it), or through the embedded tree-sitter-bash parser when bash cannot be
 * run. The language defaults from the extension or a shell shebang.
 *
 * Requires `--allow-read` for the workspace; for TypeScript/JavaScript
 * `--allow-env` (the typescript package reads `TSC_*` variables as it loads);
 * for bash `--allow-run=bash` (else tree-sitter judges).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { checkSyntaxTool } from "@toolfence/tools";
 * const session = new Session({ workspace: Deno.cwd() });
 * const result = await new ToolBox().register(checkSyntaxTool).call(session, "check_syntax", { path: "deno.json" });
 * console.log(result.output); // { path, language: "json", valid: true, errors: [], checker: "JSON.parse" }
 * await session.close();
 * ```
 */
export const checkSyntaxTool: Tool<CheckSyntaxArgs> = tool({
  name: "check_syntax",
  description: "Check whether a file parses, without running it: JSON, TypeScript/TSX, JavaScript/JSX or bash.\n" +
    "Returns valid and each syntax error with its line and column. It does not check types (use check_types).",
  input: v.object({
    path: v.pipe(v.string(), v.description("The file, relative to the workspace.")),
    language: v.optional(
      v.pipe(
        v.picklist(SYNTAX_LANGUAGES),
        v.description("The language; default from the file extension (.json, .ts, .tsx, .js, .jsx, .sh) or shebang."),
      ),
    ),
  }),
  output: CHECK_SYNTAX_OUTPUT,
  idempotent: true,
  needs: { read: ["workspace"], env: TYPESCRIPT_ENV },
  optionalNeeds: { run: ["bash", "bwrap"], signal: true, read: ["temp"], write: ["temp"], env: SPAWN_ENV },
  async run({ path: input, language }, ctx): Promise<CheckSyntaxResult> {
    const file = await readTextFile(ctx, input);
    const chosen = language ?? languageOf(file.path, file.text);
    if (!chosen) {
      throw new ToolError(`Cannot tell the language of ${file.shown} from its name`, {
        code: "unknown_language",
        kind: "semantic",
        recoveryHint: `Pass language: one of ${SYNTAX_LANGUAGES.join(", ")}.`,
      });
    }
    let errors: SyntaxProblem[];
    let checker: string;
    if (chosen === "json") [errors, checker] = [checkJson(file.text), "JSON.parse"];
    else if (chosen === "bash") [errors, checker] = await checkBash(ctx, file.path, file.text);
    else [errors, checker] = [await checkScript(file.text, file.path, chosen), "typescript"];
    return { path: file.path, language: chosen, valid: errors.length === 0, errors, checker };
  },
});
