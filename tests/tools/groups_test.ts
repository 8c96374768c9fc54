// The built-in groups: on Windows the cmd group is empty and says so (xun announces the missing group), elsewhere it
// has its six tools and says nothing. Windows is stood for by the platform property the group reads.

import { test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { BUILTIN_GROUPS } from "../../tools/groups.ts";

test("the cmd group announces that it is empty on Windows, and only there", { timeout: 60_000 }, () => {
  const lines: string[] = [];
  const write = process.stderr.write;
  const platform = Object.getOwnPropertyDescriptor(process, "platform")!;
  process.stderr.write = ((chunk: string) => lines.push(String(chunk)) > 0) as unknown as typeof write;
  try {
    assert.equal(BUILTIN_GROUPS.cmd().length, 6);
    assert.deepEqual(lines, []);
    Object.defineProperty(process, "platform", { configurable: true, get: () => "win32" });
    assert.deepEqual(BUILTIN_GROUPS.cmd(), []);
  } finally {
    Object.defineProperty(process, "platform", platform);
    process.stderr.write = write;
  }
  assert.equal(lines.length, 1);
  assert.match(lines[0], /cmd group has no tools on Windows/);
});
