/**
 * Images a tool hands to the model after the current batch's results, since
 * most providers do not accept images inside a tool result.
 *
 * @module
 */

import { ToolError } from "./errors.ts";

/** The image formats every provider accepts. */
export type ImageMediaType = "image/png" | "image/jpeg" | "image/webp" | "image/gif";

/**
 * The largest image that can be deferred: 3.75 MiB, whose base64 form is the
 * 5 MiB Anthropic's API takes per image (a larger one fails the whole request,
 * "image exceeds 5 MB maximum", on every later turn too while it stays in the
 * conversation; Amazon Bedrock's limit is the 3.75 MB itself). OpenAI and
 * Gemini take more.
 */
export const MAX_IMAGE_BYTES = 3_932_160;

/**
 * The longest side, in pixels, of an image that can be deferred: Anthropic's
 * API refuses a request with an image over 8000 px on a side, and over 2000 px
 * once the request holds more than 20 images ("At least one of the image
 * dimensions exceed max allowed size for many-image requests: 2000 pixels"),
 * which a conversation reaches as it goes on. It scales a larger image down to
 * 1568 px anyway.
 */
export const MAX_IMAGE_SIDE_PX = 2000;

/** An image queued by `ctx.deferImage`, delivered after the batch. */
export interface DeferredImage {
  /** Format, detected from the bytes. */
  mediaType: ImageMediaType;
  /** The image bytes. */
  data: Uint8Array;
  /** One line for the model about the image. */
  note?: string;
  /** The tool that queued it. */
  toolName: string;
  /** The call that queued it. */
  callId?: string;
}

/** Width and height in pixels. */
export interface ImageSize {
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
}

const u16be = (b: Uint8Array, at: number) => (b[at] << 8) | b[at + 1];
const u16le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8);
const u24le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8) | (b[at + 2] << 16);
const u32be = (b: Uint8Array, at: number) => ((b[at] << 24) >>> 0) + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]);

function jpegSize(b: Uint8Array): ImageSize | undefined {
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1];
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    // Start-of-frame markers, except DHT (c4), JPG (c8) and DAC (cc).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: u16be(b, at + 5), width: u16be(b, at + 7) };
    }
    at += 2 + u16be(b, at + 2);
  }
  return undefined;
}

function webpSize(b: Uint8Array): ImageSize | undefined {
  const chunk = String.fromCharCode(...b.subarray(12, 16));
  if (chunk === "VP8 " && b.length >= 30) {
    return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  }
  if (chunk === "VP8L" && b.length >= 25) {
    return {
      width: 1 + (((b[22] & 0x3f) << 8) | b[21]),
      height: 1 + (((b[24] & 0x0f) << 10) | (b[23] << 2) | ((b[22] & 0xc0) >> 6)),
    };
  }
  if (chunk === "VP8X" && b.length >= 30) return { width: 1 + u24le(b, 24), height: 1 + u24le(b, 27) };
  return undefined;
}

/**
 * The size stated in an image's header, without decoding it; undefined when
 * the header is unreadable.
 *
 * @example
 * ```ts
 * import { imageSize } from "@toolfence/core";
 * const png = new Uint8Array(24);
 * png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
 * png.set([0, 0, 0, 3, 0, 0, 0, 2], 16);
 * console.log(imageSize(png, "image/png")); // { width: 3, height: 2 }
 * ```
 */
export function imageSize(bytes: Uint8Array, type: ImageMediaType): ImageSize | undefined {
  switch (type) {
    case "image/png":
      return bytes.length >= 24 ? { width: u32be(bytes, 16), height: u32be(bytes, 20) } : undefined;
    case "image/gif":
      return bytes.length >= 10 ? { width: u16le(bytes, 6), height: u16le(bytes, 8) } : undefined;
    case "image/jpeg":
      return jpegSize(bytes);
    case "image/webp":
      return webpSize(bytes);
  }
}

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  return prefix.every((b, i) => bytes[at + i] === b);
}

/**
 * Detects PNG, JPEG, WebP or GIF by their magic bytes (never by a file name).
 *
 * @example
 * ```ts
 * import { sniffImageType } from "@toolfence/core";
 * console.log(sniffImageType(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))); // "image/png"
 * ```
 */
export function sniffImageType(bytes: Uint8Array): ImageMediaType | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) {
    return "image/gif";
  }
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) {
    return "image/webp";
  }
  return undefined;
}

/**
 * Checks that bytes are an image that can be deferred and returns its type;
 * throws a `ToolError` (`invalid_image` or `image_too_large`) otherwise.
 *
 * @example
 * ```ts
 * import { checkImage } from "@toolfence/core";
 * try { checkImage(new TextEncoder().encode("not an image")); } catch (e) { console.log((e as Error).message); }
 * ```
 */
export function checkImage(bytes: Uint8Array, label = "the image"): ImageMediaType {
  if (bytes.byteLength > MAX_IMAGE_BYTES) {
    throw new ToolError(
      `${label} is ${bytes.byteLength} bytes; images are limited to ${MAX_IMAGE_BYTES} bytes (3.75 MiB, ` +
        "whose base64 is the 5 MB a provider takes per image)",
      {
        code: "image_too_large",
        kind: "semantic",
        recoveryHint: "Scale the image down, crop it, or send it as JPEG.",
      },
    );
  }
  const type = sniffImageType(bytes);
  if (!type) {
    throw new ToolError(`${label} is not a PNG, JPEG, WebP or GIF image (judged by its content, not its name)`, {
      code: "invalid_image",
      kind: "semantic",
    });
  }
  const size = imageSize(bytes, type);
  if (size && Math.max(size.width, size.height) > MAX_IMAGE_SIDE_PX) {
    throw new ToolError(
      `${label} is ${size.width}×${size.height} px; images are limited to ${MAX_IMAGE_SIDE_PX} px on a side ` +
        "(Anthropic's API refuses a larger one once a conversation holds more than 20 images)",
      { code: "image_too_large", kind: "semantic", recoveryHint: "Scale the image down, or crop it." },
    );
  }
  return type;
}

/** A provider-neutral user message that carries deferred images. */
export interface DeferredImageMessage {
  /** Always `user`: the images come from the user side of the conversation. */
  role: "user";
  /** Notes as text parts, each followed by its image. */
  content: ({ type: "text"; text: string } | { type: "image"; mediaType: ImageMediaType; data: Uint8Array })[];
}

/**
 * Turns deferred images into one user message (notes, then each image), or
 * undefined when there are none. Adapters render it per provider.
 *
 * @example
 * ```ts
 * import { deferredImagesMessage } from "@toolfence/core";
 * console.log(deferredImagesMessage([])); // undefined
 * ```
 */
export function deferredImagesMessage(images: readonly DeferredImage[]): DeferredImageMessage | undefined {
  if (images.length === 0) return undefined;
  const content: DeferredImageMessage["content"] = [];
  for (const image of images) {
    content.push({ type: "text", text: `Image from ${image.toolName}${image.note ? `: ${image.note}` : ""}` });
    content.push({ type: "image", mediaType: image.mediaType, data: image.data });
  }
  return { role: "user", content };
}
