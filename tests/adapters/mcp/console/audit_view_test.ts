// The console's audit view reads the log as the log wrote it: never through a link at a log file's name.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readAudit } from "../../../../adapters/mcp/console/_audit_view.ts";
import { AuditLog } from "../../../../policy/audit/audit_log.ts";

describe("readAudit", () => {
  test("never reads through a link at the log's name or its rotation's", { timeout: 60_000 }, async () => {
    const base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-audit-view-")));
    try {
      const line = (text: string) => JSON.stringify({ time: "2026-01-01T00:00:00Z", type: "call", tenant: "a", text });
      // The tenant's own file, where the log keeps its records.
      const own = AuditLog.tenantFile(join(base, "audit.jsonl"), "a");
      await writeFile(own, line("ours") + "\n");
      // A command made the rotation's name a link to a file outside (records of the same tenant elsewhere).
      await writeFile(join(base, "elsewhere.jsonl"), line("outside") + "\n");
      await symlink(join(base, "elsewhere.jsonl"), `${own}.1`);
      const entries = await readAudit(join(base, "audit.jsonl"), "a");
      assert.deepEqual(entries.map((e) => e.text), ["ours"]);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});
