import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ERROR_CODES, errorCodeInfo, isCataloguedCode } from "../../core/error_codes.ts";
import { ToolError } from "../../core/errors.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...await sources(rel));
    else if (entry.name.endsWith(".ts")) out.push(rel);
  }
  return out;
}

/** Every snake_case literal a thrower uses as a code: `code: "x"`, `code: a ? "x" : "y"`, and `["x", message]` tables. */
function thrownCodes(source: string): string[] {
  const found: string[] = [];
  for (const line of source.split("\n")) {
    if (/^\s*(\*|\/\/)/.test(line)) continue;
    // The expression after `code:` ends at the first comma or brace (a ternary has neither).
    const property = /\bcode:\s*([^,}]*)/.exec(line);
    if (property) {
      for (const m of property[1].matchAll(/"([a-z][a-z0-9]*(?:_[a-z0-9]+)*)"/g)) found.push(m[1]);
    }
    for (const m of line.matchAll(/^\s*[A-Z]+: \["([a-z][a-z0-9]*(?:_[a-z0-9]+)+)",/g)) found.push(m[1]);
  }
  // codedFailure(error, "code", ...) names its code as an argument, on the call's line or the next (command_start_failed
  // and its kin went uncatalogued).
  for (const m of source.matchAll(/\bcodedFailure\(\s*[^,]+,\s*"([a-z][a-z0-9]*(?:_[a-z0-9]+)*)"/g)) found.push(m[1]);
  return found;
}

describe("the error-code catalogue", () => {
  test("every code thrown in core, policy, tools and adapters is in the catalogue", { timeout: 60_000 }, async () => {
    const missing: string[] = [];
    let seen = 0;
    for (const member of ["core", "policy", "tools", "adapters"]) {
      for (const file of await sources(member)) {
        for (const code of thrownCodes(await readFile(path.join(root, file), "utf8"))) {
          seen++;
          if (!isCataloguedCode(code)) missing.push(`${file}: ${code}`);
        }
      }
    }
    assert.ok(seen > 60, `found only ${seen} thrown codes; the scan is broken`);
    assert.deepEqual(missing, [], "add these codes to core/error_codes.ts");
  });

  test("every entry has a meaning and a consistent outcome", { timeout: 60_000 }, () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      assert.match(code, /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
      assert.ok(info.meaning.length > 10, code);
      assert.ok(["semantic", "execution", "policy"].includes(info.kind), code);
      assert.ok(["error", "skipped"].includes(info.status), code);
      // Only a policy refusal did nothing on purpose.
      if (info.status === "skipped") assert.equal(info.kind, "policy", code);
    }
  });

  test(
    "a ToolError takes its defaults from the catalogue, and the thrower may override each",
    { timeout: 60_000 },
    () => {
      const denied = new ToolError("no", { code: "permission_denied" });
      assert.deepEqual([denied.kind, denied.status, denied.recoverable], ["policy", "skipped", false]);
      const args = new ToolError("bad", { code: "invalid_arguments" });
      assert.deepEqual([args.kind, args.status, args.recoverable], ["semantic", "error", true]);
      const overridden = new ToolError("no", { code: "permission_denied", status: "error", recoverable: true });
      assert.deepEqual([overridden.kind, overridden.status, overridden.recoverable], ["policy", "error", true]);
      const own = new ToolError("mine", { code: "my_tool_failed" });
      assert.deepEqual([own.kind, own.status, own.recoverable], ["execution", "error", true]);
      assert.equal(errorCodeInfo("my_tool_failed").kind, "execution");
      assert.equal(errorCodeInfo("__proto__").kind, "execution", "the catalogue is not a prototype lookup");
    },
  );
});
