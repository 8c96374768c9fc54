/**
 * The `request_image` tool: shows the model an image file of the workspace.
 *
 * @module
 */

import * as v from "valibot";
import { open } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import { checkImage, type ImageMediaType, MAX_IMAGE_BYTES } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import {
  decodeImage,
  encodeImage,
  fittedSize,
  headerSize,
  type ImageSize,
  jpegOrientation,
  orientImage,
  resizeImage,
} from "../_shared/fs_request_image_codec.ts";
import { REQUEST_IMAGE_OUTPUT } from "./_outputs.ts";

/** The longest side, in pixels, of an image handed to the model. */
export const MAX_IMAGE_SIDE = 1000;

/** The largest image file `request_image` reads. */
export const MAX_SOURCE_IMAGE_BYTES = 50 * 1024 * 1024;

/** The most pixels `request_image` decodes (8-bit RGBA, so 4 bytes each). */
export const MAX_SOURCE_PIXELS = 100_000_000;

/** Arguments of `request_image`. */
export interface RequestImageArgs {
  /** Path of the image, relative to the workspace. */
  src: string;
}

/** What `request_image` returns; the image itself follows the batch's results. */
export interface RequestImageResult {
  /** Absolute path of the image. */
  path: string;
  /** Format of the image handed over. */
  media_type: ImageMediaType;
  /** Its width in pixels. */
  width: number;
  /** Its height in pixels. */
  height: number;
  /** The file's width in pixels. */
  original_width: number;
  /** The file's height in pixels. */
  original_height: number;
  /** Whether it was scaled down (or turned upright per its EXIF orientation). */
  resized: boolean;
  /** The line that accompanies the image. */
  note: string;
}

function invalid(message: string, code: string, details?: Record<string, unknown>): ToolError {
  return new ToolError(message, { code, kind: "semantic", recoverable: false, details });
}

async function readLimited(file: string, shown: string): Promise<Uint8Array> {
  const handle = await open(file, "r");
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw invalid(`${shown} is not a regular file`, "not_a_file");
    if (stat.size > MAX_SOURCE_IMAGE_BYTES) {
      throw invalid(
        `${shown} is ${stat.size} bytes; request_image reads images of at most ${MAX_SOURCE_IMAGE_BYTES} bytes`,
        "image_too_large",
        { bytes: stat.size },
      );
    }
    const bytes = new Uint8Array(stat.size);
    const { bytesRead } = await handle.read(bytes, 0, stat.size, 0);
    return bytes.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * `request_image(src)`: shows an image file of the workspace to the model. The
 * format is judged by the file's bytes (PNG, JPEG, GIF, WebP), never its name.
 * An image whose long side exceeds 1,000 px is scaled down to 1,000 px (area
 * averaging; a JPEG stays JPEG, a GIF's first frame becomes PNG), and a JPEG is
 * turned upright per its EXIF orientation; WebP is passed on unchanged and
 * refused when it is larger. The image reaches the model after the batch's
 * results, through `ctx.deferImage`, with a note giving its final and original
 * sizes. Requires the model capability `vision`.
 *
 * Requires `--allow-read` for the workspace.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { requestImageTool } from "@toolfence/tools";
 * const box = new ToolBox().register(requestImageTool);
 * const session = new Session({ workspace: Deno.cwd(), capabilities: ["vision"] });
 * const result = await box.call(session, "request_image", { src: "docs/diagram.png" });
 * console.log(result.output, session.takeDeferredImages().length);
 * await session.close();
 * ```
 */
export const requestImageTool: Tool<RequestImageArgs> = tool({
  name: "request_image",
  description: "Look at an image file (PNG, JPEG, GIF or WebP) in the workspace.\n" +
    "The image is shown to you right after the tool results, scaled down so its long side is at most " +
    "1000 px; the result says its final and original sizes.",
  input: v.object({
    src: v.pipe(v.string(), v.description("Path of the image, relative to the workspace.")),
  }),
  output: REQUEST_IMAGE_OUTPUT,
  requires: ["vision"],
  idempotent: true,
  needs: { read: ["workspace"] },
  async run({ src }, ctx): Promise<RequestImageResult> {
    const file = (await ctx.policy.files.resolve(src)).path;
    const shown = ctx.workspace.relative(file);
    const bytes = await readLimited(file, shown);
    const type = checkTypeOnly(bytes, shown);
    const original = headerSize(bytes, type);
    if (!original || original.width === 0 || original.height === 0) {
      throw invalid(`${shown} looks like ${type} but its header is unreadable`, "invalid_image");
    }
    const orientation = type === "image/jpeg" ? jpegOrientation(bytes) : 1;
    const target = fittedSize(original, MAX_IMAGE_SIDE);
    let media: ImageMediaType = type;
    let out = bytes;
    let final: ImageSize = original;
    const needsWork = target.width !== original.width || target.height !== original.height || orientation !== 1 ||
      bytes.byteLength > MAX_IMAGE_BYTES;
    if (needsWork) {
      if (type === "image/webp") {
        throw invalid(
          `${shown} is a WebP image of ${original.width}×${original.height} px; WebP can only be shown up to ` +
            `${MAX_IMAGE_SIDE} px on its long side (convert it to PNG or JPEG first)`,
          "unsupported_image",
          { original },
        );
      }
      if (original.width * original.height > MAX_SOURCE_PIXELS) {
        throw invalid(
          `${shown} has ${original.width}×${original.height} px; request_image decodes at most ${MAX_SOURCE_PIXELS} pixels`,
          "image_too_large",
          { original },
        );
      }
      let decoded;
      try {
        decoded = decodeImage(bytes, type);
      } catch (error) {
        throw invalid(`${shown} could not be decoded as ${type}: ${(error as Error).message}`, "invalid_image");
      }
      ctx.signal.throwIfAborted();
      const image = orientImage(resizeImage(decoded, target.width, target.height), orientation);
      media = type === "image/jpeg" ? "image/jpeg" : "image/png";
      out = encodeImage(image, media);
      final = { width: image.width, height: image.height };
    }
    const name = path.basename(file);
    const note = needsWork
      ? `${name}: ${final.width}×${final.height} px (original ${original.width}×${original.height} px${
        orientation !== 1 ? `, turned upright per its EXIF orientation` : ""
      })`
      : `${name}: ${final.width}×${final.height} px (original size)`;
    await ctx.deferImage(out, note);
    return {
      path: file,
      media_type: media,
      width: final.width,
      height: final.height,
      original_width: original.width,
      original_height: original.height,
      resized: needsWork,
      note,
    };
  },
});

// checkImage also enforces the 10 MB limit of deferred images; a larger source
// may still be scaled down below it, so only its type is judged here.
function checkTypeOnly(bytes: Uint8Array, shown: string): ImageMediaType {
  return checkImage(bytes.subarray(0, 64), shown);
}
