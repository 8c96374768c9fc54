// Loading a text file whole for editing, and writing it back the way it was:
// the same byte-order mark, line endings and mode.

import { type FileDoor, type FileTarget, ToolError } from "@toolfence/core";
import { binaryFile, fileOpError, notUtf8 } from "../_shared/fs_errors.ts";
import { sha256Of } from "../_shared/fs_hash.ts";
import { openRegularFile } from "../_shared/fs_open.ts";
import { binaryKind, describeByteAt, detectBom, invalidUtf8At } from "../_shared/fs_sniff.ts";

/** Files larger than this are not edited in memory. */
export const MAX_EDIT_BYTES = 64 << 20;

const UTF8_BOM = new Uint8Array([0xef, 0xbb, 0xbf]);
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

/** A text file as loaded for editing. */
export interface TextFile {
  /** The text without the byte-order mark. */
  text: string;
  /** Whether the file starts with a UTF-8 byte-order mark. */
  bom: boolean;
  /** The file's line ending: CRLF when every line break is one, else LF. */
  eol: "\n" | "\r\n";
  /** Whether the file has any CRLF (it may be mixed). */
  hasCrlf: boolean;
  /** Permission bits, kept on write. */
  mode: number;
  /** Hex SHA-256 of the bytes as loaded. */
  sha256: string;
  /** The bytes as loaded, to restore them if a later step fails. */
  bytes: Uint8Array;
}

/**
 * Loads the regular file `real` as UTF-8 text. Throws `binary_file`,
 * `not_utf8`, `unsupported_encoding`, `too_large`, or the open errors.
 */
export async function loadTextFile(files: FileDoor, target: FileTarget, shown: string): Promise<TextFile> {
  const real = target.path;
  const { handle, stat } = await openRegularFile(files, target, shown, "Edit a file, not a directory.");
  let bytes: Uint8Array;
  try {
    if (stat.size > MAX_EDIT_BYTES) {
      throw new ToolError(`${shown} is too large to edit (${stat.size.toLocaleString("en-US")} bytes)`, {
        code: "too_large",
        recoverable: false,
        recoveryHint: `Files up to ${MAX_EDIT_BYTES >> 20} MiB can be edited.`,
        details: { path: real, size: stat.size },
      });
    }
    bytes = new Uint8Array(await handle.readFile());
  } catch (error) {
    throw fileOpError(error, shown, real, "reading");
  } finally {
    await handle.close();
  }
  const bom = detectBom(bytes);
  if (bom && bom.encoding !== "UTF-8") throw notUtf8(shown, real, "byte-order mark", bom.encoding);
  const kind = binaryKind(bytes) ?? (bytes.includes(0) ? "binary data" : undefined);
  if (kind) throw binaryFile(shown, real, bytes.length, kind, "Only text files can be edited.");
  const start = bom ? bom.length : 0;
  const bad = invalidUtf8At(bytes, start);
  if (bad !== -1) throw notUtf8(shown, real, describeByteAt(bytes, bad));
  const text = decoder.decode(bytes.subarray(start));
  const crlf = text.split("\r\n").length - 1;
  const lf = text.split("\n").length - 1;
  return {
    text,
    bom: bom !== undefined,
    eol: crlf > 0 && crlf === lf ? "\r\n" : "\n",
    hasCrlf: crlf > 0,
    mode: stat.mode & 0o7777,
    sha256: sha256Of(bytes),
    bytes,
  };
}

/** The bytes to write for `text`, with the byte-order mark when the file had one. */
export function encodeText(text: string, bom: boolean): Uint8Array {
  const body = encoder.encode(text);
  if (!bom) return body;
  const out = new Uint8Array(body.length + 3);
  out.set(UTF8_BOM);
  out.set(body, 3);
  return out;
}
