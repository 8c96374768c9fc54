/**
 * Run by fence_test.ts under `deno run` with narrow flags (and, bundled, under
 * Node's permission model): performs the policy operations given as JSON in
 * the last argument and prints one JSON result per operation, so the test can
 * see what the real fence allowed.
 *
 * @module
 */
import process from "node:process";
import { ToolError } from "../../core/errors.ts";
import { atomicWrite } from "../../internal/atomic_write.ts";
import { runtimeFence } from "../../policy/fence.ts";
import { type FencePermission, requireFence, requireGrants } from "../../core/fence.ts";
import type { ToolNeeds } from "../../core/tool.ts";
import { autoHost } from "../../policy/hosts.ts";
import { Policy, type WriteAction } from "../../policy/policy.ts";
import { sandboxArgv, type SandboxMode } from "../../policy/sandbox.ts";
import { PolicyState } from "../../policy/state.ts";
import { Workspace } from "../../policy/workspace.ts";

type Op =
  | { op: "read"; path: string }
  | { op: "write"; path: string; action: WriteAction; content?: string }
  | { op: "tempWrite"; name: string }
  | { op: "query"; permission: FencePermission; target?: string }
  | { op: "require"; permission: FencePermission; target?: string }
  | { op: "closedEntirely"; permission: FencePermission; probes?: string[] }
  | { op: "sandbox"; mode: SandboxMode }
  | { op: "needs"; needs: ToolNeeds };

const { workdir, tempParent, ops } = JSON.parse(process.argv.at(-1)!) as {
  workdir: string;
  tempParent: string;
  ops: Op[];
};
const workspace = new Workspace(workdir, { tempParent });
const policy = new Policy({ workspace, state: new PolicyState({ commandAllowlist: [] }), asker: autoHost() });

async function perform(op: Op): Promise<unknown> {
  switch (op.op) {
    case "read":
      return await policy.resolveForRead(op.path);
    case "write": {
      const target = await policy.resolveForWrite(op.path, op.action);
      if (op.content !== undefined) await atomicWrite(target, op.content);
      return target;
    }
    case "tempWrite": {
      const target = await policy.resolveForWrite(`${await workspace.tempDir()}/${op.name}`, "create");
      await atomicWrite(target, "temp");
      return target;
    }
    case "query":
      return runtimeFence.query(op.permission, op.target);
    case "require":
      requireFence(runtimeFence, op.permission, op.target);
      return "allowed";
    case "closedEntirely":
      return runtimeFence.closedEntirely(op.permission, op.probes);
    case "sandbox":
      return await sandboxArgv(["true"], { workdir, writable: [workdir], mode: op.mode });
    case "needs":
      requireGrants(runtimeFence, "probe", op.needs, { workdir: workspace.workdir, tempParent: workspace.tempParent });
      return "granted";
  }
}

const results = [];
for (const op of ops) {
  try {
    results.push({ ok: true, value: await perform(op) });
  } catch (error) {
    results.push(
      error instanceof ToolError
        ? { ok: false, code: error.code, kind: error.kind, message: error.message, details: error.details }
        : { ok: false, code: "thrown", message: String(error) },
    );
  }
}
await workspace.dispose().catch(() => {});
console.log(JSON.stringify(results));
