// The connections the HTTP server holds, attacked over real sockets: heads sent slowly or never finished (slowloris),
// bodies that stop coming, idle kept-alive connections, and more connections than the caps, from one address and in
// all (adapters/mcp/_http_connections.ts).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect as tcpConnect, type Socket } from "node:net";
import { connect, type Harness, startServer, textOf } from "./_http_harness.ts";
import { spawn } from "node:child_process";
import { type IncomingMessage, request as httpRequest } from "node:http";
import { mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { addressKey, MAX_PIPELINED } from "../../adapters/mcp/_http_connections.ts";
import { exited } from "../_exited.ts";
import { DENO, DENO_PROCESS_ONLY } from "../_runtime.ts";

const TOKEN = "connections-token-0123456789abcdef0123456789";
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

interface Held {
  socket: Socket;
  /** Once the server has closed the connection: what it sent, and when (ms after opening). */
  closed: Promise<{ text: string; status: string; ms: number }>;
}

// A connection that sends `bytes` (and then whatever the test writes on it).
function hold(port: number, bytes = ""): Promise<Held> {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const socket = tcpConnect(port, "127.0.0.1");
    let text = "";
    const closed = new Promise<{ text: string; status: string; ms: number }>((done) => {
      socket.on("data", (data) => (text += data.toString()));
      socket.on(
        "close",
        () => done({ text, status: /^HTTP\/1\.[01] (\d+)/.exec(text)?.[1] ?? "", ms: Date.now() - start }),
      );
    });
    socket.on("error", () => {});
    socket.once("connect", () => {
      if (bytes) socket.write(bytes);
      resolve({ socket, closed });
    });
    socket.once("error", reject);
  });
}

const isOpen = async (held: Held, ms: number) =>
  await Promise.race([held.closed.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), ms))]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("deadlines for a request's head and body", () => {
  let h: Harness;
  let port: number;
  before(async () => {
    h = await startServer([{ token: TOKEN, tenant: "t" }], { headersTimeoutMs: 600, bodyTimeoutMs: 800 });
    port = h.server.port;
  });
  after(() => h.close());

  test("a head never finished is answered 408 and closed, with no token shown", { timeout: 60_000 }, async () => {
    const held = await hold(port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-a: `);
    const { status, ms, text } = await held.closed;
    assert.equal(status, "408", text);
    assert.match(text, /within 600 ms/);
    assert.ok(ms >= 500 && ms < 5_000, `closed after ${ms} ms`);
  });

  test("a head dripped a byte at a time is closed at the same deadline", { timeout: 60_000 }, async () => {
    const held = await hold(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-b: ");
    const drip = setInterval(() => held.socket.write("b"), 100);
    try {
      const { status, ms } = await held.closed;
      assert.equal(status, "408");
      assert.ok(ms < 5_000, `closed after ${ms} ms`);
    } finally {
      clearInterval(drip);
    }
  });

  test("a connection that sends nothing, and a kept-alive one left idle, are closed", { timeout: 60_000 }, async () => {
    const silent = await hold(port);
    const idle = await hold(port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    const [a, b] = await Promise.all([silent.closed, idle.closed]);
    assert.equal(a.status, "408");
    assert.ok(a.ms < 5_000, `silent closed after ${a.ms} ms`);
    // The idle one was answered first (200), then closed once no next request came.
    assert.equal(b.status, "200", b.text);
    assert.ok(b.ms >= 500 && b.ms < 5_000, `idle closed after ${b.ms} ms`);
  });

  test("a kept-alive connection that sends its next request in time is served again", { timeout: 60_000 }, async () => {
    const held = await hold(port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await sleep(300);
    held.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await sleep(300);
    held.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    const { text } = await held.closed;
    assert.equal(text.match(/HTTP\/1\.1 200/g)?.length, 3, text);
  });

  test("a body that stops coming is cut off at its deadline, token or not", { timeout: 60_000 }, async () => {
    const head = (auth: string) =>
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${auth}content-type: application/json\r\n` +
      `accept: application/json, text/event-stream\r\ncontent-length: 100000\r\n\r\n{"jsonrpc":"2.0","id":1,`;
    const withToken = await hold(port, head(`authorization: Bearer ${TOKEN}\r\n`));
    const drip = setInterval(() => withToken.socket.write(" "), 100);
    try {
      const { status, ms, text } = await withToken.closed;
      assert.ok(ms >= 700 && ms < 5_000, `closed after ${ms} ms`);
      // Told why, as a slow head is (before: no answer, the connection reset).
      assert.equal(status, "408", text);
      assert.match(text, /body must arrive within 800 ms/);
    } finally {
      clearInterval(drip);
    }
    // Without a token the request is refused (401) before its body is read; what comes after does not hold it.
    const without = await hold(port, head(""));
    const drip2 = setInterval(() => without.socket.write(" "), 100);
    try {
      const { status, ms } = await without.closed;
      assert.equal(status, "401");
      assert.ok(ms < 5_000, `closed after ${ms} ms`);
    } finally {
      clearInterval(drip2);
    }
  });

  test("a client whose calls take longer than the deadlines is served", { timeout: 30_000 }, async () => {
    const client = await connect(h.server.url, TOKEN);
    try {
      const slow = await client.callTool({ name: "sleep", arguments: { seconds: 1.5 } });
      assert.equal(slow.isError, undefined, textOf(slow));
      await sleep(1_000);
      const again = await client.callTool({ name: "datetime", arguments: {} });
      assert.equal(again.isError, undefined, textOf(again));
    } finally {
      await client.close();
    }
  });
});

describe("caps on connections", () => {
  test("one address holds at most maxConnectionsPerAddress; the next is refused 503", { timeout: 60_000 }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { maxConnectionsPerAddress: 5 });
    const held: Held[] = [];
    try {
      for (let i = 0; i < 5; i++) held.push(await hold(h.server.port, "GET /mcp HTTP/1.1\r\n"));
      const sixth = await hold(h.server.port);
      const { status, text } = await sixth.closed;
      assert.equal(status, "503", text);
      assert.match(text, /holds 5 connections, the most one may \(5\)/);
      for (const one of held) assert.ok(await isOpen(one, 10), "an admitted connection stays open");
      // A client that sends its request (and a body) on a refused connection reads the 503 and why.
      const refused = await fetch(h.server.url, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: "x".repeat(100_000),
      });
      assert.equal(refused.status, 503);
      assert.match(await refused.text(), /the most one may \(5\)/);
      // One closed makes room for another.
      held.shift()!.socket.destroy();
      await sleep(200);
      const next = await hold(h.server.port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      assert.equal((await next.closed).status, "200");
    } finally {
      for (const one of held) one.socket.destroy();
      await h.close();
    }
  });

  test("at maxConnections a new connection closes the oldest one waiting for a head, never one being served", {
    timeout: 30_000,
  }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { maxConnections: 4 });
    const port = h.server.port;
    const client = await connect(h.server.url, TOKEN);
    const held: Held[] = [];
    try {
      // A call being served holds a connection (its answer's stream) for a second and a half.
      const call = client.callTool({ name: "sleep", arguments: { seconds: 1.5 } });
      await sleep(300);
      // Connections with no token, their heads never finished, fill the rest and go on coming.
      for (let i = 0; i < 10; i++) held.push(await hold(port, "POST /mcp HTTP/1.1\r\nX: "));
      await sleep(200);
      const open = [];
      for (const one of held) open.push(await isOpen(one, 5));
      // The newest ones are held, the oldest were closed for them; the call was never cut.
      assert.ok(open.filter(Boolean).length <= 3, `open: ${open}`);
      assert.equal(open.at(-1), true);
      assert.equal(open[0], false);
      const served = await call;
      assert.equal(served.isError, undefined, textOf(served));
      // A client still gets in, however many such connections come.
      const again = await client.callTool({ name: "datetime", arguments: {} });
      assert.equal(again.isError, undefined, textOf(again));
    } finally {
      for (const one of held) one.socket.destroy();
      await client.close().catch(() => {});
      await h.close();
    }
  });

  test("by default an address holds at most 256 connections", { timeout: 30_000 }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }]);
    const held: Held[] = [];
    try {
      for (let i = 0; i < 256; i++) held.push(await hold(h.server.port, "GET /mcp HTTP/1.1\r\n"));
      const over = await hold(h.server.port);
      assert.equal((await over.closed).status, "503");
    } finally {
      for (const one of held) one.socket.destroy();
      await h.close();
    }
  });
});

describe("a batch whose answers are left unread", () => {
  test("stops being served once its answers would take the tenant over its unread budget", {
    timeout: 60_000,
  }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { maxUnreadBytes: 4 * 1024 * 1024 });
    const V = "2025-03-26";
    const headers: Record<string, string> = {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": V,
    };
    const post = async (body: unknown) => {
      const response = await fetch(h.server.url, { method: "POST", headers, body: JSON.stringify(body) });
      return { response, text: await response.text() };
    };
    let held: Held | undefined;
    try {
      const init = await post({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "batch", version: "1" } },
      });
      headers["mcp-session-id"] = init.response.headers.get("mcp-session-id")!;
      await post({ jsonrpc: "2.0", method: "notifications/initialized" });
      const made = await post({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "bash", arguments: { command: "head -c 3145728 /dev/zero | tr '\\0' a" } },
      });
      const uri = /artifact:\/\/sha256\/[0-9a-f]{64}/.exec(made.text)?.[0];
      assert.ok(uri, made.text.slice(0, 500));
      // Four reads of 3 MiB, then a write: the second read takes the tenant over 4 MiB unread.
      const batch = JSON.stringify([
        ...[2, 3, 4, 5].map((id) => ({ jsonrpc: "2.0", id, method: "resources/read", params: { uri } })),
        {
          jsonrpc: "2.0",
          id: 6,
          method: "tools/call",
          params: { name: "write_file", arguments: { path: "after.txt", content: "served" } },
        },
      ]);
      held = await hold(
        h.server.port,
        `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${h.server.port}\r\n` +
          Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("") +
          `content-length: ${batch.length}\r\n\r\n${batch}`,
      );
      held.socket.pause();
      await sleep(3_000);
      // The write after the reads was never served.
      await assert.rejects(stat(join(h.dir, "tenants", "t", "after.txt")), { code: "ENOENT" });
      // The session goes on.
      const again = await post({ jsonrpc: "2.0", id: 7, method: "tools/list" });
      assert.equal(again.response.status, 200);
    } finally {
      held?.socket.destroy();
      await h.close();
    }
  });
});

describe("one tenant's calls held on one address", () => {
  test("cannot take that address's connections from the other tenants: the tenant is refused at its own cap", {
    timeout: 30_000,
  }, async () => {
    // Alice's calls held all 256 connections of 127.0.0.1, and bob's first connection was refused 503: every local
    // client of a server on loopback, every client behind one reverse proxy, shares an address.
    const BOB = "connections-bob-0123456789abcdef0123456789ab";
    const h = await startServer([{ token: TOKEN, tenant: "alice" }, { token: BOB, tenant: "bob" }], {
      maxConnectionsPerAddress: 8,
      maxConnectionsPerTenant: 6,
    });
    const url = h.server.url;
    // One request on a connection of its own (no pooled socket), its answer kept open; resolves with its status and
    // the start of its body.
    const responses: IncomingMessage[] = [];
    const post = (token: string, body: unknown, session?: string) =>
      new Promise<{ status: number; session: string; text: string }>((resolve, reject) => {
        const req = httpRequest({
          hostname: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          agent: false,
          headers: {
            accept: "application/json, text/event-stream",
            "content-type": "application/json",
            authorization: `Bearer ${token}`,
            ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" } : {}),
          },
        }, (res) => {
          responses.push(res);
          let text = "";
          res.on("data", (chunk) => (text += chunk));
          const done = () =>
            resolve({ status: res.statusCode ?? 0, session: String(res.headers["mcp-session-id"]), text });
          // A held call's answer is an event stream whose headers come at once; any other answer is read whole.
          if ((res.headers["content-type"] ?? "").startsWith("text/event-stream") && !session) {
            res.once("data", () => setTimeout(done, 50));
          } else if ((res.headers["content-type"] ?? "").startsWith("text/event-stream")) done();
          else res.on("end", done);
        });
        req.on("error", reject);
        req.end(JSON.stringify(body));
      });
    try {
      const init = await post(TOKEN, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      });
      assert.equal(init.status, 200, init.text);
      const ready = await post(TOKEN, { jsonrpc: "2.0", method: "notifications/initialized" }, init.session);
      assert.equal(ready.status, 202, ready.text);
      await sleep(100);
      // Alice holds eight calls, each answer held by a sleep: six connections are hers to hold, the rest refused.
      const held = [];
      for (let i = 0; i < 8; i++) {
        held.push(
          post(TOKEN, {
            jsonrpc: "2.0",
            id: 10 + i,
            method: "tools/call",
            params: { name: "sleep", arguments: { seconds: 3 } },
          }, init.session),
        );
        await sleep(30);
      }
      const refused = (await Promise.race([Promise.all(held), sleep(2_000).then(() => [])])).filter((r) =>
        r.status === 503
      );
      assert.equal(refused.length, 2, JSON.stringify(refused));
      for (const one of refused) assert.match(one.text, /this tenant holds 6 connections, the most one may \(6\)/);
      // Bob, on the same address, still gets in and is served.
      const client = await connect(url, BOB);
      try {
        const answer = await client.callTool({ name: "datetime", arguments: {} });
        assert.equal(answer.isError, undefined, textOf(answer));
      } finally {
        await client.close();
      }
    } finally {
      for (const res of responses) res.destroy();
      await h.close();
    }
  });
});

describe("one tenant's bodies sent slowly", () => {
  test("cannot take every connection from the other tenants", { timeout: 30_000 }, async () => {
    const BOB = "connections-bob-0123456789abcdef0123456789ab";
    const h = await startServer([{ token: TOKEN, tenant: "alice" }, { token: BOB, tenant: "bob" }], {
      maxConnections: 80,
    });
    const port = h.server.port;
    const held: Held[] = [];
    try {
      // Alice's token on every connection the server takes, each sending a body's first bytes and no more.
      for (let i = 0; i < 80; i++) {
        held.push(
          await hold(
            port,
            `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${TOKEN}\r\n` +
              `content-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
              `content-length: 1000\r\n\r\n{"jsonrpc":"2.0",`,
          ),
        );
      }
      await sleep(500);
      // Bob still gets in.
      const client = await connect(h.server.url, BOB);
      try {
        const answer = await client.callTool({ name: "datetime", arguments: {} });
        assert.equal(answer.isError, undefined, textOf(answer));
      } finally {
        await client.close();
      }
      // Alice's POSTs past the 64th were refused before their bodies were read.
      const refused = await Promise.all(held.map((one) => isOpen(one, 10).then((open) => open ? "" : "closed")));
      assert.ok(refused.includes("closed"), "some of alice's connections were closed");
    } finally {
      for (const one of held) one.socket.destroy();
      await h.close();
    }
  });
});

describe("pipelined requests", () => {
  test("a connection pipelining more than MAX_PIPELINED unanswered requests is closed; fewer are served", {
    timeout: 30_000,
  }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }]);
    const port = h.server.port;
    const get = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
    try {
      const few = await hold(
        port,
        get.repeat(MAX_PIPELINED - 1) + get.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"),
      );
      assert.equal((await few.closed).text.match(/HTTP\/1\.1 200/g)?.length, MAX_PIPELINED);
      // Thousands pipelined at once: the connection is closed, and few of them were served.
      const many = await hold(port, get.repeat(20_000));
      const { ms, text } = await many.closed;
      assert.ok(ms < 10_000, `closed after ${ms} ms`);
      assert.ok((text.match(/HTTP\/1\.1 200/g)?.length ?? 0) <= MAX_PIPELINED, "a few were served");
      const after = await hold(port, get.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"));
      assert.equal((await after.closed).status, "200");
    } finally {
      await h.close();
    }
  });
});

describe("the command line", { skip: DENO_PROCESS_ONLY }, () => {
  test("serve --http takes --headers-timeout-seconds and --max-connections-per-address", {
    timeout: 60_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-http-conns-"));
    await mkdir(join(dir, "ws"));
    const args = ["run", "-A", join(ROOT, "main.ts"), "serve", "--http", "127.0.0.1:0", "--no-auth", "--workspace"];
    const child = spawn(
      DENO,
      [...args, join(dir, "ws"), "--headers-timeout-seconds", "0.5", "--max-connections-per-address", "3"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const childExit = exited(child);
    const held: Held[] = [];
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
      const port = Number(url.port);
      for (let i = 0; i < 3; i++) held.push(await hold(port, "GET /mcp HTTP/1.1\r\n"));
      const fourth = await hold(port);
      assert.equal((await fourth.closed).status, "503");
      const first = await held[0].closed;
      assert.equal(first.status, "408");
      assert.ok(first.ms < 5_000, `closed after ${first.ms} ms`);
    } finally {
      for (const one of held) one.socket.destroy();
      child.kill("SIGKILL");
      await childExit;
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("addressKey", () => {
  test("IPv4 whole, IPv4-mapped as IPv4, IPv6 by its /64", { timeout: 5_000 }, () => {
    assert.equal(addressKey("10.1.2.3"), "10.1.2.3");
    assert.equal(addressKey("::ffff:10.1.2.3"), "10.1.2.3");
    assert.equal(addressKey("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
    assert.equal(addressKey("2001:db8:1:2:bbbb:cccc:dddd:eeee"), "2001:db8:1:2::/64");
    assert.equal(addressKey("2001:db8::1"), "2001:db8:0:0::/64");
    assert.equal(addressKey("::1"), "0:0:0:0::/64");
    assert.equal(addressKey("fe80::1%eth0"), "fe80:0:0:0::/64");
    assert.equal(addressKey(undefined), "?");
  });
});

describe("answers a client leaves unread", () => {
  // A raw POST on its own connection whose answer is not read until `read()` is called: then the answer's text, read
  // until the server ends it or closes the connection.
  function unreadPost(port: number, session: string, body: string): Promise<{ read(): Promise<string> }> {
    return new Promise((resolve, reject) => {
      const socket = tcpConnect(port, "127.0.0.1");
      const chunks: Buffer[] = [];
      let closed = false;
      socket.on("error", () => {});
      socket.on("close", () => (closed = true));
      socket.once("connect", () => {
        socket.pause();
        socket.write(
          `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${TOKEN}\r\n` +
            `content-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
            `mcp-protocol-version: 2025-11-25\r\nmcp-session-id: ${session}\r\ncontent-length: ${body.length}\r\n\r\n` +
            body,
        );
        resolve({
          read: () =>
            new Promise<string>((done) => {
              const text = () => Buffer.concat(chunks).toString("latin1");
              const finish = () => {
                clearTimeout(timer);
                socket.destroy();
                done(text());
              };
              // Ends after 15 s without a byte, not 15 s in all: a 12 MiB answer read on a loaded machine took longer
              // (CI run ci15: 11,720,199 bytes read when the whole bound ran out).
              // Only the last bytes are looked at for the chunked answer's end: joining every chunk at each one
              // copied a 12 MiB answer some 200 times.
              let timer = setTimeout(finish, 15_000);
              let tail = "";
              socket.on("data", (chunk: Buffer) => {
                chunks.push(chunk);
                clearTimeout(timer);
                timer = setTimeout(finish, 15_000);
                tail = (tail + chunk.subarray(-5).toString("latin1")).slice(-5);
                if (tail === "0\r\n\r\n") finish();
              });
              socket.on("close", finish);
              if (closed) finish();
              socket.resume();
            }),
        });
      });
      socket.once("error", reject);
    });
  }

  test("answers left unread past the tenant's budget end their connections; the session goes on", {
    timeout: 120_000,
  }, async () => {
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { maxUnreadBytes: 16 * 1024 * 1024 });
    const client = await connect(h.server.url, TOKEN);
    try {
      // An artifact of 12 MiB, more than the connection's socket buffers take.
      const made = await client.callTool({
        name: "bash",
        arguments: { command: "head -c 12582912 /dev/zero | tr '\\0' a" },
      });
      const uri = /artifact:\/\/sha256\/[0-9a-f]{64}/.exec(JSON.stringify(made))?.[0];
      assert.ok(uri, textOf(made));
      const session = (client.transport as unknown as { sessionId: string }).sessionId;
      const posts = [];
      for (let i = 0; i < 4; i++) {
        const body = JSON.stringify({ jsonrpc: "2.0", id: 100 + i, method: "resources/read", params: { uri } });
        posts.push(await unreadPost(h.server.port, session, body));
        await sleep(300);
      }
      await sleep(1_000);
      const texts = await Promise.all(posts.map((post) => post.read()));
      const whole = texts.filter((text, i) => text.includes(`"id":${100 + i}}`));
      // The first is held (a tenant holding none gets one answer, whatever its size), the next would go over.
      assert.equal(whole.length, 1, texts.map((t) => t.length).join(", "));
      // Its budget given back, the tenant is answered again.
      const again = await client.readResource({ uri });
      assert.equal((again.contents[0] as { text: string }).text.length, 12582912);
    } finally {
      await client.close().catch(() => {});
      await h.close();
    }
  });
});
