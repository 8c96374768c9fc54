// What a client needs to recover after a timeout, over a real MCP client on
// stdio (a server process) and on Streamable HTTP: the effect fields in
// `_meta`, and the late result of a tool that settled after it was reported,
// as a log message and as `notifications/toolfence/late_result`.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  type CallToolResult,
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import * as v from "valibot";
import { tool } from "../../core/tool.ts";
import { DEFAULT_LATE_RESULTS_MAX_BYTES } from "../../core/mod.ts";
import { ToolBox } from "../../toolbox.ts";
import { LATE_RESULT_NOTIFICATION, LATE_RESULTS_URI, serveHttp } from "../../adapters/mcp/mod.ts";
import { lateToolBox } from "./_late_server.ts";
import { DENO_PROCESS_ONLY } from "../_runtime.ts";

const HERE = dirname(fileURLToPath(import.meta.url));

interface Heard {
  logs: Record<string, unknown>[];
  late: Record<string, unknown>[];
  // notifications/resources/list_changed heard so far.
  listChanged: number;
}

function listen(client: Client): Heard {
  const heard: Heard = { logs: [], late: [], listChanged: 0 };
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void heard.listChanged++);
  client.setNotificationHandler(
    LoggingMessageNotificationSchema,
    (n) => void heard.logs.push(n.params.data as Record<string, unknown>),
  );
  client.fallbackNotificationHandler = (n) => {
    if (n.method === LATE_RESULT_NOTIFICATION) heard.late.push(n.params as Record<string, unknown>);
    return Promise.resolve();
  };
  return heard;
}

function meta(result: CallToolResult): Record<string, unknown> {
  return (result._meta as Record<string, Record<string, unknown>>)["toolfence/result"];
}

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((done) => setTimeout(done, 20));
}

async function checkRecovery(client: Client, heard: Heard, workspace: string): Promise<void> {
  // Counted before the call: on a loaded machine the late result's notifications can be read in the same chunk as the
  // timed-out answer, before the code after the await runs.
  const listChangedBefore = heard.listChanged;
  const result = await client.callTool({ name: "slow_write", arguments: {} }) as CallToolResult;
  assert.equal(result.isError, true);
  const reported = meta(result);
  assert.equal(reported.status, "timed_out");
  assert.equal(reported.effectState, "unknown");
  assert.equal(reported.reconciliationRequired, true);
  assert.deepEqual(reported.declaredEffects, ["writes_files"]);
  assert.equal(reported.retryDisposition, "stopped");
  assert.equal(reported.workerStillRunning, true);
  const attemptId = reported.attemptId as { callId: string; attempt: number };
  assert.equal(attemptId.attempt, 1);
  // The tool settles at 400 ms, having written its file: the client hears of it twice.
  await until(() => heard.late.length > 0 && heard.logs.some((l) => l.event === "late_result"), 30_000);
  assert.equal(heard.late.length, 1, JSON.stringify(heard));
  const late = heard.late[0];
  assert.deepEqual(late.attemptId, attemptId);
  assert.equal(late.callId, attemptId.callId);
  assert.equal(late.lateResult, true);
  assert.equal(late.reportedStatus, "timed_out");
  assert.equal(late.status, "success");
  assert.deepEqual(late.output, { wrote: "late.txt" });
  assert.deepEqual([late.effectState, late.reconciliationRequired], ["applied", false]);
  const logged = heard.logs.find((l) => l.event === "late_result")!;
  assert.deepEqual(logged, { event: "late_result", callId: attemptId.callId, lateResult: late });
  assert.equal(await readFile(join(workspace, "late.txt"), "utf8"), "written late\n");
  // A client that missed the notifications reads them from the session's late-results resource, which the first
  // late result adds to resources/list: the server announces listChanged, so it says so.
  await until(() => heard.listChanged > listChangedBefore, 30_000);
  assert.equal(heard.listChanged, listChangedBefore + 1);
  const listed = (await client.listResources()).resources.map((resource) => resource.uri);
  assert.ok(listed.includes(LATE_RESULTS_URI), JSON.stringify(listed));
  const [content] = (await client.readResource({ uri: LATE_RESULTS_URI })).contents as { text: string }[];
  assert.deepEqual(JSON.parse(content.text), { lateResults: [late] });
  // A plain success says as much.
  const echoed = meta(await client.callTool({ name: "echo", arguments: { text: "hi" } }) as CallToolResult);
  assert.deepEqual([echoed.effectState, echoed.reconciliationRequired, echoed.declaredEffects], [
    "no_effect_declared",
    false,
    null,
  ]);
}

let workspace: string;
before(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), "toolfence-recovery-")));
});
after(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe("recovery fields and late results over MCP", { timeout: 60_000 }, () => {
  test("stdio", { timeout: 60_000, skip: DENO_PROCESS_ONLY }, async () => {
    await rm(join(workspace, "late.txt"), { force: true });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["run", "-A", join(HERE, "_late_server.ts"), workspace],
      stderr: "pipe",
    });
    const client = new Client({ name: "recovery-test", version: "1" });
    const heard = listen(client);
    await client.connect(transport);
    try {
      await checkRecovery(client, heard, workspace);
    } finally {
      await client.close();
    }
  });

  test("Streamable HTTP (the late result on the session's GET stream)", { timeout: 60_000 }, async () => {
    await rm(join(workspace, "late.txt"), { force: true });
    const server = await serveHttp(lateToolBox(workspace), { port: 0, workspace, allowNoAuth: true, sandbox: "off" });
    const client = new Client({ name: "recovery-test", version: "1" });
    const heard = listen(client);
    try {
      await client.connect(new StreamableHTTPClientTransport(server.url));
      await checkRecovery(client, heard, workspace);
    } finally {
      await client.close();
      await server.shutdown();
    }
  });
});

// A client that makes call after call that times out and settles late must not grow the server without bound: the
// session keeps its late results within a byte budget (and a count), drops the oldest, and says so.
describe("late results are bounded per session", { timeout: 60_000 }, () => {
  test("over Streamable HTTP: the oldest dropped, the drop in the resource and a log notice", {
    timeout: 60_000,
  }, async () => {
    const size = Math.ceil(DEFAULT_LATE_RESULTS_MAX_BYTES / 3);
    const box = new ToolBox({ graceMs: 5 }).register(tool({
      name: "big_late",
      description: "Returns a large text after its timeout.",
      input: v.object({ n: v.number() }),
      readOnly: true,
      timeoutMs: 30,
      run: async ({ n }) => {
        await new Promise((done) => setTimeout(done, 120));
        return `${n}:${"x".repeat(size)}`;
      },
    }));
    const server = await serveHttp(box, { port: 0, workspace, allowNoAuth: true, sandbox: "off" });
    const client = new Client({ name: "late-bound-test", version: "1" });
    const heard = listen(client);
    try {
      await client.connect(new StreamableHTTPClientTransport(server.url));
      const calls = 6;
      for (let n = 0; n < calls; n++) {
        const result = await client.callTool({ name: "big_late", arguments: { n } }) as CallToolResult;
        assert.equal(meta(result).status, "timed_out");
      }
      await until(() => heard.late.length === calls, 20_000);
      assert.equal(heard.late.length, calls);
      const read = await client.readResource({ uri: LATE_RESULTS_URI });
      const body = JSON.parse((read.contents[0] as { text: string }).text) as {
        lateResults: { callId: string; outputOmitted?: number }[];
        dropped?: number;
      };
      // Two of them fit the budget (a third would pass it): the four oldest were dropped, the newest kept.
      assert.equal(body.lateResults.length, 2, JSON.stringify(body).slice(0, 500));
      assert.equal(body.dropped, calls - 2);
      assert.deepEqual(body.lateResults.map((late) => late.callId), heard.late.slice(-2).map((late) => late.callId));
      await until(() => heard.logs.some((l) => l.event === "late_results_dropped" && l.dropped === calls - 2), 30_000);
      const drops = heard.logs.filter((l) => l.event === "late_results_dropped");
      assert.equal(drops.at(-1)!.dropped, calls - 2);
      assert.equal(drops.reduce((sum, l) => sum + (l.newlyDropped as number), 0), calls - 2);
    } finally {
      await client.close();
      await server.shutdown();
    }
  });
});
