import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { isSettled, RACY_MS } from "../../core/settled_stat.ts";

describe("isSettled", () => {
  test("a status change RACY_MS or more before the stat is settled; a later one is not", { timeout: 60_000 }, () => {
    const at = 1_800_000_000_000;
    assert.equal(isSettled(at - RACY_MS, at), true);
    assert.equal(isSettled(at - RACY_MS - 1, at), true);
    assert.equal(isSettled(at - RACY_MS + 1, at), false);
    assert.equal(isSettled(at, at), false);
    // A time ahead of the clock (a clock stepped back) is never settled.
    assert.equal(isSettled(at + 60_000, at), false);
  });

  test("a file just written is not settled; its stat can be kept once the window has passed", {
    timeout: 60_000,
  }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolfence-settled-"));
    try {
      const file = path.join(dir, "f.txt");
      fs.writeFileSync(file, "x\n");
      assert.equal(isSettled(fs.statSync(file).ctimeMs, Date.now()), false);
      await new Promise((resolve) => setTimeout(resolve, RACY_MS + 50));
      const statAt = Date.now();
      assert.equal(isSettled(fs.statSync(file).ctimeMs, statAt), true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
