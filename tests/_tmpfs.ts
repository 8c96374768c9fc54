// Whether a tmpfs can be mounted here (root): the tests of a small disk of its own (a full workspace, a temp dir on
// another file system) skip with the reason where it cannot.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** False where a tmpfs can be mounted here, else why not (a test's `skip`). */
export function tmpfsMountable(): string | false {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolfence-tmpfs-probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir], { stdio: "ignore" });
    execFileSync("umount", [dir], { stdio: "ignore" });
    return false;
  } catch {
    return "cannot mount a tmpfs here (needs root)";
  } finally {
    fs.rmdirSync(dir);
  }
}
