// A deferred image reaches the model only at a size every provider takes:
// Anthropic's API refuses a request with an image whose base64 is over 5 MB
// ("image exceeds 5 MB maximum"), and goes on refusing every later turn
// while the image stays in the conversation. The real `@anthropic-ai/sdk`
// sends the reply runAnthropicToolCalls built to a loopback API that checks
// each image as the API does.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { encode as encodePng } from "fast-png";
import * as v from "valibot";
import type Anthropic from "@anthropic-ai/sdk";
import { ToolBox } from "../../toolbox.ts";
import { anthropicTools, runAnthropicToolCalls } from "../../adapters/anthropic.ts";
import { withSession } from "../core/_helpers.ts";
import { type AnthropicRule, withLoopbackAnthropic } from "./_loopback_anthropic.ts";

const LIMIT = 5 * 1024 * 1024;

/** The API's rule for images: at most 5 MB of base64 each, and at most 8000 px on a side (2000 past 20 images). */
const imageSizes: AnthropicRule = (sent) => {
  // Over 20 images in a request, each may have at most 2000 px on a side; 8000 px otherwise.
  const count = sent.messages.flatMap((m) => typeof m.content === "string" ? [] : m.content)
    .filter((block) => block.type === "image").length;
  const [side, many] = count > 20 ? [2000, " for many-image requests"] : [8000, ""];
  for (const [m, message] of sent.messages.entries()) {
    if (typeof message.content === "string") continue;
    for (const [c, block] of message.content.entries()) {
      if (block.type !== "image" || block.source.type !== "base64") continue;
      const size = block.source.data.length;
      const png = Buffer.from(block.source.data, "base64");
      const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
      if (block.source.media_type === "image/png" && Math.max(width, height) > side) {
        return `messages.${m}.content.${c}.image.source.base64.data: At least one of the image ` +
          `dimensions exceed max allowed size${many}: ${side} pixels`;
      }
      if (size > LIMIT) {
        return `messages.${m}.content.${c}.image.source.base64: image exceeds 5 MB maximum: ` +
          `${size} bytes > ${LIMIT} bytes`;
      }
    }
  }
  return undefined;
};

// A 1000×1000 PNG of noise: 4 MB, 5.3 MB as base64.
function noisePng(): Uint8Array {
  const data = new Uint8Array(1000 * 1000 * 4);
  let seed = 11;
  for (let i = 0; i < data.length; i++) data[i] = (seed = (seed * 48271) % 2147483647) & 0xff;
  return encodePng({ width: 1000, height: 1000, data, channels: 4, depth: 8 });
}

describe("a deferred image's size, as Anthropic's API takes it", () => {
  test("request_image of a 4 MB PNG, tools deferring one and one 9000 px tall: the next request is taken", {
    timeout: 120_000,
  }, async () => {
    await withLoopbackAnthropic(imageSizes, async (client, refused) => {
      await withSession(async (session, dir) => {
        const png = noisePng();
        await writeFile(join(dir, "noise.png"), png);
        const box = new ToolBox().withDefaults("fs");
        box.tool({
          name: "screen",
          description: "Shows the screen.",
          input: v.object({}),
          run: async (_args, ctx) => {
            await ctx.deferImage(png, "the screen");
            return "shown";
          },
        });
        const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Look at noise.png and the screen" }];
        // A full-page screenshot of a long page: small in bytes, over 8000 px tall.
        const tall = encodePng({
          width: 1280,
          height: 9000,
          data: new Uint8Array(1280 * 9000 * 4).fill(200),
          channels: 4,
          depth: 8,
        });
        box.tool({
          name: "page",
          description: "Shows the whole page.",
          input: v.object({}),
          run: async (_args, ctx) => {
            await ctx.deferImage(tall, "the whole page");
            return "shown";
          },
        });
        const calls: Anthropic.ToolUseBlockParam[] = [
          { type: "tool_use", id: "t1", name: "request_image", input: { src: "noise.png" } },
          { type: "tool_use", id: "t2", name: "screen", input: {} },
          { type: "tool_use", id: "t3", name: "page", input: {} },
        ];
        messages.push({ role: "assistant", content: calls });
        const turn = { content: calls, stop_reason: "tool_use" };
        const { message, results } = await runAnthropicToolCalls(box, session, turn);
        messages.push(message);
        const answer = await client.messages.create({
          model: "claude-sonnet-5-5",
          max_tokens: 64,
          messages,
          tools: anthropicTools(box.list()),
        });
        assert.deepEqual(refused, []);
        assert.equal((answer.content[0] as Anthropic.TextBlock).text, "seen");
        // request_image sent the picture as a JPEG that fits; the tool's own 4 MB image was refused with the fix.
        assert.equal(results[0].status, "success", results[0].error);
        assert.equal((results[0].output as { media_type: string }).media_type, "image/jpeg");
        assert.equal(results[1].errorCode, "image_too_large");
        const images = message.content.filter((block) => block.type === "image");
        assert.equal(images.length, 1);
        const texts = message.content.map((block) => block.type === "tool_result" ? block.content : "");
        assert.match(
          texts[1],
          /limited to 3932160 bytes.*\nHint: Scale the image down, crop it, or send it as JPEG\./s,
        );
        assert.equal(results[2].errorCode, "image_too_large");
        assert.match(
          texts[2],
          /is 1280×9000 px; images are limited to 2000 px on a side.*\nHint: Scale the image down/s,
        );
      }, { capabilities: ["vision"] });
    });
  });

  test("21 screenshots of 2400 px: the request is taken (each over 2000 px refused with the fix)", {
    timeout: 120_000,
  }, async () => {
    await withLoopbackAnthropic(imageSizes, async (client, refused) => {
      await withSession(async (session) => {
        const wide = encodePng({
          width: 2400,
          height: 60,
          data: new Uint8Array(2400 * 60 * 4).fill(90),
          channels: 4,
          depth: 8,
        });
        const box = new ToolBox();
        box.tool({
          name: "screen",
          description: "Shows the screen.",
          input: v.object({}),
          run: async (_args, ctx) => {
            await ctx.deferImage(wide, "the screen");
            return "shown";
          },
        });
        const calls: Anthropic.ToolUseBlockParam[] = Array.from({ length: 21 }, (_, i) => ({
          type: "tool_use",
          id: `t${i}`,
          name: "screen",
          input: {},
        }));
        const messages: Anthropic.MessageParam[] = [
          { role: "user", content: "Watch the screen" },
          { role: "assistant", content: calls },
        ];
        const { message, results } = await runAnthropicToolCalls(box, session, { content: calls });
        messages.push(message);
        const answer = await client.messages.create({ model: "claude-sonnet-5-5", max_tokens: 64, messages });
        assert.deepEqual(refused, []);
        assert.equal((answer.content[0] as Anthropic.TextBlock).text, "seen");
        assert.deepEqual(new Set(results.map((r) => r.errorCode)), new Set(["image_too_large"]));
      }, { capabilities: ["vision"] });
    });
  });
});
