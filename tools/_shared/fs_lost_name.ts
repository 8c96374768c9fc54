// Names this runtime lost: a file name whose bytes are not UTF-8 reaches a
// Deno program decoded with U+FFFD in place of the bad bytes (node:fs under
// Deno too, even as a Buffer), and no call takes the bytes back, so that
// spelling names no file (tests/tools/fs/non_utf8_names_test.ts pins it).

import fsp from "node:fs/promises";

/** Why an entry whose name is not UTF-8 is reported instead of listed. */
export const NOT_UTF8_REASON = "its name is not valid UTF-8, and this runtime can only open files by UTF-8 names";

/**
 * Whether the entry listed as `abs` is one whose name was lost: its name holds
 * U+FFFD and nothing exists under that spelling. (A real name with U+FFFD in it
 * exists, and is kept.)
 */
export async function lostName(abs: string): Promise<boolean> {
  if (!abs.includes("\uFFFD")) return false;
  try {
    await fsp.lstat(abs);
    return false;
  } catch (error) {
    return (error as { code?: string }).code === "ENOENT";
  }
}
