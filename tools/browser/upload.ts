/**
 * The `browser_file_upload` tool.
 *
 * @module
 */

import * as v from "valibot";
import { Buffer } from "node:buffer";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { browserOf } from "./_browser_session.ts";
import type { Browsers } from "./browsers.ts";
import { BROWSER_FLAGS, locate, pageLine } from "./_page.ts";
import { FILE_UPLOAD_OUTPUT } from "./_outputs.ts";
import { openFileOnly } from "../_shared/fs_open.ts";

/** The most bytes `browser_file_upload` hands to a page in one call. */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

/** Arguments of `browser_file_upload`. */
export interface BrowserFileUploadArgs {
  /** The file input's reference from `browser_snapshot`. */
  ref: string;
  /** Files of the workspace to choose, relative to it. */
  paths: string[];
}

/**
 * `browser_file_upload(ref, paths)`: chooses files of the workspace in a file
 * input. Each path is resolved through the workspace policy (files outside it
 * are refused) and read here, so the browser itself never needs to see them.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { Browsers } from "@toolfence/tools";
 * import { browserFileUploadTool } from "@toolfence/tools";
 * const box = new ToolBox().register(browserFileUploadTool(new Browsers()));
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "browser_file_upload", { ref: "e5", paths: ["report.pdf"] })).output);
 * await session.close();
 * ```
 */
export function browserFileUploadTool(browsers: Browsers): Tool<BrowserFileUploadArgs> {
  return tool({
    name: "browser_file_upload",
    sessionState: true,
    description: "Choose files of the workspace in the file input with the given ref from browser_snapshot " +
      "(at most 50 MB in all). " + BROWSER_FLAGS,
    input: v.object({
      ref: v.pipe(v.string(), v.description("Element reference of the file input, e.g. e12.")),
      paths: v.pipe(
        v.array(v.string()),
        v.maxLength(100),
        v.description("Paths of files in the workspace; an empty list clears the input."),
      ),
    }),
    output: FILE_UPLOAD_OUTPUT,
    openWorld: true,
    effects: ["reads", "runs_processes", "network"],
    needs: browsers.needs,
    async run({ ref, paths }, ctx): Promise<string> {
      const browser = browserOf(browsers, ctx.session);
      const files: { name: string; mimeType: string; buffer: Uint8Array }[] = [];
      let total = 0;
      for (const given of paths) {
        // Opened by the file door, never by its path: a file swapped for a link to one outside the workspace (or a
        // denied one) after the resolution would be handed to the page (as diff_files' text was).
        const target = await ctx.policy.files.resolve(given);
        const opened = await openFileOnly(ctx.policy.files, target, given);
        try {
          total += opened.stat.size;
          if (total > MAX_UPLOAD_BYTES) {
            throw new ToolError(`The files come to more than ${MAX_UPLOAD_BYTES} bytes`, {
              code: "upload_too_large",
              kind: "semantic",
            });
          }
          const bytes = await opened.handle.readFile();
          files.push({
            name: path.basename(target.path),
            mimeType: "application/octet-stream",
            // A Buffer over the same bytes: Playwright sends them as base64 through a Buffer's own toString.
            buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
          });
        } finally {
          await opened.handle.close();
        }
      }
      const seen = browser.eventCount;
      return await browser.withPage(ctx.signal, async (page) => {
        const element = await locate(page, ref);
        // deno-lint-ignore no-explicit-any
        await element.setInputFiles(files as any);
        return `Chose ${files.length} file(s) in ${ref}. ${pageLine(browser, page, seen)}`;
      });
    },
  });
}
