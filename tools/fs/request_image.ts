/**
 * The `request_image` tool: shows the model an image file of the workspace.
 *
 * @module
 */

import * as v from "valibot";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import { checkImage, type ImageMediaType, MAX_IMAGE_BYTES, sniffImageType } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import type { FileDoor, FileTarget } from "@toolfence/core";
import { type OpenFile, openRegularFile, readFully } from "../_shared/fs_open.ts";
import {
  cropImage,
  decodeImage,
  encodeWithin,
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

/** A rectangle of an image, in pixels: its top-left corner and its size. */
export interface RequestImageCrop {
  /** Pixels from the left edge. */
  x: number;
  /** Pixels from the top edge. */
  y: number;
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
}

/** Arguments of `request_image`. */
export interface RequestImageArgs {
  /** Path of the image, relative to the workspace. */
  src: string;
  /**
   * The part of the image to show, in pixels of the image as it is shown (upright
   * per its EXIF orientation): cut out first, then scaled to the 1,000 px cap.
   */
  crop?: RequestImageCrop;
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
  /** The rectangle cut out of the upright image, when `crop` was given. */
  crop?: RequestImageCrop;
}

const CROP_OFFSET = v.pipe(v.number(), v.integer(), v.minValue(0));
const CROP_SIDE = v.pipe(v.number(), v.integer(), v.minValue(1));

function invalid(message: string, code: string, details?: Record<string, unknown>): ToolError {
  return new ToolError(message, { code, kind: "semantic", recoverable: false, details });
}

// Opened by the file door, never by the resolved path: an open of the path follows whatever link is there by then, and
// an image swapped for a link to a file outside the workspace (or a denied one) between the resolution and the open
// was shown to the model (tests/tools/fs/request_image_test.ts).
async function readLimited(files: FileDoor, target: FileTarget, shown: string): Promise<Uint8Array> {
  let opened: OpenFile;
  try {
    opened = await openRegularFile(files, target, shown, "Give the path of an image file, not a directory.");
  } catch (error) {
    if (!(error instanceof ToolError) || error.code !== "is_directory" && error.code !== "not_regular_file") {
      throw error;
    }
    throw invalid(`${shown} is not a regular file`, "not_a_file");
  }
  const { handle, stat } = opened;
  try {
    if (stat.size > MAX_SOURCE_IMAGE_BYTES) {
      throw invalid(
        `${shown} is ${stat.size} bytes; request_image reads images of at most ${MAX_SOURCE_IMAGE_BYTES} bytes`,
        "image_too_large",
        { bytes: stat.size },
      );
    }
    const bytes = new Uint8Array(stat.size);
    const bytesRead = await readFully(handle, bytes, stat.size, 0);
    return bytes.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * `request_image(src, crop?)`: shows an image file of the workspace to the
 * model. The format is judged by the file's bytes (PNG, JPEG, GIF, WebP), never
 * its name. In xun's order: a JPEG is turned upright per its EXIF orientation,
 * then `crop` (`{ x, y, width, height }` in pixels of the upright image, which it
 * must lie within) cuts out a part, then an image whose long side exceeds
 * 1,000 px is scaled down to 1,000 px (area averaging; a JPEG stays JPEG, a GIF's
 * first frame becomes PNG). WebP cannot be decoded here: it is passed on
 * unchanged, and refused when it is larger or a crop is asked for. The image reaches the model after the batch's
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
    "1000 px; the result says its final and original sizes. To see a detail at full resolution, pass " +
    "`crop` (a rectangle in pixels of the original): it is cut out first, then scaled.",
  input: v.object({
    src: v.pipe(v.string(), v.description("Path of the image, relative to the workspace.")),
    crop: v.optional(v.pipe(
      v.strictObject({ x: CROP_OFFSET, y: CROP_OFFSET, width: CROP_SIDE, height: CROP_SIDE }),
      v.description(
        "Only this part of the image: its top-left corner (x, y) and its size, in pixels of the original " +
          "(upright) image; cut out before scaling.",
      ),
    )),
  }),
  output: REQUEST_IMAGE_OUTPUT,
  requires: ["vision"],
  idempotent: true,
  needs: { read: ["workspace"] },
  async run({ src, crop }, ctx): Promise<RequestImageResult> {
    const found = await ctx.policy.files.resolve(src);
    const file = found.path;
    const shown = ctx.workspace.relative(file);
    const bytes = await readLimited(ctx.policy.files, found, shown);
    const type = checkTypeOnly(bytes, shown);
    const original = headerSize(bytes, type);
    if (!original || original.width === 0 || original.height === 0) {
      throw invalid(`${shown} looks like ${type} but its header is unreadable`, "invalid_image");
    }
    const orientation = type === "image/jpeg" ? jpegOrientation(bytes) : 1;
    const upright = orientation >= 5 ? { width: original.height, height: original.width } : original;
    if (crop) checkCrop(crop, upright, shown);
    const cut = crop ?? upright;
    const target = fittedSize(cut, MAX_IMAGE_SIDE);
    let media: ImageMediaType = type;
    let out = bytes;
    let final: ImageSize = original;
    const needsWork = crop !== undefined || target.width !== original.width || target.height !== original.height ||
      orientation !== 1 || bytes.byteLength > MAX_IMAGE_BYTES;
    if (needsWork) {
      if (type === "image/webp") {
        throw invalid(
          crop
            ? `${shown} is a WebP image, which request_image cannot crop (convert it to PNG or JPEG first)`
            : `${shown} is a WebP image of ${original.width}×${original.height} px; WebP can only be shown up to ` +
              `${MAX_IMAGE_SIDE} px on its long side (convert it to PNG or JPEG first)`,
          "unsupported_image",
          { original, crop },
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
      // Upright first, so the crop is in the pixels the model was shown; then the
      // cut, then the scaling (xun caps the long side after cropping).
      const turned = orientImage(decoded, orientation);
      const image = resizeImage(crop ? cropImage(turned, crop) : turned, target.width, target.height);
      ({ bytes: out, type: media } = encodeWithin(image, type === "image/jpeg" ? "image/jpeg" : "image/png"));
      final = { width: image.width, height: image.height };
    }
    const name = path.basename(file);
    const turnedNote = orientation !== 1 ? `, turned upright per its EXIF orientation` : "";
    const note = crop
      ? `${name}: ${final.width}×${final.height} px (crop ${crop.width}×${crop.height} at ${crop.x},${crop.y} of ` +
        `original ${upright.width}×${upright.height} px${turnedNote})`
      : needsWork
      ? `${name}: ${final.width}×${final.height} px (original ${original.width}×${original.height} px${turnedNote})`
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
      ...(crop ? { crop } : {}),
    };
  },
});

function checkCrop(crop: RequestImageCrop, upright: ImageSize, shown: string): void {
  if (crop.x + crop.width > upright.width || crop.y + crop.height > upright.height) {
    throw new ToolError(
      `crop ${crop.width}×${crop.height} at ${crop.x},${crop.y} reaches beyond ${shown}, which is ` +
        `${upright.width}×${upright.height} px; give a rectangle within it`,
      { code: "invalid_arguments", details: { crop, size: upright } },
    );
  }
}

// checkImage also enforces the size limits of deferred images (bytes and sides); a larger source
// may still be scaled down below them, so only its type is judged here (checkImage words the refusal).
function checkTypeOnly(bytes: Uint8Array, shown: string): ImageMediaType {
  return sniffImageType(bytes) ?? checkImage(bytes.subarray(0, 0), shown);
}
