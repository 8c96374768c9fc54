import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { decode as decodePng, encode as encodePng } from "fast-png";
import jpeg from "jpeg-js";
import { GifWriter } from "omggif";
import { ToolBox } from "../../../toolbox.ts";
import { sniffImageType } from "../../../core/images.ts";
import { type RequestImageResult, requestImageTool } from "../../../tools/fs/request_image.ts";
import { withSession } from "../../core/_helpers.ts";

const box = new ToolBox().register(requestImageTool);
const vision = { capabilities: ["vision"] } as const;

/** Left half red, right half blue, opaque. */
function halves(width: number, height: number): Uint8Array {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      data.set(x < width / 2 ? [255, 0, 0, 255] : [0, 0, 255, 255], o);
    }
  }
  return data;
}

function png(width: number, height: number): Uint8Array {
  return encodePng({ width, height, data: halves(width, height), channels: 4, depth: 8 });
}

function jpg(width: number, height: number, data = halves(width, height)): Uint8Array {
  return new Uint8Array(jpeg.encode({ width, height, data: Buffer.from(data) }, 90).data);
}

/** Inserts an EXIF segment with the given orientation after the JPEG's SOI marker. */
function withOrientation(bytes: Uint8Array, orientation: number): Uint8Array {
  const tiff = [0x4d, 0x4d, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0, 0, 0, 0, 0];
  const body = [...new TextEncoder().encode("Exif\0\0"), ...tiff];
  const segment = [0xff, 0xe1, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body];
  return new Uint8Array([...bytes.subarray(0, 2), ...segment, ...bytes.subarray(2)]);
}

function gif(width: number, height: number): Uint8Array {
  const buffer = new Uint8Array(width * height + 10_000);
  const writer = new GifWriter(buffer, width, height, { palette: [0xff0000, 0x0000ff] });
  const pixels = new Array(width * height).fill(0).map((_, i) => (i % width) < width / 2 ? 0 : 1);
  writer.addFrame(0, 0, width, height, pixels);
  return buffer.subarray(0, writer.end());
}

function pixel(image: { width: number; data: ArrayLike<number> }, x: number, y: number, channels = 4): number[] {
  const o = (y * image.width + x) * channels;
  return [image.data[o], image.data[o + 1], image.data[o + 2]];
}

function near(actual: number[], expected: number[], tolerance = 40): boolean {
  return actual.every((v, i) => Math.abs(v - expected[i]) <= tolerance);
}

describe("request_image", () => {
  test(
    "a large PNG is scaled to 1000 px on its long side; the note gives both sizes",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session, dir) => {
        await writeFile(path.join(dir, "wide.png"), png(3000, 1500));
        const result = await box.call(session, "request_image", { src: "wide.png" });
        assert.equal(result.status, "success", result.error);
        const out = result.output as RequestImageResult;
        assert.deepEqual([out.width, out.height, out.original_width, out.original_height], [1000, 500, 3000, 1500]);
        assert.equal(out.media_type, "image/png");
        assert.equal(out.note, "wide.png: 1000×500 px (original 3000×1500 px)");
        const [image] = session.takeDeferredImages();
        assert.equal(image.note, out.note);
        assert.equal(image.mediaType, "image/png");
        const decoded = decodePng(image.data);
        assert.deepEqual([decoded.width, decoded.height], [1000, 500]);
        assert.deepEqual(pixel(decoded, 10, 10, decoded.channels), [255, 0, 0]);
        assert.deepEqual(pixel(decoded, 990, 490, decoded.channels), [0, 0, 255]);
      }, vision);
    },
  );

  test("an image within 1000 px is handed over unchanged", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      const bytes = png(200, 100);
      await writeFile(path.join(dir, "small.png"), bytes);
      const out = (await box.call(session, "request_image", { src: "small.png" })).output as RequestImageResult;
      assert.equal(out.resized, false);
      assert.equal(out.note, "small.png: 200×100 px (original size)");
      assert.deepEqual(session.takeDeferredImages()[0].data, bytes);
    }, vision);
  });

  test("a JPEG stays JPEG, and is turned upright per its EXIF orientation", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "photo.jpg"), jpg(2400, 1200));
      const big = (await box.call(session, "request_image", { src: "photo.jpg" })).output as RequestImageResult;
      assert.deepEqual([big.media_type, big.width, big.height], ["image/jpeg", 1000, 500]);
      // Orientation 6: the stored picture is shown rotated 90° clockwise, so the
      // red left half ends up on top.
      await writeFile(path.join(dir, "turned.jpg"), withOrientation(jpg(400, 200), 6));
      const turned = (await box.call(session, "request_image", { src: "turned.jpg" })).output as RequestImageResult;
      assert.deepEqual([turned.width, turned.height, turned.original_width, turned.original_height], [
        200,
        400,
        400,
        200,
      ]);
      assert.match(turned.note, /turned upright/);
      const [, second] = session.takeDeferredImages();
      const decoded = jpeg.decode(second.data, { useTArray: true });
      assert.deepEqual([decoded.width, decoded.height], [200, 400]);
      assert.ok(near(pixel(decoded, 100, 20), [255, 0, 0]), `${pixel(decoded, 100, 20)}`);
      assert.ok(near(pixel(decoded, 100, 380), [0, 0, 255]), `${pixel(decoded, 100, 380)}`);
    }, vision);
  });

  test("a large GIF becomes a PNG of its first frame", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "anim.gif"), gif(1200, 600));
      const out = (await box.call(session, "request_image", { src: "anim.gif" })).output as RequestImageResult;
      assert.deepEqual([out.media_type, out.width, out.height], ["image/png", 1000, 500]);
      const decoded = decodePng(session.takeDeferredImages()[0].data);
      assert.deepEqual(pixel(decoded, 5, 5, decoded.channels), [255, 0, 0]);
    }, vision);
  });

  test("WebP: small ones pass unchanged, larger ones are refused with the fix", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      const tiny = Uint8Array.from(atob("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="), (c) => c.charCodeAt(0));
      await writeFile(path.join(dir, "tiny.webp"), tiny);
      const out = (await box.call(session, "request_image", { src: "tiny.webp" })).output as RequestImageResult;
      assert.deepEqual([out.media_type, out.width, out.height], ["image/webp", 1, 1]);
      const header = new Uint8Array(40);
      header.set(new TextEncoder().encode("RIFF"), 0);
      header.set(new TextEncoder().encode("WEBPVP8X"), 8);
      header.set([0xcf, 0x07, 0x00, 0xe7, 0x03, 0x00], 24); // 2000 × 1000
      await writeFile(path.join(dir, "big.webp"), header);
      const refused = await box.call(session, "request_image", { src: "big.webp" });
      assert.equal(refused.errorCode, "unsupported_image");
      assert.match(refused.error!, /2000×1000 px.*convert it to PNG or JPEG/);
    }, vision);
  });

  test("content decides, not the name; paths outside the workspace are refused", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "fake.png"), "not an image at all");
      const fake = await box.call(session, "request_image", { src: "fake.png" });
      assert.equal(fake.errorCode, "invalid_image");
      await writeFile(path.join(dir, "real.txt"), png(10, 10));
      const real = (await box.call(session, "request_image", { src: "real.txt" })).output as RequestImageResult;
      assert.equal(real.media_type, "image/png");
      assert.equal(sniffImageType(session.takeDeferredImages()[0].data), "image/png");
      const outside = await box.call(session, "request_image", { src: "../../etc/hostname" });
      assert.equal(outside.errorCode, "outside_workspace");
    }, vision);
  });

  test("it is listed only for models with vision", { timeout: 60_000 }, () => {
    assert.deepEqual(box.list({ capabilities: [] }).map((t) => t.name), []);
    assert.deepEqual(box.list({ capabilities: ["vision"] }).map((t) => t.name), ["request_image"]);
  });
});
