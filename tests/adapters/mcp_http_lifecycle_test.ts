// Limits and lifecycle of the HTTP server: what a session owns ends with it
// (DELETE, idle expiry, shutdown), per-token and per-session limits answer
// 429 with a reason, stateless mode, the node:http path, and the CLI.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { connect as tcpConnect } from "node:net";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import * as v from "valibot";
import { connect, INIT, raw, startServer, textOf } from "./_http_harness.ts";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import { serveHttp } from "../../adapters/mcp/http.ts";
import { exited } from "../_exited.ts";
import { IS_DENO } from "../_runtime.ts";
import { markerSeconds, pidsWithArgs } from "../tools/cmd/_helpers.ts";

const TOKEN = "lifecycle-token-0123456789abcdef";
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((done) => setTimeout(done, 25));
  }
}

/** Starts a job and makes the session temp dir; returns the job's pid. */
async function ownSomething(client: Client): Promise<number> {
  const temp = await client.callTool({ name: "temp_dir", arguments: {} });
  assert.equal(temp.isError, undefined, textOf(temp));
  // The tools give no process id (a host's pid tells one tenant of the others' processes): found by its marker.
  const mark = markerSeconds();
  const job = await client.callTool({ name: "bash_background", arguments: { command: `sleep ${mark}` } });
  assert.equal(job.isError, undefined, textOf(job));
  let pids: number[] = [];
  await until(async () => (pids = await pidsWithArgs("sleep", mark)).length > 0);
  const pid = pids[0];
  assert.ok(pid > 0 && alive(pid), `a running job: ${textOf(job)}`);
  return pid;
}

describe("what a session owns ends with it", () => {
  test("DELETE kills its jobs and removes its temp dir", { timeout: 60_000 }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }]);
    try {
      const client = await connect(h.server.url, TOKEN);
      const pid = await ownSomething(client);
      assert.equal((await readdir(join(h.dir, "tmp"))).length, 1);
      await (client.transport as unknown as { terminateSession(): Promise<void> }).terminateSession();
      await until(() => !alive(pid));
      await until(async () => (await readdir(join(h.dir, "tmp"))).length === 0);
      assert.equal(h.server.sessionCount(), 0);
      await client.close();
    } finally {
      await h.close();
    }
  });

  test("an idle session expires, with its jobs", { timeout: 60_000 }, async () => {
    // Idle for 3 s: long enough for a loaded machine to find the job's process by its marker first (with 300 ms, a
    // CI run under Node 24 saw the session, and its job, end before the search found it).
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { idleTimeoutMs: 3_000 });
    try {
      const client = await connect(h.server.url, TOKEN);
      const pid = await ownSomething(client);
      await until(() => !alive(pid), 20_000);
      await until(async () => (await readdir(join(h.dir, "tmp"))).length === 0);
      await assert.rejects(client.listTools(), /404|not found/i);
      await client.close();
    } finally {
      await h.close();
    }
  });

  test("shutdown lets a running call finish within the deadline, cancels the rest, ends every session", {
    timeout: 60_000,
  }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { drainMs: 2000 });
    const client = await connect(h.server.url, TOKEN);
    const pid = await ownSomething(client);
    // Each outcome is taken at once (a rejection is never left unhandled while the test awaits something else).
    const quick = client.callTool({ name: "sleep", arguments: { seconds: 1 } }).then((r) => r, (e: unknown) => e);
    const slow = client.callTool({ name: "sleep", arguments: { seconds: 30 } }).then((r) => r, (e: unknown) => e);
    // Both calls must have reached the server before it stops taking new ones: a loaded machine (Node 24 beside
    // the suite's other files) took more than 50 ms, and the quick call was then refused with 503.
    await new Promise((done) => setTimeout(done, 400));
    const started = Date.now();
    const stopping = h.server.shutdown("test shutdown");
    const draining = await raw(new URL("/healthz", h.server.url), { method: "GET" }).catch(() => undefined);
    if (draining) assert.equal(draining.status, 503);
    const finished = await quick;
    assert.equal((finished as { isError?: boolean }).isError, undefined, String(finished));
    const cancelled = await slow;
    assert.ok(cancelled instanceof Error || (cancelled as { isError?: boolean }).isError, String(cancelled));
    await stopping;
    assert.ok(Date.now() - started < 8000);
    await until(() => !alive(pid));
    assert.deepEqual(await readdir(join(h.dir, "tmp")), []);
    await client.close().catch(() => {});
    await rm(h.dir, { recursive: true, force: true });
  });
});

describe("limits", () => {
  test("calls per minute per token answer 429 with Retry-After", { timeout: 60_000 }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { callsPerMinute: 3 });
    try {
      const client = await connect(h.server.url, TOKEN);
      for (let i = 0; i < 3; i++) await client.callTool({ name: "datetime", arguments: {} });
      await assert.rejects(client.callTool({ name: "datetime", arguments: {} }), /429|Too many calls/);
      // A second session of the same token shares the budget.
      const second = await connect(h.server.url, TOKEN);
      await assert.rejects(second.callTool({ name: "datetime", arguments: {} }), /429|Too many calls/);
      await client.close();
      await second.close();
    } finally {
      await h.close();
    }
  });

  test("calls in flight per session are capped", { timeout: 60_000 }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { maxConcurrentCalls: 2 });
    try {
      const client = await connect(h.server.url, TOKEN);
      let slowEnded = false;
      const slow = Promise.all([1, 2].map(() => client.callTool({ name: "sleep", arguments: { seconds: 3 } })))
        .finally(() => slowEnded = true);
      // Waits on the server's state, not on a time: until the two slow calls hold both slots, a third call may still
      // get one (under load they reach the server late); once they do, it must be refused, before they end.
      let refused: unknown;
      while (refused === undefined && !slowEnded) {
        await client.callTool({ name: "datetime", arguments: {} }).catch((error) => refused = error);
        if (refused === undefined) await new Promise((done) => setTimeout(done, 50));
      }
      assert.match(String(refused), /429|in flight/, "a third call was never refused while two were in flight");
      for (const call of await slow) assert.equal(call.isError, undefined, textOf(call));
      // The slots come back once the calls have answered.
      assert.equal((await client.callTool({ name: "datetime", arguments: {} })).isError, undefined);
      await client.close();
    } finally {
      await h.close();
    }
  });

  test("sessions per tenant are capped", { timeout: 60_000 }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { maxSessionsPerTenant: 2 });
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      assert.equal((await raw(h.server.url, { body: INIT, headers: auth })).status, 200);
      assert.equal((await raw(h.server.url, { body: INIT, headers: auth })).status, 200);
      const third = await raw(h.server.url, { body: INIT, headers: auth });
      assert.equal(third.status, 429);
      assert.match(third.json().error!.message, /Too many sessions/);
    } finally {
      await h.close();
    }
  });

  test("an initialize a session would keep is bounded in size", { timeout: 60_000 }, async () => {
    // Before: an initialize of 50 MiB (within the body limit) opened a session that held its 50 MiB as long as it
    // lived, 32 sessions a tenant.
    const h = await startServer([{ token: TOKEN, tenant: "t" }]);
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      const padded = JSON.parse(INIT);
      padded.id = 31;
      padded.params.capabilities = { experimental: { pad: { text: "x".repeat(300 * 1024) } } };
      const refused = await raw(h.server.url, { body: JSON.stringify(padded), headers: auth });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.json().id, 31);
      assert.equal(refused.json().error!.code, -32602);
      assert.match(refused.json().error!.message, /over 262144/);
      assert.equal(h.server.sessionCount(), 0, "no session opened");
      assert.equal((await raw(h.server.url, { body: INIT, headers: auth })).status, 200);
      assert.equal(h.server.sessionCount(), 1);
    } finally {
      await h.close();
    }
  });

  test("sessions per tenant are capped when the initializes come at once", { timeout: 60_000 }, async () => {
    // Before: each of the initializes sent together counted the sessions open before any of them had opened, so
    // all opened (45 at once against a cap of 32).
    const cap = 3;
    const h = await startServer([{ token: TOKEN, tenant: "t" }, { token: `${TOKEN}-other`, tenant: "u" }], {
      maxSessionsPerTenant: cap,
    });
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      for (let round = 0; round < 2; round++) {
        const statuses = await Promise.all(
          Array.from({ length: 12 }, () => raw(h.server.url, { body: INIT, headers: auth }).then((a) => a.status)),
        );
        assert.equal(statuses.filter((s) => s === 200).length, round === 0 ? cap : 0, String(statuses));
        assert.equal(statuses.filter((s) => s === 429).length, round === 0 ? 12 - cap : 12, String(statuses));
        assert.equal(h.server.sessionCount(), cap);
      }
      // Another tenant's cap is its own.
      const other = { authorization: `Bearer ${TOKEN}-other` };
      assert.equal((await raw(h.server.url, { body: INIT, headers: other })).status, 200);
    } finally {
      await h.close();
    }
  });
});

describe("limits of a stateless server", () => {
  test("a tenant's requests in flight are capped as its sessions' calls would be", { timeout: 60_000 }, async () => {
    // Before: each request was a session of its own, which neither cap saw; 40 calls of one tenant ran at once on a
    // server whose tenants could hold 32 sessions of one call each.
    const h = await startServer([{ token: TOKEN, tenant: "t" }, { token: `${TOKEN}-other`, tenant: "u" }], {
      stateless: true,
      maxSessionsPerTenant: 2,
      maxConcurrentCalls: 1,
    });
    const call = (token: string, id: number, seconds: number) =>
      raw(h.server.url, {
        body: JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "sleep", arguments: { seconds } },
        }),
        headers: { authorization: `Bearer ${token}`, "mcp-protocol-version": "2025-06-18" },
      });
    try {
      const slow = [1, 2, 3, 4, 5, 6].map((id) => call(TOKEN, id, 2));
      // Another tenant's requests are its own.
      const other = await call(`${TOKEN}-other`, 7, 0);
      assert.equal(other.status, 200, other.text);
      const statuses = (await Promise.all(slow)).map((answer) => answer.status);
      assert.equal(statuses.filter((status) => status === 200).length, 2, String(statuses));
      assert.equal(statuses.filter((status) => status === 429).length, 4, String(statuses));
      const refused = (await Promise.all(slow)).find((answer) => answer.status === 429)!;
      assert.match(refused.json().error!.message, /Too many requests in flight/);
      // The slots come back once the calls have answered (and their sessions have ended, just after).
      let again = await call(TOKEN, 8, 0);
      for (let tries = 0; again.status === 429 && tries < 50; tries++) {
        await new Promise((done) => setTimeout(done, 100));
        again = await call(TOKEN, 9 + tries, 0);
      }
      assert.equal(again.status, 200, again.text);
    } finally {
      await h.close();
    }
  });
});

describe("transports", () => {
  test("stateless mode answers each request with a fresh server and refuses GET", { timeout: 60_000 }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { stateless: true });
    try {
      const client = await connect(h.server.url, TOKEN);
      await client.callTool({ name: "write_file", arguments: { path: "s.txt", content: "stateless" } });
      assert.match(textOf(await client.callTool({ name: "read_file", arguments: { path: "s.txt" } })), /stateless/);
      const get = await raw(h.server.url, { method: "GET", headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(get.status, 405);
      await client.close();
      await until(async () => (await readdir(join(h.dir, "tmp"))).length === 0);
    } finally {
      await h.close();
    }
  });

  test("a stateless server's question is refused for what it is, not for a client that cannot ask", {
    timeout: 60_000,
  }, async () => {
    // The client declares elicitation; the request's fresh server never saw its initialize. The model read "the MCP
    // client cannot ask its user (it does not support elicitation)".
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { stateless: true, autoConfirm: false });
    try {
      const client = await connect(h.server.url, TOKEN, { elicit: true });
      const first = await client.callTool({ name: "write_file", arguments: { path: "q.txt", content: "one" } });
      assert.equal(first.isError, undefined, textOf(first));
      const again = await client.callTool({ name: "write_file", arguments: { path: "q.txt", content: "two" } });
      assert.equal(again.isError, true);
      assert.match(
        textOf(again),
        /^Skipped \[permission_denied\]: Write permission: refused because this server has no /,
      );
      assert.match(textOf(again), /--stateless/);
      assert.doesNotMatch(textOf(again), /does not support elicitation/);
      assert.match(textOf(await client.callTool({ name: "read_file", arguments: { path: "q.txt" } })), /one/);
      await client.close();
    } finally {
      await h.close();
    }
  });

  test("stateless mode speaks the request's protocol version: a client of 2025-03-26 gets no resource_link", {
    timeout: 60_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-stateless-"));
    // An output over the cap is kept whole as an artifact, which the result links to.
    const box = new ToolBox({ maxOutputChars: 1_000 }).register(tool({
      name: "big",
      description: "A long output.",
      input: v.object({}),
      readOnly: true,
      run: () => "line\n".repeat(1_000),
    }));
    const server = await serveHttp(box, {
      port: 0,
      workspace: dir,
      allowNoAuth: true,
      sandbox: "off",
      stateless: true,
    });
    try {
      const kinds = async (version: string | undefined) => {
        const answer = await raw(server.url, {
          headers: version === undefined ? {} : { "mcp-protocol-version": version },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "big", arguments: {} } }),
        });
        assert.equal(answer.status, 200, answer.text);
        const data = answer.text.split("\n").find((line) => line.startsWith("data: {"))!;
        return (JSON.parse(data.slice(6)).result.content as { type: string }[]).map((c) => c.type);
      };
      // No header: a client of 2025-03-26, which has no resource_link content (the header came in 2025-06-18).
      assert.deepEqual(await kinds(undefined), ["text", "text"]);
      assert.deepEqual(await kinds("2025-03-26"), ["text", "text"]);
      assert.deepEqual(await kinds("2025-06-18"), ["text", "resource_link"]);
    } finally {
      await server.shutdown();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("the node:http path serves the same", { timeout: 60_000 }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { platform: "node", maxBodyBytes: 64 * 1024 });
    try {
      const client = await connect(h.server.url, TOKEN);
      await client.callTool({ name: "write_file", arguments: { path: "n.txt", content: "node" } });
      assert.match(textOf(await client.callTool({ name: "read_file", arguments: { path: "n.txt" } })), /node/);
      await client.close();
      assert.equal((await raw(h.server.url, { body: INIT })).status, 401);
      const host = await raw(h.server.url, { body: INIT, headers: { host: "evil.example" } });
      assert.equal(host.status, 403);
      // A body over the limit is cut off, answered 413, and the server goes on.
      const big = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping", params: { pad: "x".repeat(512 * 1024) } });
      const refused = await raw(h.server.url, { body: big, headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(refused.status, 413);
      assert.equal(refused.json().id, 9);
      await new Promise((done) => setTimeout(done, 100));
      const again = await connect(h.server.url, TOKEN);
      await again.close();
    } finally {
      await h.close();
    }
  });

  // The status line a raw HTTP/1.1 request is answered with, or "" when the connection ends without one.
  const statusOf = (port: number, request: string) =>
    new Promise<string>((resolve) => {
      const socket = tcpConnect(port, "127.0.0.1");
      let text = "";
      const timer = setTimeout(() => socket.destroy(), 10_000);
      socket.on("data", (data) => (text += data.toString()));
      socket.on("error", () => {});
      socket.on("close", () => {
        clearTimeout(timer);
        resolve(/^HTTP\/1\.[01] (\d+)/.exec(text)?.[1] ?? "");
      });
      socket.write(request);
    });

  for (const platform of ["deno", "node"] as const) {
    if (platform === "deno" && !IS_DENO) continue;
    test(`(${platform}) a Host or target that forms no URL is refused, and the server goes on`, {
      timeout: 60_000,
    }, async () => {
      const h = await startServer([{ token: TOKEN, tenant: "t" }], { platform });
      try {
        const port = h.server.port;
        for (const host of [`127.0.0.1:${port}.evil.example`, "127.0.0.1:99999", "a b", "[::1"]) {
          const status = await statusOf(port, `GET /mcp HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`);
          assert.ok(["400", "403"].includes(status), `Host ${host}: ${status || "no answer"}`);
          const health = await fetch(new URL("/healthz", h.server.url));
          assert.equal(health.status, 200, `the server still answers after the Host ${host}`);
          await health.body?.cancel();
        }
        const target = await statusOf(
          port,
          `GET http://[/x HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nconnection: close\r\n\r\n`,
        );
        assert.ok(
          ["400", "403", "404"].includes(target),
          `an absolute target that is no URL: ${target || "no answer"}`,
        );
        const health = await fetch(new URL("/healthz", h.server.url));
        assert.equal(health.status, 200);
        await health.body?.cancel();
      } finally {
        await h.close();
      }
    });
  }

  test("policy questions reach the client's user through elicitation over HTTP", { timeout: 60_000 }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { autoConfirm: false });
    try {
      const client = await connect(h.server.url, TOKEN, { elicit: true });
      const asked: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message);
        return { action: "decline" };
      });
      const result = await client.callTool({ name: "bash", arguments: { command: "rm -rf build" } });
      assert.ok(asked.length >= 1, "the server asked");
      assert.equal(result.isError, true);
      await client.close();
    } finally {
      await h.close();
    }
  });

  test(
    "a call's question goes out on that call's own response stream: a client that opens no GET stream is asked too",
    { timeout: 60_000 },
    async () => {
      const h = await startServer([{ token: TOKEN, tenant: "t" }], { autoConfirm: false });
      const post = (body: unknown, session?: string) =>
        fetch(h.server.url, {
          method: "POST",
          headers: {
            authorization: `Bearer ${TOKEN}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" } : {}),
          },
          body: JSON.stringify(body),
        });
      try {
        const init = await post({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: { elicitation: { form: {} } },
            clientInfo: { name: "no-get-stream", version: "1" },
          },
        });
        await init.text();
        const session = init.headers.get("mcp-session-id")!;
        await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session)).text();
        await (await post({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "write_file", arguments: { path: "a.txt", content: "old" } },
        }, session)).text();
        // Overwriting asks; before, the question went to a GET stream this client never opened, and the call hung.
        const call = await post({
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "write_file", arguments: { path: "a.txt", content: "new" } },
        }, session);
        const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
        const deadline = setTimeout(() => void reader.cancel(), 10_000);
        let text = "";
        let asked: { id: number; params: { message: string } } | undefined;
        while (true) {
          const { value, done } = await reader.read();
          if (done) break;
          text += value;
          const messages = [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1]));
          const question = messages.find((m) => m.method === "elicitation/create");
          if (question && !asked) {
            asked = question;
            const answer = await post({
              jsonrpc: "2.0",
              id: question.id,
              result: { action: "accept", content: { answer: "once" } },
            }, session);
            assert.equal(answer.status, 202);
          }
          const result = messages.find((m) => m.id === 3);
          if (result) {
            assert.equal(result.result.isError, undefined, JSON.stringify(result));
            break;
          }
        }
        clearTimeout(deadline);
        await reader.cancel();
        assert.ok(asked, "the question came on the call's stream");
        assert.match(asked.params.message, /overwrite a\.txt/);
        assert.equal(await readFile(join(h.dir, "tenants", "t", "a.txt"), "utf8"), "new");
      } finally {
        await h.close();
      }
    },
  );
});

describe("the command line", { skip: !IS_DENO && "runs main.ts under Deno" }, () => {
  test("serve --http refuses a public address without authentication", { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, [
      "run",
      "-A",
      join(ROOT, "main.ts"),
      "serve",
      "--http",
      "0.0.0.0:0",
      "--no-auth",
    ], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const code = await new Promise((done) => child.on("close", done));
    assert.equal(code, 2);
    assert.match(stderr, /Refusing to serve on 0\.0\.0\.0 without authentication/);
  });

  test("serve --http serves, and stops on SIGTERM", { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-http-cli-"));
    await mkdir(join(dir, "ws"));
    await mkdir(join(dir, "tmp"));
    const child = spawn(
      process.execPath,
      [
        "run",
        "-A",
        join(ROOT, "main.ts"),
        "serve",
        "--http",
        "127.0.0.1:0",
        "--no-auth",
        "--workspace",
        join(dir, "ws"),
        "--temp-dir",
        join(dir, "tmp"),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const childExit = exited(child);
    try {
      const url = await new Promise<URL>((resolve, reject) => {
        let stderr = "";
        child.stderr.on("data", (chunk) => {
          stderr += chunk;
          const found = /serving MCP on (\S+)/.exec(stderr);
          if (found) resolve(new URL(found[1]));
        });
        child.on("close", () => reject(new Error(stderr)));
      });
      const client = await connect(url);
      assert.ok((await client.listTools()).tools.length > 10);
      assert.equal((await client.callTool({ name: "temp_dir", arguments: {} })).isError, undefined);
      assert.equal((await readdir(join(dir, "tmp"))).length, 1);
      child.kill("SIGTERM");
      const { code, signal } = await childExit;
      // Deno's child_process reports the signal sent even when the child handled it and exited 0.
      assert.ok(code === 0 || (IS_DENO && signal === "SIGTERM"), `${code} ${signal}`);
      // The graceful path ran: the session's temp dir is gone.
      assert.deepEqual(await readdir(join(dir, "tmp")), []);
    } finally {
      child.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  });
});
