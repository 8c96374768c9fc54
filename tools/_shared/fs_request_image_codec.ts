/**
 * Image sizes from headers, decoding to RGBA, cropping, area-average downscaling,
 * EXIF orientation, and encoding, for `request_image`. Pure JavaScript codecs
 * (fast-png, jpeg-js, omggif): no native build, no permissions.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { convertIndexedToRgb, decode as decodePng, type DecodedPng, encode as encodePng } from "fast-png";
import jpeg from "jpeg-js";
import { GifReader } from "omggif";
import { type ImageMediaType, type ImageSize, imageSize, MAX_IMAGE_BYTES } from "@toolfence/core";

export type { ImageSize };

/** Decoded pixels, 8-bit RGBA, row by row. */
export interface RgbaImage extends ImageSize {
  data: Uint8Array;
}

const u16be = (b: Uint8Array, at: number) => (b[at] << 8) | b[at + 1];
const u16le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8);
const u32be = (b: Uint8Array, at: number) => ((b[at] << 24) >>> 0) + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]);

/** The size stated in an image's header, without decoding it (core's `imageSize`). */
export const headerSize: (bytes: Uint8Array, type: ImageMediaType) => ImageSize | undefined = imageSize;

/** The EXIF orientation (1 to 8) of a JPEG; 1 when it has none. */
export function jpegOrientation(b: Uint8Array): number {
  let at = 2;
  while (at + 4 < b.length && b[at] === 0xff) {
    const marker = b[at + 1];
    const length = u16be(b, at + 2);
    if (marker === 0xda) break;
    if (marker === 0xe1 && String.fromCharCode(...b.subarray(at + 4, at + 8)) === "Exif") {
      const tiff = at + 10;
      const little = b[tiff] === 0x49;
      const u16 = (p: number) => little ? u16le(b, p) : u16be(b, p);
      const u32 = (p: number) => little ? (u16le(b, p) + u16le(b, p + 2) * 65536) : u32be(b, p);
      const ifd = tiff + u32(tiff + 4);
      if (ifd + 2 > b.length) return 1;
      const entries = u16(ifd);
      for (let i = 0; i < entries; i++) {
        const entry = ifd + 2 + i * 12;
        if (entry + 10 > b.length) return 1;
        if (u16(entry) === 0x0112) {
          const value = u16(entry + 8);
          return value >= 1 && value <= 8 ? value : 1;
        }
      }
      return 1;
    }
    at += 2 + length;
  }
  return 1;
}

function pngToRgba(png: DecodedPng): RgbaImage {
  const { width, height } = png;
  const out = new Uint8Array(width * height * 4);
  if (png.palette) {
    const rgb = convertIndexedToRgb(png);
    const per = png.palette[0]?.length ?? 3;
    for (let i = 0, o = 0; o < out.length; i += per, o += 4) {
      out[o] = rgb[i];
      out[o + 1] = rgb[i + 1];
      out[o + 2] = rgb[i + 2];
      out[o + 3] = per === 4 ? rgb[i + 3] : 255;
    }
    return { width, height, data: out };
  }
  const { channels, depth, data } = png;
  const max = (1 << depth) - 1;
  const rowBits = width * channels * depth;
  const sample = (x: number, y: number, c: number): number => {
    if (depth === 8) return data[(y * width + x) * channels + c];
    if (depth === 16) return data[(y * width + x) * channels + c] >> 8;
    // Packed samples: each row starts on a byte boundary.
    const bit = y * Math.ceil(rowBits / 8) * 8 + (x * channels + c) * depth;
    const value = (data[bit >> 3] >> (8 - depth - (bit & 7))) & max;
    return Math.round((value * 255) / max);
  };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      if (channels >= 3) {
        out[o] = sample(x, y, 0);
        out[o + 1] = sample(x, y, 1);
        out[o + 2] = sample(x, y, 2);
        out[o + 3] = channels === 4 ? sample(x, y, 3) : 255;
      } else {
        out[o] = out[o + 1] = out[o + 2] = sample(x, y, 0);
        out[o + 3] = channels === 2 ? sample(x, y, 1) : 255;
      }
    }
  }
  return { width, height, data: out };
}

/** Decodes a PNG, JPEG or GIF (its first frame) to RGBA. */
export function decodeImage(bytes: Uint8Array, type: "image/png" | "image/jpeg" | "image/gif"): RgbaImage {
  if (type === "image/png") return pngToRgba(decodePng(bytes));
  if (type === "image/jpeg") {
    const decoded = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 1024 });
    return { width: decoded.width, height: decoded.height, data: decoded.data };
  }
  const gif = new GifReader(bytes);
  const data = new Uint8Array(gif.width * gif.height * 4);
  gif.decodeAndBlitFrameRGBA(0, data);
  return { width: gif.width, height: gif.height, data };
}

function spans(from: number, to: number): { first: number; weights: number[] }[] {
  const scale = from / to;
  const result: { first: number; weights: number[] }[] = [];
  for (let i = 0; i < to; i++) {
    const start = i * scale;
    const end = Math.min(from, start + scale);
    const first = Math.floor(start);
    const weights: number[] = [];
    for (let s = first; s < end; s++) weights.push(Math.min(end, s + 1) - Math.max(start, s));
    result.push({ first, weights });
  }
  return result;
}

/**
 * Downscales by area averaging (each output pixel is the mean of the source
 * pixels it covers, weighted by alpha so transparent pixels do not darken edges).
 */
export function resizeImage(image: RgbaImage, width: number, height: number): RgbaImage {
  const columns = spans(image.width, width);
  const rows = spans(image.height, height);
  const out = new Uint8Array(width * height * 4);
  const src = image.data;
  for (let y = 0; y < height; y++) {
    const row = rows[y];
    for (let x = 0; x < width; x++) {
      const column = columns[x];
      let r = 0, g = 0, b = 0, a = 0, total = 0;
      for (let j = 0; j < row.weights.length; j++) {
        const base = (row.first + j) * image.width;
        for (let i = 0; i < column.weights.length; i++) {
          const weight = row.weights[j] * column.weights[i];
          const p = (base + column.first + i) * 4;
          const alpha = src[p + 3] * weight;
          r += src[p] * alpha;
          g += src[p + 1] * alpha;
          b += src[p + 2] * alpha;
          a += alpha;
          total += weight;
        }
      }
      const o = (y * width + x) * 4;
      if (a > 0) {
        out[o] = Math.round(r / a);
        out[o + 1] = Math.round(g / a);
        out[o + 2] = Math.round(b / a);
      }
      out[o + 3] = Math.round(a / total);
    }
  }
  return { width, height, data: out };
}

/** Turns an image as EXIF orientation `orientation` says it is to be shown. */
export function orientImage(image: RgbaImage, orientation: number): RgbaImage {
  if (orientation <= 1 || orientation > 8) return image;
  const { width: w, height: h, data } = image;
  const swap = orientation >= 5;
  const outW = swap ? h : w;
  const outH = swap ? w : h;
  const out = new Uint8Array(data.length);
  const source: (x: number, y: number) => [number, number] = {
    2: (x: number, y: number): [number, number] => [w - 1 - x, y],
    3: (x: number, y: number): [number, number] => [w - 1 - x, h - 1 - y],
    4: (x: number, y: number): [number, number] => [x, h - 1 - y],
    5: (x: number, y: number): [number, number] => [y, x],
    6: (x: number, y: number): [number, number] => [y, h - 1 - x],
    7: (x: number, y: number): [number, number] => [w - 1 - y, h - 1 - x],
    8: (x: number, y: number): [number, number] => [w - 1 - y, x],
  }[orientation as 2 | 3 | 4 | 5 | 6 | 7 | 8];
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      const [sx, sy] = source(x, y);
      out.set(data.subarray((sy * w + sx) * 4, (sy * w + sx) * 4 + 4), (y * outW + x) * 4);
    }
  }
  return { width: outW, height: outH, data: out };
}

/** A rectangle of an image, in pixels: its top-left corner and its size. */
export interface ImageRect extends ImageSize {
  x: number;
  y: number;
}

/** The pixels of `rect` (which lies within the image) as an image of their own. */
export function cropImage(image: RgbaImage, rect: ImageRect): RgbaImage {
  const out = new Uint8Array(rect.width * rect.height * 4);
  const rowBytes = rect.width * 4;
  for (let y = 0; y < rect.height; y++) {
    const from = ((rect.y + y) * image.width + rect.x) * 4;
    out.set(image.data.subarray(from, from + rowBytes), y * rowBytes);
  }
  return { width: rect.width, height: rect.height, data: out };
}

/** Encodes RGBA as PNG, or as JPEG (quality 85; alpha dropped). */
export function encodeImage(image: RgbaImage, type: "image/png" | "image/jpeg"): Uint8Array {
  if (type === "image/png") {
    return encodePng({ width: image.width, height: image.height, data: image.data, channels: 4, depth: 8 });
  }
  const encoded = jpeg.encode({
    width: image.width,
    height: image.height,
    data: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength),
  }, 85);
  return new Uint8Array(encoded.data);
}

/** `size` scaled down, keeping its proportions, so that its long side is at most `maxSide`. */
export function fittedSize(size: ImageSize, maxSide: number): ImageSize {
  const long = Math.max(size.width, size.height);
  if (long <= maxSide) return size;
  const scale = maxSide / long;
  return {
    width: Math.max(1, Math.min(maxSide, Math.round(size.width * scale))),
    height: Math.max(1, Math.min(maxSide, Math.round(size.height * scale))),
  };
}

/**
 * `image` encoded as `type`, or as JPEG when a PNG would be over the size of a
 * deferred image (`MAX_IMAGE_BYTES`: a photo or noise at 1,000 px can be 4 MB
 * as PNG, under 2 MB as JPEG); the bytes and the type they are in.
 */
export function encodeWithin(
  image: RgbaImage,
  type: "image/png" | "image/jpeg",
): { bytes: Uint8Array; type: "image/png" | "image/jpeg" } {
  const bytes = encodeImage(image, type);
  if (bytes.byteLength <= MAX_IMAGE_BYTES || type === "image/jpeg") return { bytes, type };
  return { bytes: encodeImage(image, "image/jpeg"), type: "image/jpeg" };
}
