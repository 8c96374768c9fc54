// The browser's egress proxy on its own: it serves only its own client, and
// connects to the address it judged, not to whatever the name resolves to.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { startEgressProxy } from "../../../tools/browser/_egress_proxy.ts";
import { forbiddenServer } from "./_fixtures.ts";

const credentials = { username: "toolfence", password: "s3cret" };
const auth = "Basic " + btoa("toolfence:s3cret");

function viaProxy(port: number, target: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path: target, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

function connectVia(port: number, target: string, headers = ""): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(`CONNECT ${target} HTTP/1.1\r\n${headers}\r\n`));
    let head = "";
    socket.on("data", (d) => {
      head += d;
      if (head.includes("\r\n\r\n")) {
        socket.destroy();
        resolve(head.split("\r\n")[0]);
      }
    });
    socket.on("error", () => resolve(head));
  });
}

describe("egress proxy", () => {
  test("requests and tunnels without the credentials get 407 and reach nothing", { timeout: 60_000 }, async () => {
    const target = await forbiddenServer();
    const judged: string[] = [];
    const proxy = await startEgressProxy(
      async (_s, host, port) => {
        judged.push(`${host}:${port}`);
        return await Promise.resolve({ origin: `http://${host}:${port}`, addresses: ["127.0.0.1"] });
      },
      () => {},
      credentials,
    );
    try {
      assert.equal(await viaProxy(proxy.port, `${target.base}/a`), 407);
      assert.equal(
        await viaProxy(proxy.port, `${target.base}/b`, { "proxy-authorization": "Basic " + btoa("toolfence:guess") }),
        407,
      );
      assert.match(await connectVia(proxy.port, `127.0.0.1:${target.port}`), / 407 /);
      assert.deepEqual(target.log, []);
      assert.deepEqual(judged, []);
      assert.equal(await viaProxy(proxy.port, `${target.base}/c`, { "proxy-authorization": auth }), 200);
      assert.match(
        await connectVia(proxy.port, `127.0.0.1:${target.port}`, `Proxy-Authorization: ${auth}\r\n`),
        / 200 /,
      );
      assert.deepEqual(target.log, ["/c"]);
    } finally {
      await proxy.close();
      await target.close();
    }
  });

  test(
    "it connects to the judged address, so a name cannot resolve differently when used",
    { timeout: 60_000 },
    async () => {
      const target = await forbiddenServer();
      const proxy = await startEgressProxy(
        (_s, host, port) => Promise.resolve({ origin: `http://${host}:${port}`, addresses: ["127.0.0.1"] }),
        () => {},
        credentials,
      );
      try {
        // The name does not resolve at all: only the judged address can have been used.
        assert.equal(
          await viaProxy(proxy.port, `http://pinned.invalid:${target.port}/pinned`, { "proxy-authorization": auth }),
          200,
        );
        assert.deepEqual(target.log, ["/pinned"]);
      } finally {
        await proxy.close();
        await target.close();
      }
    },
  );

  test("a refusal is a 403 marked as the proxy's own, and is reported", { timeout: 60_000 }, async () => {
    const target = await forbiddenServer();
    const blocked: string[] = [];
    const proxy = await startEgressProxy(
      () => Promise.reject(new Error("not allowed")),
      (entry) => blocked.push(entry.url),
      credentials,
    );
    try {
      assert.equal(await viaProxy(proxy.port, `${target.base}/x`, { "proxy-authorization": auth }), 403);
      assert.match(
        await connectVia(proxy.port, `127.0.0.1:${target.port}`, `Proxy-Authorization: ${auth}\r\n`),
        / 403 /,
      );
      assert.equal(blocked.length, 2);
      assert.deepEqual(target.log, []);
    } finally {
      await proxy.close();
      await target.close();
    }
  });
});
