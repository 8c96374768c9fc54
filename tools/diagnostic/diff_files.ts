/**
 * The `diff_files` tool.
 *
 * @module
 */

import * as v from "valibot";
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff";
import { ToolError } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { readTextFile } from "./_files.ts";
import { DIFF_FILES_OUTPUT } from "./_outputs.ts";

/** Arguments of `diff_files`. */
export interface DiffFilesArgs {
  /** The old file, relative to the workspace. */
  a: string;
  /** The new file, relative to the workspace. */
  b: string;
  /** Unchanged lines shown around each change. */
  context: number;
}

/** What `diff_files` returns. */
export interface DiffFilesResult {
  /** The unified diff from `a` to `b`; empty when the files are equal. */
  diff: string;
  /** Whether the files have the same text. */
  identical: boolean;
  /** Lines only in `b`. */
  added: number;
  /** Lines only in `a`. */
  removed: number;
}

/** How long a diff may take before the files count as too different. */
const DIFF_TIMEOUT_MS = 10_000;

/**
 * `diff_files(a, b, context = 3)`: the unified diff between two text files of
 * the workspace (paths shown relative to it), empty when they are equal.
 *
 * Requires `--allow-read` for the workspace.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { diffFilesTool } from "@toolfence/tools";
 * const session = new Session({ workspace: Deno.cwd() });
 * const result = await new ToolBox().register(diffFilesTool).call(session, "diff_files", { a: "deno.json", b: "deno.json" });
 * console.log(result.output); // { diff: "", identical: true, added: 0, removed: 0 }
 * await session.close();
 * ```
 */
export const diffFilesTool: Tool<DiffFilesArgs> = tool({
  name: "diff_files",
  description: "Compare two text files and return the unified diff from a to b (empty when they are equal), " +
    "with the counts of added and removed lines.",
  input: v.object({
    a: v.pipe(v.string(), v.description("The old file, relative to the workspace.")),
    b: v.pipe(v.string(), v.description("The new file, relative to the workspace.")),
    context: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(0),
        v.maxValue(100),
        v.description("Unchanged lines shown around each change. Default 3."),
      ),
      3,
    ),
  }),
  output: DIFF_FILES_OUTPUT,
  idempotent: true,
  needs: { read: ["workspace"] },
  async run({ a, b, context }, ctx): Promise<DiffFilesResult> {
    const [left, right] = await Promise.all([readTextFile(ctx, a), readTextFile(ctx, b)]);
    if (left.text === right.text) return { diff: "", identical: true, added: 0, removed: 0 };
    const diff = await new Promise<string | undefined>((resolve) => {
      createTwoFilesPatch(left.shown, right.shown, left.text, right.text, undefined, undefined, {
        context,
        timeout: DIFF_TIMEOUT_MS,
        headerOptions: FILE_HEADERS_ONLY,
        callback: resolve,
      });
    });
    ctx.signal.throwIfAborted();
    if (diff === undefined) {
      throw new ToolError(`${left.shown} and ${right.shown} differ too much to diff within 10 s`, {
        code: "diff_too_large",
        recoverable: false,
      });
    }
    let added = 0;
    let removed = 0;
    for (const line of diff.split("\n")) {
      if (line.startsWith("+") && !line.startsWith("+++ ")) added++;
      else if (line.startsWith("-") && !line.startsWith("--- ")) removed++;
    }
    return { diff, identical: false, added, removed };
  },
});
