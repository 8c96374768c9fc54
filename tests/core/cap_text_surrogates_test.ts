// The output cap keeps a head and a tail of the text; cut at a UTF-16 index, it split surrogate pairs: a tool
// answering "😀" 2000 times under maxOutputChars 1000 gave the model text "...😀\ud83d\n[... omitted ...]\n\ude00😀...",
// two lone surrogates (a Python MCP client's UTF-8 encode raises on them; an API parsing the request strictly refuses
// it as invalid JSON). The cut now falls between characters, for every offset of the pairs and every cap.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import fc from "fast-check";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { capText } from "../../core/_call_output.ts";
import { textPrefix, textSuffix } from "../../core/_text_prefix.ts";
import { toModelText } from "../../core/result.ts";
import { withSession } from "./_helpers.ts";

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const REF = { id: `sha256:${"0".repeat(64)}` } as const;

describe("the output cap and surrogate pairs", () => {
  test("a capped tool's text holds no lone surrogate, whatever the pairs' offset", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox();
      for (let pad = 0; pad < 4; pad++) {
        box.register(tool({
          name: `emoji${pad}`,
          description: "Emoji.",
          input: v.object({}),
          readOnly: true,
          maxOutputChars: 1000,
          run: () => "a".repeat(pad) + "\u{1F600}".repeat(2000),
        }));
      }
      for (let pad = 0; pad < 4; pad++) {
        const result = await box.call(session, `emoji${pad}`, {});
        assert.equal(result.status, "success");
        assert.equal(result.truncated, true);
        const text = toModelText(result);
        assert.equal(LONE.exec(text), null, `emoji${pad}: ${JSON.stringify(text.slice(400, 600))}`);
        assert.ok(text.length <= 1000);
        // Nothing is lost: the kept halves and the omitted count add up to the whole.
        assert.equal(text.length - (text.match(/\n\[\.\.\. .*\.\.\.\]\n/)![0].length) + result.omitted!, 4000 + pad);
      }
    });
  });

  test("capText, any text over any cap: well-formed halves, nothing lost", { timeout: 60_000 }, () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", "\u{1F600}", "\u00e9", "\u{10FFFF}"), minLength: 100, maxLength: 600 }),
        fc.double({ min: 0, max: 0.99, noNaN: true }),
        (text, share) => {
          // The pipeline caps only a text over the cap.
          const cap = Math.floor(share * text.length);
          const { text: capped, omitted } = capText(text, cap, REF);
          assert.equal(LONE.exec(capped), null);
          const marker = capped.match(/\n\[\.\.\. (\d+) characters omitted.*\.\.\.\]\n/)!;
          assert.equal(Number(marker[1]), omitted);
          assert.equal(capped.length - marker[0].length + omitted, text.length);
        },
      ),
      { seed: 20261206, numRuns: 300 },
    );
  });

  test(
    "a message quoting a cut text: the policy's quote of a refused command, textPrefix",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const box = new ToolBox().withDefaults("cmd");
        // The refusal quotes 59 characters of the command: with one "a" before the emoji, the cut fell inside a pair.
        for (const pad of ["", "a"]) {
          const result = await box.call(session, "bash", { command: `curl ${pad}${"\u{1F600}".repeat(60)}` });
          assert.equal(result.status, "skipped");
          const text = toModelText(result);
          assert.match(text, /curl a?\u{1F600}+…`/u);
          assert.equal(LONE.exec(text), null, JSON.stringify(text));
        }
      });
      for (
        const [text, max, kept] of [["a\u{1F600}", 2, "a"], ["a\u{1F600}", 3, "a\u{1F600}"], ["ab", 1, "a"], [
          "\u{1F600}",
          1,
          "",
        ]]
      ) {
        assert.equal(textPrefix(text as string, max as number), kept);
      }
    },
  );

  test("the path of a value nested too deep, cut to its head and tail", { timeout: 60_000 }, async () => {
    // The path's tail was its last 99 UTF-16 units: for 6 of these 20 keys the cut fell inside a pair.
    type Node = { [key: string]: Node | number };
    const node: v.GenericSchema<Node> = v.record(v.string(), v.union([v.number(), v.lazy(() => node)]));
    const deep = tool({
      name: "deep",
      description: "Takes a tree.",
      input: v.object({ tree: node }),
      readOnly: true,
      run: () => "ran",
    });
    await withSession(async (session) => {
      const box = new ToolBox().register(deep);
      let cut = 0;
      for (const before of ["", "a", "ab", "abc", "abcd"]) {
        for (const after of ["", "x", "xy", "xyz"]) {
          const key = `${before}\u{1F600}${after}`;
          let tree: Node | number = 1;
          for (let i = 0; i < 300; i++) tree = { [key]: tree };
          const result = await box.call(session, "deep", { tree });
          assert.equal(result.errorCode, "arguments_too_complex");
          const path = (result.details as { issues: { path: string }[] }).issues[0].path;
          assert.ok(path.length <= 200, path);
          if (path.includes("…")) cut++;
          assert.equal(LONE.exec(path), null, JSON.stringify(path));
        }
      }
      assert.ok(cut >= 16, `${cut} of 20 paths cut: the keys must make long paths`);
    });
    for (
      const [text, max, kept] of [["\u{1F600}a", 2, "a"], ["\u{1F600}a", 3, "\u{1F600}a"], ["ab", 1, "b"], [
        "ab",
        0,
        "",
      ]]
    ) {
      assert.equal(textSuffix(text as string, max as number), kept);
    }
  });
});
