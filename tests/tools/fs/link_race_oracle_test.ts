// A racer swaps a folder of the workspace for a link to a place outside and back while read_file, list_dir and
// file_info look into it: no answer may say what lies where the link leads. Before, read_file's and list_dir's
// "what is wrong" was a stat by the path, which followed the link: "a part of race/f.txt is not a directory" came
// back only when the link led to a file outside (over MCP, 263 of about 3,000 reads in 8 s for another tenant's
// existing file, none for a missing one), and the confined operations' chdir() named the real path of a folder
// outside ("it now leads to ...").
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileInfoTool } from "../../../tools/fs/file_info.ts";
import { listDirTool } from "../../../tools/fs/list_dir.ts";
import { readFileTool } from "../../../tools/fs/read_file.ts";
import { openRegularFile } from "../../../tools/_shared/fs_open.ts";
import type { FileTarget } from "../../../core/services.ts";
import { whileSwappedForLink } from "../../_link_swapper.ts";
import { type Layout, makeLayout } from "./_helpers.ts";

const RACE_MS = 1_500;

let l: Layout;
before(async () => {
  l = await makeLayout([readFileTool, listDirTool, fileInfoTool]);
  await fsp.mkdir(path.join(l.workdir, "race", "sub"), { recursive: true });
  await fsp.writeFile(path.join(l.workdir, "race", "f.txt"), "inside\n");
  await fsp.mkdir(path.join(l.outside, "twin", "sub"), { recursive: true });
  await fsp.writeFile(path.join(l.outside, "twin", "f.txt"), "TWINSECRET\n");
});
after(() => l.cleanup());

describe("a folder raced against a link to outside", () => {
  // The moment the race aims at, held still: the path was resolved to race/f.txt, and race is a link now. Before,
  // the read's "what is wrong" (a stat by the path) was not_directory for a link to a file and not_found otherwise.
  test("a read whose folder is a link after its resolution answers alike wherever it leads", {
    timeout: 30_000,
  }, async () => {
    const answers: string[] = [];
    for (const [name, target] of [["to-file", "secret.txt"], ["to-folder", "twin"], ["to-nothing", "nothing"]]) {
      await fsp.symlink(path.join(l.outside, target), path.join(l.workdir, name));
      const resolved: FileTarget = {
        path: path.join(l.workdir, name, "f.txt"),
        area: "workdir",
        existed: true,
        roots: [l.workdir],
      };
      const error = await openRegularFile(l.session.policy.files, resolved, "race/f.txt", "").then(
        () => undefined,
        (error) => error as { code?: string; message: string },
      );
      answers.push(`${error?.code}: ${error?.message.replaceAll(name, "L")}`);
    }
    assert.ok(answers.every((a) => a === answers[0]), `answered by where the link leads: ${answers.join(" | ")}`);
    assert.ok(!answers[0].includes(l.outside), answers[0]);
  });

  // The other moment: the resolution walked through race while it was a link, and race is the folder again when the
  // target is looked at. Before, the walk's lstat of race/f.txt (through the link) was taken for the target's:
  // file_info could give the size of the file outside with the workspace file's content.
  test("a resolution that went through the link: no size from outside", { timeout: 60_000 }, async () => {
    await fsp.mkdir(path.join(l.outside, "big"));
    await fsp.writeFile(path.join(l.outside, "big", "f.txt"), "x".repeat(12_345));
    let sized = 0;
    await whileSwappedForLink(l.workdir, "race", path.join(l.outside, "big"), async () => {
      const deadline = performance.now() + RACE_MS;
      while (performance.now() < deadline) {
        const result = await l.call("file_info", { path: "race/f.txt" });
        const size = (result.output as { size?: number } | null)?.size;
        assert.notEqual(size, 12_345, `the size of the file outside: ${JSON.stringify(result.output)}`);
        if (size !== undefined) sized++;
      }
    });
    assert.ok(sized > 0, "no file_info answered during the race");
  });

  for (const [kind, target] of [["a file", "secret.txt"], ["a folder", "twin"], ["nothing", "nothing"]]) {
    test(`the link leads to ${kind}: no answer tells what is there`, { timeout: 60_000 }, async () => {
      const codes = new Map<string, number>();
      await whileSwappedForLink(l.workdir, "race", path.join(l.outside, target), async () => {
        const deadline = performance.now() + RACE_MS;
        while (performance.now() < deadline) {
          const results = await Promise.all([
            l.call("read_file", { path: "race/f.txt" }),
            l.call("list_dir", { path: "race/sub" }),
            l.call("list_dir", { path: "race" }),
            l.call("file_info", { path: "race/sub" }),
          ]);
          for (const result of results) {
            // What the model is shown (the details stay with the host).
            const text = JSON.stringify([result.error, result.recoveryHint, result.output]);
            assert.ok(!text.includes(l.outside), `an answer named the outside: ${text}`);
            assert.ok(!text.includes("TWINSECRET"), `an answer held the outside's bytes: ${text}`);
            // No file of the workspace ever stands where a folder is: "a part of ... is not a directory" came from
            // where the link led (race itself being a link is said as "race is a symbolic link", whatever it leads to).
            assert.ok(
              !(result.errorCode === "not_directory" && /a part of/.test(result.error ?? "")),
              `an answer told of a file outside: ${text}`,
            );
            const code = result.errorCode ?? result.status;
            codes.set(code, (codes.get(code) ?? 0) + 1);
          }
        }
      });
      // The race let calls through and refused others, or it proved nothing.
      assert.ok((codes.get("success") ?? 0) > 0 && codes.size > 1, JSON.stringify([...codes]));
    });
  }
});
