// SHA-256 of files, streamed in chunks so that memory stays bounded.

import { createHash } from "node:crypto";
import { readBufferFor, readFully, type ReadHandle } from "./fs_open.ts";

/** Hex SHA-256 of bytes or text (UTF-8). */
export function sha256Of(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Hex SHA-256 of the whole content of an open file of `size` bytes (as its stat said), read in chunks. */
export async function sha256OfHandle(handle: ReadHandle, size: number): Promise<string> {
  const hash = createHash("sha256");
  const buffer = readBufferFor(size);
  for (let position = 0;;) {
    const n = await readFully(handle, buffer, buffer.length, position);
    if (n === 0) break;
    hash.update(buffer.subarray(0, n));
    position += n;
  }
  return hash.digest("hex");
}

/** Whether `value` looks like a hex SHA-256 (64 hex digits, any case). */
export function isSha256(value: string): boolean {
  return /^[0-9a-fA-F]{64}$/.test(value);
}
