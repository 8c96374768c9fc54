// Whether this process may plant files below /etc (root), which the tests of the sandbox's masks of /etc need.

import fsp from "node:fs/promises";

/**
 * Whether a folder can be made below /etc: looked at by making one and removing it at once, so that a run that skips
 * the tests needing it leaves nothing behind.
 */
export async function etcWritable(): Promise<boolean> {
  try {
    await fsp.rm(await fsp.mkdtemp("/etc/toolfence-writable-"), { recursive: true });
    return true;
  } catch {
    return false;
  }
}
