import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { decode as decodePng, encode as encodePng } from "fast-png";
import jpeg from "jpeg-js";
import { GifWriter } from "omggif";
import { ToolBox } from "../../../toolbox.ts";
import { sniffImageType } from "../../../core/images.ts";
import { type RequestImageResult, requestImageTool } from "../../../tools/fs/request_image.ts";
import { withSession } from "../../core/_helpers.ts";
import { whileSwappedForLink } from "../../_link_swapper.ts";

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

  test("a PNG within 1000 px but over the deferred-image size is sent as JPEG, within 5 MB of base64", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session, dir) => {
      // 1000×1000 of noise: 4 MB as PNG, whose base64 (5.3 MB) Anthropic's API refuses ("image exceeds 5 MB maximum").
      const data = new Uint8Array(1000 * 1000 * 4);
      let seed = 7;
      for (let i = 0; i < data.length; i++) data[i] = (seed = (seed * 48271) % 2147483647) & 0xff;
      await writeFile(
        path.join(dir, "noise.png"),
        encodePng({ width: 1000, height: 1000, data, channels: 4, depth: 8 }),
      );
      const result = await box.call(session, "request_image", { src: "noise.png" });
      assert.equal(result.status, "success", result.error);
      const out = result.output as RequestImageResult;
      assert.equal(out.media_type, "image/jpeg");
      assert.deepEqual([out.width, out.height], [1000, 1000]);
      const [image] = session.takeDeferredImages();
      assert.equal(image.mediaType, "image/jpeg");
      assert.equal(sniffImageType(image.data), "image/jpeg");
      assert.ok(Buffer.from(image.data).toString("base64").length <= 5 * 1024 * 1024, `${image.data.byteLength} bytes`);
    }, vision);
  });

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

  test(
    "crop cuts first, then scales: a detail of a large image keeps its full resolution",
    { timeout: 120_000 },
    async () => {
      await withSession(async (session, dir) => {
        // 2400×1200: red left, blue right. A 400×200 crop straddling the middle
        // is shown at 400×200 (scaling first would have made it 167×83).
        await writeFile(path.join(dir, "huge.png"), png(2400, 1200));
        const detail = await box.call(session, "request_image", {
          src: "huge.png",
          crop: { x: 1000, y: 500, width: 400, height: 200 },
        });
        assert.equal(detail.status, "success", detail.error);
        const out = detail.output as RequestImageResult;
        assert.deepEqual([out.width, out.height, out.original_width, out.original_height], [400, 200, 2400, 1200]);
        assert.deepEqual(out.crop, { x: 1000, y: 500, width: 400, height: 200 });
        assert.equal(out.note, "huge.png: 400×200 px (crop 400×200 at 1000,500 of original 2400×1200 px)");
        const decoded = decodePng(session.takeDeferredImages()[0].data);
        assert.deepEqual([decoded.width, decoded.height], [400, 200]);
        assert.deepEqual(pixel(decoded, 199, 100, decoded.channels), [255, 0, 0]);
        assert.deepEqual(pixel(decoded, 200, 100, decoded.channels), [0, 0, 255]);
        // A crop larger than the cap is cut, then scaled to 1000 px on its long side.
        const wide = (await box.call(session, "request_image", {
          src: "huge.png",
          crop: { x: 0, y: 0, width: 2000, height: 1000 },
        })).output as RequestImageResult;
        assert.deepEqual([wide.width, wide.height], [1000, 500]);
        const scaled = decodePng(session.takeDeferredImages()[0].data);
        // Red covers x < 1200 of the crop's 2000: 600 of the scaled 1000.
        assert.deepEqual(pixel(scaled, 595, 250, scaled.channels), [255, 0, 0]);
        assert.deepEqual(pixel(scaled, 605, 250, scaled.channels), [0, 0, 255]);
      }, vision);
    },
  );

  test("crop is in the upright image's pixels, and a JPEG stays JPEG", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      // Stored 400×200 (red left), orientation 6: shown 200×400 with red on top.
      await writeFile(path.join(dir, "turned.jpg"), withOrientation(jpg(400, 200), 6));
      const bottom = (await box.call(session, "request_image", {
        src: "turned.jpg",
        crop: { x: 0, y: 250, width: 200, height: 150 },
      })).output as RequestImageResult;
      assert.deepEqual([bottom.media_type, bottom.width, bottom.height], ["image/jpeg", 200, 150]);
      assert.match(bottom.note, /crop 200×150 at 0,250 of original 200×400 px, turned upright/);
      const decoded = jpeg.decode(session.takeDeferredImages()[0].data, { useTArray: true });
      assert.deepEqual([decoded.width, decoded.height], [200, 150]);
      assert.ok(near(pixel(decoded, 100, 75), [0, 0, 255]), `${pixel(decoded, 100, 75)}`);
      // A GIF's crop is a PNG.
      await writeFile(path.join(dir, "anim.gif"), gif(120, 60));
      const gifCrop = (await box.call(session, "request_image", {
        src: "anim.gif",
        crop: { x: 70, y: 10, width: 20, height: 20 },
      })).output as RequestImageResult;
      assert.deepEqual([gifCrop.media_type, gifCrop.width, gifCrop.height], ["image/png", 20, 20]);
      const cut = decodePng(session.takeDeferredImages()[0].data);
      assert.deepEqual(pixel(cut, 10, 10, cut.channels), [0, 0, 255]);
    }, vision);
  });

  test("a crop outside the image, of a WebP, or malformed is refused", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "small.png"), png(200, 100));
      const beyond = await box.call(session, "request_image", {
        src: "small.png",
        crop: { x: 150, y: 0, width: 100, height: 50 },
      });
      assert.equal(beyond.errorCode, "invalid_arguments");
      assert.match(beyond.error!, /reaches beyond small\.png, which is 200×100 px/);
      for (
        const crop of [
          { x: -1, y: 0, width: 10, height: 10 },
          { x: 0, y: 0, width: 0, height: 10 },
          {
            x: 0.5,
            y: 0,
            width: 10,
            height: 10,
          },
          { x: 0, y: 0, width: 10 },
          { x: 0, y: 0, width: 10, height: 10, z: 1 },
        ]
      ) {
        const refused = await box.call(session, "request_image", { src: "small.png", crop });
        assert.equal(refused.errorCode, "invalid_arguments", JSON.stringify(crop));
      }
      const tiny = Uint8Array.from(atob("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="), (c) => c.charCodeAt(0));
      await writeFile(path.join(dir, "tiny.webp"), tiny);
      const webp = await box.call(session, "request_image", {
        src: "tiny.webp",
        crop: { x: 0, y: 0, width: 1, height: 1 },
      });
      assert.equal(webp.errorCode, "unsupported_image");
      assert.match(webp.error!, /cannot crop/);
      assert.equal(session.takeDeferredImages().length, 0);
    }, vision);
  });

  test("it is listed only for models with vision", { timeout: 60_000 }, () => {
    assert.deepEqual(box.list({ capabilities: [] }).map((t) => t.name), []);
    assert.deepEqual(box.list({ capabilities: ["vision"] }).map((t) => t.name), ["request_image"]);
  });
});

// A racer (tests/_link_swapper.ts) swaps a.png for a link to an image outside the workspace and back. request_image
// opened the resolved path, which followed the link swapped in after the resolution: the outside image was shown to
// the model within a few hundred calls.
describe("request_image against a file swapped for a link during the call", () => {
  test("never the image the link leads to", { timeout: 60_000 }, async () => {
    const outside = await mkdtemp(path.join(tmpdir(), "toolfence-image-outside-"));
    const secret = path.join(outside, "secret.png");
    // The outside image is told apart by its size: 7×5 against the workspace's 4×4.
    await writeFile(secret, png(7, 5));
    try {
      await withSession(async (session, dir) => {
        await writeFile(path.join(dir, "a.png"), png(4, 4));
        let calls = 0;
        let answered = 0;
        await whileSwappedForLink(dir, "a.png", secret, async () => {
          const deadline = performance.now() + 4_000;
          while (performance.now() < deadline) {
            const result = await box.call(session, "request_image", { src: "a.png" });
            const shown = session.takeDeferredImages().map((image) => decodePng(image.data));
            assert.ok(
              shown.every((image) => image.width === 4) && !JSON.stringify(result).includes('"original_width":7'),
              `call ${calls} showed the image outside: ${JSON.stringify(result.output)}`,
            );
            calls++;
            if (result.status === "success") answered++;
          }
        });
        // The race must have let calls through, and refused some, or it proved nothing.
        assert.ok(answered > 0 && answered < calls, `${answered} of ${calls} calls answered`);
      }, vision);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
