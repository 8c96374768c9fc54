// SHA-256 of files, streamed in chunks so that memory stays bounded.

import { createHash } from "node:crypto";
import { readFully, type ReadHandle } from "./fs_open.ts";

const CHUNK = 1 << 20;

/** Hex SHA-256 of bytes or text (UTF-8). */
export function sha256Of(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Hex SHA-256 of the whole content of an open file, read in 1 MiB chunks. */
export async function sha256OfHandle(handle: ReadHandle): Promise<string> {
  const hash = createHash("sha256");
  const buffer = new Uint8Array(CHUNK);
  for (let position = 0;;) {
    const n = await readFully(handle, buffer, CHUNK, position);
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
