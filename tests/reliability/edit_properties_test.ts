// Property-based tests of edit_file and apply_patch on real files: generated
// files (LF or CRLF, with or without a byte-order mark and a final newline)
// and generated edits. A failed edit leaves the bytes exactly as they were; a
// successful one changes exactly what it says, and the line endings, the
// byte-order mark and the final newline survive. The expected result comes
// from a small model of the documented contract, worked in the LF view a model
// sees, not from the tools' code.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { createTwoFilesPatch } from "diff";
import "../../tools/mod.ts";
import { Session } from "../../policy/session.ts";
import { ToolBox } from "../../toolbox.ts";

const RUNS = 400;
const SEED = Number(process.env.PROPERTY_SEED ?? 4242);

let dir: string;
let session: Session;
let box: ToolBox;
let counter = 0;
before(async () => {
  dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-editprop-")));
  session = new Session({ workspace: dir, autoConfirm: true });
  box = new ToolBox().withDefaults("patch");
});
after(async () => {
  await session.close();
  await fsp.rm(dir, { recursive: true, force: true });
});

interface FileShape {
  lines: string[];
  crlf: boolean;
  bom: boolean;
  finalNewline: boolean;
}

const lineText = fc.array(fc.constantFrom("a", "b", "c", " ", "\t", "$&", "é", "{", "}"), { maxLength: 5 })
  .map((parts) => parts.join(""));
// One shape per text: ["a", ""] without a final newline is "a\n", which is ["a"] with one.
const fileShape: fc.Arbitrary<FileShape> = fc.record({
  lines: fc.array(lineText, { minLength: 1, maxLength: 8 }),
  crlf: fc.boolean(),
  bom: fc.boolean(),
  finalNewline: fc.boolean(),
}).map((shape) =>
  shape.lines.length > 1 && shape.lines.at(-1) === "" && !shape.finalNewline
    ? { ...shape, lines: shape.lines.slice(0, -1), finalNewline: true }
    : shape
);
const insertText = fc.array(fc.constantFrom("x", "y", "\n", "$&", "$1", "é", " "), { maxLength: 6 })
  .map((parts) => parts.join(""));

/** The text as a model reads it: LF line breaks, no byte-order mark. */
function logical(shape: FileShape): string {
  return shape.lines.join("\n") + (shape.finalNewline ? "\n" : "");
}

/**
 * The bytes on disk for a logical text in the shape's conventions. A file
 * without any line break has no line-ending style yet; new lines get LF.
 */
function bytesOf(text: string, shape: FileShape): Buffer {
  const crlf = shape.crlf && logical(shape).includes("\n");
  const body = crlf ? text.replaceAll("\n", "\r\n") : text;
  return Buffer.from((shape.bom ? "\uFEFF" : "") + body, "utf8");
}

async function freshFile(shape: FileShape): Promise<{ name: string; bytes: Buffer }> {
  const name = `f${++counter}.txt`;
  const bytes = bytesOf(logical(shape), shape);
  await fsp.writeFile(path.join(dir, name), bytes);
  return { name, bytes };
}

function positions(text: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

/** What the documented contract says edit_file does: an error code, or the new logical text. */
function expectedEdit(shape: FileShape, oldText: string, newText: string, replaceAll: boolean) {
  if (oldText === "") return { code: "empty_old_text" };
  if (oldText === newText) return { code: "identical_texts" };
  const text = logical(shape);
  const at = positions(text, oldText);
  if (at.length === 0) return { code: "no_match" };
  if (at.length > 1 && !replaceAll) return { code: "ambiguous_match" };
  let out = "";
  let last = 0;
  for (const p of at) {
    out += text.slice(last, p) + newText;
    last = p + oldText.length;
  }
  out += text.slice(last);
  // The presence of a final newline is kept: restored when the edit removed
  // it, and not added when new_text ends with one at the very end.
  const touchesEnd = at[at.length - 1] + oldText.length === text.length;
  if (text.endsWith("\n") && out !== "" && !out.endsWith("\n")) out += "\n";
  else if (!text.endsWith("\n") && touchesEnd && out.endsWith("\n")) out = out.slice(0, -1);
  return { text: out, replacements: at.length };
}

const counts = { editOk: 0, editRefused: 0, patchOk: 0, patchRefused: 0 };

describe("edit_file properties", () => {
  test(
    `${RUNS} generated edits: failures change nothing, successes change exactly what they say`,
    { timeout: 90_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fileShape,
          fc.nat(),
          fc.nat(12),
          fc.boolean(),
          insertText,
          fc.boolean(),
          async (shape, start, length, fromFile, newText, replaceAll) => {
            const text = logical(shape);
            // Mostly a piece of the file (so it matches), sometimes something that is not there.
            const from = start % (text.length + 1);
            const oldText = fromFile ? text.slice(from, from + length) : `zz${newText}`;
            const { name, bytes } = await freshFile(shape);
            const result = await box.call(session, "edit_file", {
              path: name,
              old_text: oldText,
              new_text: newText,
              replace_all: replaceAll,
            });
            const after = await fsp.readFile(path.join(dir, name));
            const expected = expectedEdit(shape, oldText, newText, replaceAll);
            const shown = JSON.stringify({
              shape,
              oldText,
              newText,
              replaceAll,
              result: result.error ?? result.output,
            });
            if (expected.code !== undefined) {
              assert.equal(result.status, "error", shown);
              assert.equal(result.errorCode, expected.code, shown);
              assert.ok(after.equals(bytes), `a failed edit changed the file: ${shown}`);
              counts.editRefused++;
              return;
            }
            assert.equal(result.status, "success", shown);
            assert.equal((result.output as { replacements: number }).replacements, expected.replacements, shown);
            const want = bytesOf(expected.text!, shape);
            assert.equal(after.toString("utf8"), want.toString("utf8"), shown);
            counts.editOk++;
          },
        ),
        {
          numRuns: RUNS,
          seed: SEED,
          // Found by this property before: old_text matching the LF of a CRLF,
          // and multi-line new_text put into a CRLF file.
          examples: [
            [{ lines: [""], crlf: true, bom: false, finalNewline: true }, 0, 1, true, "", false],
            [{ lines: ["aa"], crlf: true, bom: false, finalNewline: true }, 0, 2, true, "\n", false],
            [{ lines: ["a"], crlf: true, bom: true, finalNewline: false }, 0, 1, true, "\nx", false],
          ],
        },
      );
      console.log(
        `edit_file properties: ${RUNS} edits, ${counts.editOk} applied exactly, ${counts.editRefused} refused unchanged`,
      );
      assert.ok(counts.editOk > RUNS / 4 && counts.editRefused > RUNS / 10, "both sides must be exercised");
    },
  );
});

describe("apply_patch properties", () => {
  test(
    `${RUNS} generated unified diffs: applied exactly, or refused with every file unchanged`,
    { timeout: 90_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fileShape,
          fc.nat(),
          fc.nat(3),
          fc.array(lineText, { maxLength: 3 }),
          fc.boolean(),
          async (shape, start, removeCount, added, stale) => {
            const at = start % shape.lines.length;
            const newLines = [...shape.lines];
            newLines.splice(at, removeCount, ...added);
            if (newLines.length === 0) newLines.push("");
            const before = logical(shape);
            const changed = newLines.join("\n") + (shape.finalNewline ? "\n" : "");
            if (changed === before) return;
            const { name, bytes } = await freshFile(shape);
            // A second file the patch also touches: all or nothing.
            const other = await freshFile({ lines: ["keep", "me"], crlf: false, bom: false, finalNewline: true });
            const patch = createTwoFilesPatch(`a/${name}`, `b/${name}`, before, changed, "", "", { context: 2 }) +
              createTwoFilesPatch(`a/${other.name}`, `b/${other.name}`, "keep\nme\n", "kept\nme\n", "", "");
            let staleBytes: Buffer | undefined;
            if (stale) {
              // Someone changed every line since the patch was made, so the lines the
              // patch removes or keeps as context differ (an empty file has none).
              if (before === "") return;
              const edited = { ...shape, lines: shape.lines.map((l) => `${l}#changed`) };
              staleBytes = bytesOf(logical(edited), edited);
              await fsp.writeFile(path.join(dir, name), staleBytes);
            }
            const result = await box.call(session, "apply_patch", { patch });
            const after = await fsp.readFile(path.join(dir, name));
            const otherAfter = await fsp.readFile(path.join(dir, other.name), "utf8");
            const shown = JSON.stringify({ shape, newLines, stale, patch, result: result.error ?? result.output });
            if (stale) {
              assert.equal(result.status, "error", shown);
              assert.ok(after.equals(staleBytes!), `a refused patch changed the file: ${shown}`);
              assert.equal(otherAfter, "keep\nme\n", `a refused patch changed another file: ${shown}`);
              counts.patchRefused++;
              return;
            }
            assert.equal(result.status, "success", shown);
            assert.equal(after.toString("utf8"), bytesOf(changed, shape).toString("utf8"), shown);
            assert.equal(otherAfter, "kept\nme\n", shown);
            assert.ok(!bytes.equals(after));
            counts.patchOk++;
          },
        ),
        {
          numRuns: RUNS,
          seed: SEED,
          // Found by this property before: lines added to an empty file lost their final newline.
          examples: [[{ lines: [""], crlf: false, bom: false, finalNewline: false }, 0, 0, [""], false]],
        },
      );
      console.log(
        `apply_patch properties: ${counts.patchOk + counts.patchRefused} patches, ${counts.patchOk} applied exactly, ` +
          `${counts.patchRefused} stale ones refused with both files unchanged`,
      );
      assert.ok(counts.patchOk > RUNS / 4 && counts.patchRefused > RUNS / 10, "both sides must be exercised");
    },
  );
});
