import { test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { checkImage, deferredImagesMessage, MAX_IMAGE_BYTES, sniffImageType } from "../../core/images.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16]);
const GIF = new TextEncoder().encode("GIF89a\x01\x00");
const WEBP = new Uint8Array([...new TextEncoder().encode("RIFF"), 0, 0, 0, 0, ...new TextEncoder().encode("WEBPVP8 ")]);

test("images are recognised by their magic bytes", { timeout: 60_000 }, () => {
  assert.equal(sniffImageType(PNG), "image/png");
  assert.equal(sniffImageType(JPEG), "image/jpeg");
  assert.equal(sniffImageType(GIF), "image/gif");
  assert.equal(sniffImageType(WEBP), "image/webp");
  assert.equal(sniffImageType(new TextEncoder().encode("RIFF....WAVE")), undefined);
  assert.equal(sniffImageType(new TextEncoder().encode("<svg></svg>")), undefined);
  assert.equal(sniffImageType(new Uint8Array()), undefined);
});

test("checkImage refuses non-images and images whose base64 is over Anthropic's 5 MB", { timeout: 60_000 }, () => {
  assert.throws(
    () => checkImage(new TextEncoder().encode("%PDF-1.7"), "doc.png"),
    /doc.png is not a PNG, JPEG, WebP or GIF/,
  );
  const big = new Uint8Array(MAX_IMAGE_BYTES + 1);
  big.set(PNG);
  assert.throws(() => checkImage(big), /limited to 3932160 bytes/);
  // The largest image there is: its base64 is exactly the 5 MiB Anthropic's API takes per image.
  const largest = new Uint8Array(MAX_IMAGE_BYTES);
  largest.set(PNG);
  assert.equal(checkImage(largest), "image/png");
  assert.equal(Buffer.from(largest).toString("base64").length, 5 * 1024 * 1024);
  // Anthropic's API refuses an image over 2000 px on a side once a request holds more than 20 (8000 px for fewer);
  // the header decides, nothing is decoded.
  const side = (width: number, height: number) => {
    const header = new Uint8Array(24);
    header.set(PNG);
    header.set(new TextEncoder().encode("IHDR"), 12);
    new DataView(header.buffer).setUint32(16, width);
    new DataView(header.buffer).setUint32(20, height);
    return header;
  };
  assert.equal(checkImage(side(2000, 2000)), "image/png");
  assert.throws(() => checkImage(side(1280, 2001)), /is 1280×2001 px; images are limited to 2000 px on a side/);
  assert.throws(() => checkImage(side(9000, 10)), (e: Error & { code?: string }) => e.code === "image_too_large");
});

test("deferred images become one user message, notes before images", { timeout: 60_000 }, () => {
  assert.equal(deferredImagesMessage([]), undefined);
  const message = deferredImagesMessage([
    { mediaType: "image/png", data: PNG, toolName: "shot", note: "the page" },
    { mediaType: "image/gif", data: GIF, toolName: "img" },
  ])!;
  assert.equal(message.role, "user");
  assert.deepEqual(message.content.map((p) => p.type), ["text", "image", "text", "image"]);
  assert.deepEqual(message.content[0], { type: "text", text: "Image from shot: the page" });
});
