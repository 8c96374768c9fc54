/**
 * A fleet of `serve --http` replicas on one PostgreSQL (a private cluster,
 * started and stopped here), behind a sticky load balancer: CLIENTS
 * concurrent clients (each its own tenant) making CALLS calls each (a
 * `write_file` of a fresh content, then a `read_file` of it, checked), in
 * three runs: one replica without a store, one replica on the store (the
 * store's cost per call), three replicas on the store with one of them killed
 * (SIGKILL) a third of the way through. Counted after the killed run: wrong
 * answers (must be 0), calls answered without their audit record in the
 * store (lost audit records, must be 0), and calls interrupted by the kill
 * (answered `replica_lost` with `reconciliationRequired`, each with its audit
 * record): every call is answered one way or the other. A call whose client
 * got no answer (its stream broke before its first event, so there was
 * nothing to resume) is read by its request id (`toolfence://calls/<id>`)
 * from the replicas left: "read by id" when its outcome was there, "never
 * ran" when no call of that id was recorded (its tool never started).
 *
 * `deno run -A bench/fleet.ts [CLIENTS] [CALLS]`; default 64 x 200 (2 x 4 at
 * the tiny size). Without PostgreSQL (see tests/_postgres.ts) the store is a
 * SQLite file, and the rows say so.
 *
 * @module
 */

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { openStore } from "../adapters/mcp/open_store.ts";
import { callUri } from "../adapters/mcp/server.ts";
import { postgresMissing, startPostgres } from "../tests/_postgres.ts";
import { type Replica, replicaArgs, startBalancer, startReplica, stopReplica } from "../tests/adapters/_fleet.ts";
import { writeTokens } from "../tests/adapters/_http_harness.ts";
import { record, sized } from "./_report.ts";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const CLIENTS = Number(args[0] ?? sized(64, 2));
const CALLS = Number(args[1] ?? sized(200, 4));

interface Outcome {
  seconds: number;
  answered: number;
  wrong: string[];
  interrupted: number;
  /** Calls whose client got no answer: its stream broke before the first event, so there was nothing to resume. */
  unanswered: number;
  /** Of those, the ones whose outcome the client then read by request id. */
  readById: number;
  /** Of those, the ones no replica had recorded: their tool never ran. */
  neverRan: number;
  sessions: Set<string>;
}

const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("");
const lost = (result: unknown) =>
  (result as { _meta?: Record<string, { errorCode?: string; reconciliationRequired?: boolean }> })._meta?.[
    "toolfence/result"
  ];

/** The outcome of a call read by its request id, once it has ended; "never ran" when none was recorded. */
async function outcomeById(client: Client, requestId: number): Promise<CallToolResult | "never ran" | undefined> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      const [content] = (await client.readResource({ uri: callUri(requestId) })).contents as { text: string }[];
      const read = JSON.parse(content.text) as { state: string; answer: { result?: CallToolResult } };
      if (read.state !== "running") return read.answer.result;
    } catch (error) {
      if (/never ran/.test(String(error))) return "never ran";
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return undefined;
}

async function load(url: URL, killAfter?: { calls: number; kill: () => Promise<void> }): Promise<Outcome> {
  const outcome: Outcome = {
    seconds: 0,
    answered: 0,
    wrong: [],
    interrupted: 0,
    unanswered: 0,
    readById: 0,
    neverRan: 0,
    sessions: new Set(),
  };
  let done = 0;
  let killing: Promise<void> | undefined;
  const clients = await Promise.all(Array.from({ length: CLIENTS }, async (_, i) => {
    const client = new Client({ name: `fleet-${i}`, version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { authorization: `Bearer token-${i}-0123456789abcdef` } },
        reconnectionOptions: {
          maxRetries: 10,
          initialReconnectionDelay: 500,
          maxReconnectionDelay: 2_000,
          reconnectionDelayGrowFactor: 1.5,
        },
      }),
    );
    outcome.sessions.add((client.transport as unknown as { sessionId: string }).sessionId);
    return client;
  }));
  const call = async (client: Client, name: string, args: Record<string, unknown>) => {
    // The id the SDK gives this request (its own counter; each client makes one call at a time).
    const requestId = (client as unknown as { _requestMessageId: number })._requestMessageId;
    try {
      return await client.callTool({ name, arguments: args }, undefined, { timeout: 45_000 });
    } catch {
      outcome.unanswered++;
      const answer = await outcomeById(client, requestId);
      if (answer === "never ran") outcome.neverRan++;
      else if (answer) outcome.readById++;
      return answer === "never ran" ? undefined : answer;
    }
  };
  const started = performance.now();
  await Promise.all(clients.map(async (client, i) => {
    for (let j = 0; j < CALLS; j += 2) {
      const content = `client ${i} call ${j} ${crypto.randomUUID()}`;
      const written = await call(client, "write_file", { path: `f${j}.txt`, content });
      if (!written) continue;
      outcome.answered++;
      if (killAfter && ++done === killAfter.calls) killing = killAfter.kill();
      if (lost(written)?.errorCode === "replica_lost") {
        outcome.interrupted++;
        if (!lost(written)?.reconciliationRequired) outcome.wrong.push(`${i}/${j}: lost without reconciliation`);
        continue;
      }
      if (written.isError) {
        outcome.wrong.push(`${i}/${j}: write failed: ${textOf(written).slice(0, 200)}`);
        continue;
      }
      const read = await call(client, "read_file", { path: `f${j}.txt` });
      if (!read) continue;
      outcome.answered++;
      if (killAfter && ++done === killAfter.calls) killing = killAfter.kill();
      if (lost(read)?.errorCode === "replica_lost") {
        outcome.interrupted++;
        continue;
      }
      if (!textOf(read).includes(content)) outcome.wrong.push(`${i}/${j}: read ${textOf(read).slice(0, 200)}`);
    }
  }));
  outcome.seconds = (performance.now() - started) / 1000;
  await killing;
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  return outcome;
}

async function fleet(dir: string, store: string | undefined, count: number, kill: boolean) {
  const args = replicaArgs(dir, store, "--groups", "fs", "--auto-confirm", "--calls-per-minute", "1000000");
  const replicas: Replica[] = await Promise.all(Array.from({ length: count }, () => startReplica(args)));
  const balancer = await startBalancer(replicas);
  try {
    const victim = replicas[0];
    return await load(
      balancer.url,
      kill
        ? {
          calls: Math.floor((CLIENTS * CALLS) / 3),
          kill: async () => {
            balancer.remove(victim);
            await stopReplica(victim, "SIGKILL");
          },
        }
        : undefined,
    );
  } finally {
    await balancer.close();
    await Promise.all(replicas.map((replica) => stopReplica(replica)));
  }
}

const missing = postgresMissing();
if (missing) console.log(`PostgreSQL is missing (${missing}): the store is a SQLite file`);
const dir = mkdtempSync(join(tmpdir(), "toolfence-fleet-bench-"));
mkdirSync(join(dir, "tenants"));
mkdirSync(join(dir, "tmp"));
await writeTokens(
  join(dir, "tokens.json"),
  Array.from({ length: CLIENTS }, (_, i) => ({ token: `token-${i}-0123456789abcdef`, tenant: `tenant-${i}` })),
);
const cluster = missing ? undefined : await startPostgres();
const address = cluster?.url ?? `sqlite:${join(dir, "store.db")}`;
const kind = cluster ? "PostgreSQL" : "SQLite";
try {
  const alone = await fleet(dir, undefined, 1, false);
  const one = await fleet(dir, address, 1, false);
  const auditBefore = await (async () => {
    const store = await openStore(address, { poolSize: 1 });
    try {
      return (await store.audit()).length;
    } finally {
      await store.close();
    }
  })();
  const three = await fleet(dir, address, 3, true);
  const store = await openStore(address, { poolSize: 1 });
  const audit = (await store.audit()).slice(auditBefore).map((item) => item.record);
  const running = (await store.runningCalls()).length;
  await store.close();
  const calls = audit.filter((r) => r.type === "call" && three.sessions.has(String(r.mcpSession)));
  const replicaLost = calls.filter((r) => r.errorCode === "replica_lost").length;
  const completed = calls.length - replicaLost;
  // Every answer the clients got that was not an interruption has its audit record.
  const lostAudit = Math.max(0, three.answered - three.interrupted - completed);
  const rate = (o: Outcome) => o.answered / o.seconds;
  const rows = [
    ["1 replica, no store", alone],
    [`1 replica, ${kind} store`, one],
    [`3 replicas, ${kind} store, 1 killed`, three],
  ] as const;
  for (const [name, o] of rows) {
    console.log(
      `${name}: ${o.answered} calls in ${o.seconds.toFixed(1)} s, ${rate(o).toFixed(0)} calls/s, ` +
        `${o.wrong.length} wrong, ${o.interrupted} interrupted, ${o.unanswered} unanswered ` +
        `(${o.readById} then read by id, ${o.neverRan} never ran)`,
    );
  }
  const storeCostMs = 1000 / rate(one) - 1000 / rate(alone);
  console.log(`store cost per call: ${storeCostMs.toFixed(2)} ms of wall time (at ${CLIENTS} clients)`);
  console.log(
    `killed run: ${three.wrong.length} wrong, ${three.interrupted} interrupted (${replicaLost} replica_lost records), ` +
      `${lostAudit} answered calls without an audit record, ${running} calls left running in the store`,
  );
  for (const wrong of three.wrong.slice(0, 5)) console.log(`  wrong: ${wrong}`);
  record([
    {
      group: `fleet, ${CLIENTS} clients x ${CALLS} calls`,
      name: `1 replica on ${kind}`,
      value: rate(one),
      unit: "calls/s",
      peer: "1 replica, no store",
      ratio: rate(one) / rate(alone),
    },
    {
      group: `fleet, ${CLIENTS} clients x ${CALLS} calls`,
      name: `3 replicas on ${kind}, 1 killed`,
      value: rate(three),
      unit: "calls/s",
      peer: `1 replica on ${kind}`,
      ratio: rate(three) / rate(one),
    },
  ]);
  const unaccounted = three.unanswered - three.readById - three.neverRan;
  const failed = [
    three.wrong.length > 0 && `${three.wrong.length} wrong answers`,
    lostAudit > 0 && `${lostAudit} answered calls without an audit record`,
    running > 0 && `${running} calls left running in the store`,
    replicaLost < three.interrupted &&
    `${three.interrupted - replicaLost} interrupted calls without a replica_lost record`,
    unaccounted > 0 && `${unaccounted} unanswered calls whose outcome could not be read by id`,
  ].filter(Boolean);
  if (failed.length > 0) {
    console.error(`fleet: the killed run failed: ${failed.join("; ")}`);
    process.exitCode = 1;
  }
} finally {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
}
