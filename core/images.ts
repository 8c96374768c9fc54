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
