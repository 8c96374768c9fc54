// Every file tool's failure from the operating system carries a stable code and the fix for the model. Seen over
// MCP: read_file, list_dir, mkdir, write_file and copy of "f.txt/x" (below a file) answered
// `Error [not_directory]: a part of f.txt/x is not a directory` and no hint, and list_dir of a missing folder
// `Error [not_found]: nope does not exist` and none either.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import { fsTools } from "../../../tools/fs/mod.ts";
import { toModelText } from "../../../core/result.ts";
import { withSession } from "../../core/_helpers.ts";
import { autoHost } from "../../../policy/hosts.ts";

describe("file tools' operating-system failures", () => {
  test("below a file, or missing: a code and a hint", { timeout: 30_000 }, async () => {
    const box = new ToolBox().register(...fsTools());
    await withSession(async (session, dir) => {
      await writeFile(join(dir, "f.txt"), "x");
      const calls: [string, Record<string, unknown>, string][] = [
        ["read_file", { path: "f.txt/x" }, "not_directory"],
        ["list_dir", { path: "f.txt/x" }, "not_directory"],
        ["mkdir", { path: "f.txt/x" }, "not_directory"],
        ["write_file", { path: "f.txt/x", content: "y" }, "not_directory"],
        ["copy", { src: "f.txt", dst: "f.txt/x" }, "not_directory"],
        ["list_dir", { path: "nope" }, "not_found"],
      ];
      for (const [tool, args, code] of calls) {
        const result = await box.call(session, tool, args);
        const text = toModelText(result);
        assert.equal(result.errorCode, code, `${tool} ${JSON.stringify(args)}: ${text}`);
        assert.match(text, /\nHint: \S/, `${tool} ${JSON.stringify(args)}: ${text}`);
      }
    }, { host: autoHost() });
  });
});
