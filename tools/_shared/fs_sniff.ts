// What the first bytes of a file say about it: a byte-order mark, binary
// content (and which kind), and where UTF-8 breaks. Shared by the fs, search
// and patch tools so that they agree on what counts as text.

/** How many leading bytes decide whether a file is binary (git looks at 8,000). */
export const SNIFF_BYTES = 8192;

/** A byte-order mark found at the start of a file. */
export interface Bom {
  /** The encoding the mark announces. */
  encoding: "UTF-8" | "UTF-16LE" | "UTF-16BE" | "UTF-32LE" | "UTF-32BE";
  /** Its length in bytes. */
  length: number;
}

/** The byte-order mark at the start of `bytes`, if any. */
export function detectBom(bytes: Uint8Array): Bom | undefined {
  const [a, b, c, d] = bytes;
  if (a === 0xef && b === 0xbb && c === 0xbf) return { encoding: "UTF-8", length: 3 };
  // UTF-32LE's mark starts with UTF-16LE's, so it is tested first.
  if (a === 0xff && b === 0xfe && c === 0 && d === 0) return { encoding: "UTF-32LE", length: 4 };
  if (a === 0 && b === 0 && c === 0xfe && d === 0xff) return { encoding: "UTF-32BE", length: 4 };
  if (a === 0xff && b === 0xfe) return { encoding: "UTF-16LE", length: 2 };
  if (a === 0xfe && b === 0xff) return { encoding: "UTF-16BE", length: 2 };
  return undefined;
}

const MAGIC: [string, (b: Uint8Array) => boolean][] = [
  ["PNG image", (b) => starts(b, [0x89, 0x50, 0x4e, 0x47])],
  ["JPEG image", (b) => starts(b, [0xff, 0xd8, 0xff])],
  ["GIF image", (b) => ascii(b, 0, "GIF8")],
  ["WebP image", (b) => ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP")],
  ["BMP image", (b) => ascii(b, 0, "BM") && b.length > 14 && b[6] === 0 && b[7] === 0],
  ["ICO image", (b) => starts(b, [0, 0, 1, 0])],
  ["PDF document", (b) => ascii(b, 0, "%PDF-")],
  ["ZIP archive", (b) => starts(b, [0x50, 0x4b, 0x03, 0x04]) || starts(b, [0x50, 0x4b, 0x05, 0x06])],
  ["gzip archive", (b) => starts(b, [0x1f, 0x8b])],
  ["bzip2 archive", (b) => ascii(b, 0, "BZh")],
  ["xz archive", (b) => starts(b, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])],
  ["zstd archive", (b) => starts(b, [0x28, 0xb5, 0x2f, 0xfd])],
  ["7z archive", (b) => starts(b, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])],
  ["tar archive", (b) => ascii(b, 257, "ustar")],
  ["ELF executable", (b) => starts(b, [0x7f, 0x45, 0x4c, 0x46])],
  ["Mach-O executable", (b) => starts(b, [0xcf, 0xfa, 0xed, 0xfe]) || starts(b, [0xfe, 0xed, 0xfa, 0xcf])],
  ["Java class file", (b) => starts(b, [0xca, 0xfe, 0xba, 0xbe])],
  ["WebAssembly module", (b) => starts(b, [0x00, 0x61, 0x73, 0x6d])],
  ["SQLite database", (b) => ascii(b, 0, "SQLite format 3\0")],
  ["Windows executable", (b) => ascii(b, 0, "MZ") && b.includes(0)],
];

function starts(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((v, i) => bytes[i] === v);
}

function ascii(bytes: Uint8Array, at: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

/**
 * The kind of binary data in `head` (the first {@linkcode SNIFF_BYTES} or more
 * of a file), or undefined for text. Binary means a known binary signature or a
 * NUL byte; text with a UTF-16 or UTF-32 byte-order mark is not binary, but
 * the caller decides whether it supports that encoding.
 */
export function binaryKind(head: Uint8Array): string | undefined {
  const bom = detectBom(head);
  if (bom && bom.encoding !== "UTF-8") return undefined;
  for (const [name, test] of MAGIC) if (test(head)) return name;
  return head.subarray(0, SNIFF_BYTES).includes(0) ? "binary data" : undefined;
}

/**
 * The offset of the first byte in `bytes[start, end)` that breaks UTF-8, or -1.
 * With `partialEnd`, a sequence cut off by `end` counts as valid (the rest lies
 * beyond the window).
 */
export function invalidUtf8At(bytes: Uint8Array, start = 0, end = bytes.length, partialEnd = false): number {
  let i = start;
  while (i < end) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i;
    if (i + need >= end) {
      if (!partialEnd) return i;
      for (let k = i + 1; k < end; k++) if ((bytes[k] & 0xc0) !== 0x80) return i;
      return -1;
    }
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if ((c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

/** A short description of where `offset` lies in `bytes`, for messages: the byte value and its line. */
export function describeByteAt(bytes: Uint8Array, offset: number, firstLine = 1): string {
  let line = firstLine;
  for (let i = bytes.indexOf(10); i !== -1 && i < offset; i = bytes.indexOf(10, i + 1)) line++;
  return `byte 0x${bytes[offset].toString(16).padStart(2, "0").toUpperCase()} on line ${line}`;
}
