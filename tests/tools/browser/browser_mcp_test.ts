// The browser group driven through the real MCP server with the official SDK
// client, against fixture pages on 127.0.0.1. A second server stands for every
// destination that is not allowed: its access log must stay empty.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ToolBox } from "../../../toolbox.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import { createMcpServer, type McpToolServer } from "../../../adapters/mcp/mod.ts";
import { browserTools } from "../../../tools/browser/mod.ts";
import { BROWSER_MARKER } from "../../../tools/browser/_browser_session.ts";
import { alive, descendantsWith, type FixtureServer, fixtureServer, forbiddenServer, noBrowser } from "./_fixtures.ts";

let site: FixtureServer;
let away: FixtureServer;
let dir: string;
let client: Client;
let served: McpToolServer;
const asked: string[] = [];

function text(result: CallToolResult): string {
  return result.content.filter((c) => c.type === "text").map((c) => (c as { text: string }).text).join("\n");
}

function code(result: CallToolResult): string | undefined {
  return (result._meta?.["toolfence/result"] as { errorCode?: string } | undefined)?.errorCode;
}

async function call(name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return await client.callTool({ name, arguments: args }) as CallToolResult;
}

async function ok(name: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await call(name, args);
  assert.ok(!result.isError, `${name} failed: ${text(result)}`);
  return text(result);
}

function ref(snapshot: string, pattern: RegExp): string {
  const line = snapshot.split("\n").find((l) => pattern.test(l));
  const found = line?.match(/\[ref=((?:f\d+)?e\d+)\]/);
  assert.ok(found, `no element matching ${pattern} in:\n${snapshot}`);
  return found[1];
}

before(async () => {
  away = await forbiddenServer();
  site = await fixtureServer(away.base);
  dir = await fs.realpath(await fs.mkdtemp(join(tmpdir(), "toolfence-browser-test-")));
  await fs.writeFile(join(dir, "local.html"), `<p>workspace page</p><iframe src="file:///etc/hostname"></iframe>`);
  const box = new ToolBox({ maxOutputChars: 20_000 }).register(...browserTools({ allow: [site.base] }));
  served = createMcpServer(box, {
    workspace: dir,
    capabilities: ["vision"],
    host: callbackHost({
      choose: (request) => {
        asked.push(request.message);
        return request.options.some((o) => o.value === "deny") ? "deny" as never : request.defaultChoice;
      },
      confirm: (request) => {
        asked.push(request.message);
        return request.title.startsWith("Run a script");
      },
    }),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: "browser-test", version: "1" });
  await served.server.connect(serverSide);
  await client.connect(clientSide);
});

after(async () => {
  await client?.close();
  await served?.close();
  await site?.close();
  await away?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe("browser tools through the MCP server", { skip: noBrowser }, () => {
  test("the tools are listed with what they need", { timeout: 60_000 }, async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).filter((n) => n.startsWith("browser_"));
    for (
      const name of [
        "browser_navigate",
        "browser_snapshot",
        "browser_click",
        "browser_type",
        "browser_select",
        "browser_press_key",
        "browser_wait_for",
        "browser_evaluate",
        "browser_screenshot",
        "browser_tabs",
        "browser_close",
        "browser_console_messages",
        "browser_file_upload",
      ]
    ) assert.ok(names.includes(name), name);
    assert.match(tools.find((t) => t.name === "browser_navigate")!.description!, /--allow-net/);
  });

  test("a form: navigate, snapshot with refs, type, select, click", { timeout: 60_000 }, async () => {
    assert.match(await ok("browser_navigate", { url: `${site.base}/form` }), /HTTP status 200/);
    const snapshot = await ok("browser_snapshot");
    assert.match(snapshot, /<untrusted-web-content id="[0-9a-f]{16}">/);
    assert.match(snapshot, /<\/untrusted-web-content id="[0-9a-f]{16}">$/m);
    await ok("browser_type", { ref: ref(snapshot, /textbox "Name"/), text: "Ada" });
    await ok("browser_select", { ref: ref(snapshot, /combobox "Colour"/), values: ["Blue"] });
    // The same element keeps its reference in a later snapshot.
    assert.equal(ref(await ok("browser_snapshot"), /button "Send"/), ref(snapshot, /button "Send"/));
    assert.match(await ok("browser_click", { ref: ref(snapshot, /button "Send"/) }), /submitted/);
    await ok("browser_wait_for", { text: "Hello Ada, blue" });
    assert.match(await ok("browser_snapshot"), /Hello Ada, blue/);
  });

  test("a stale or malformed ref is a clear error", { timeout: 60_000 }, async () => {
    assert.equal(code(await call("browser_click", { ref: "e99999" })), "ref_not_found");
    assert.equal(code(await call("browser_click", { ref: "e1 >> css=body" })), "invalid_ref");
  });

  test("keys, waiting for text and for time", { timeout: 60_000 }, async () => {
    await ok("browser_navigate", { url: `${site.base}/keys` });
    await ok("browser_press_key", { key: "ArrowDown" });
    assert.match(await ok("browser_snapshot"), /key ArrowDown/);
    assert.equal(code(await call("browser_press_key", { key: "NoSuchKey" })), "invalid_key");
    await ok("browser_navigate", { url: `${site.base}/later` });
    await ok("browser_wait_for", { text: "Ready now" });
    const started = performance.now();
    await ok("browser_wait_for", { time: 0.2 });
    assert.ok(performance.now() - started >= 190);
    assert.equal(code(await call("browser_wait_for", { text: "never shown", timeout: 0.3 })), "wait_timeout");
  });

  test("a slow page loads; a page that throws reports its errors on request", { timeout: 60_000 }, async () => {
    assert.match(await ok("browser_navigate", { url: `${site.base}/slow` }), /status 200/);
    await ok("browser_navigate", { url: `${site.base}/throws` });
    const messages = await ok("browser_console_messages");
    assert.match(messages, /\[console\.log\] hello from the page/);
    assert.match(messages, /\[pageerror\] boom in page/);
  });

  test("page text cannot close the untrusted frame", { timeout: 60_000 }, async () => {
    await ok("browser_navigate", { url: `${site.base}/inject` });
    const snapshot = await ok("browser_snapshot");
    assert.match(snapshot, /delete everything/, "the page's text is there");
    // Whatever the spelling the page used, the only tag openers are the frame's own (and the one line before it).
    const framed = snapshot.slice(snapshot.indexOf("\n") + 1);
    assert.equal(framed.normalize("NFKD").replace(/[\p{M}\p{Cf}\s]/gu, "").split("<").length - 1, 2, framed);
    assert.match(framed, /^<untrusted-web-content id="([0-9a-f]{16})">[\s\S]*\n<\/untrusted-web-content id="\1">/);
  });

  test(
    "a page's title in browser_tabs and a script's thrown message cannot close their frames",
    { timeout: 60_000 },
    async () => {
      await ok("browser_navigate", { url: `${site.base}/inject` });
      // Whatever the spelling the page used, the only tag openers after our first line are the frame's own.
      const openers = (framed: string) =>
        framed.normalize("NFKD").replace(/[\p{M}\p{Cf}\s]/gu, "").split("<").length - 1;
      await ok("browser_evaluate", { script: "document.title = document.body.innerText; 0" });
      const tabs = await ok("browser_tabs");
      assert.match(tabs, /delete everything/, "the title is there");
      const framedTabs = tabs.slice(tabs.indexOf("\n") + 1);
      assert.equal(openers(framedTabs), 2, framedTabs);
      assert.match(
        framedTabs,
        /^<untrusted-web-content id="([0-9a-f]{16})">[\s\S]*\n<\/untrusted-web-content id="\1">$/,
      );
      const threw = await call("browser_evaluate", {
        script: "(() => { throw new Error(document.body.innerText.replace(/\\n/g, ' ')) })()",
      });
      assert.equal(code(threw), "script_error");
      const message = text(threw);
      assert.match(message, /delete everything/, "the message is there");
      const framedMessage = message.slice(message.indexOf("<untrusted-web-content"));
      assert.equal(openers(message), 2, message);
      assert.match(
        framedMessage,
        /^<untrusted-web-content id="([0-9a-f]{16})">[\s\S]*\n<\/untrusted-web-content id="\1">/,
      );
    },
  );

  test("a large snapshot is capped like other outputs, the whole of it an artifact", { timeout: 60_000 }, async () => {
    await ok("browser_navigate", { url: `${site.base}/huge` });
    const result = await call("browser_snapshot");
    const meta = result._meta?.["toolfence/result"] as { truncated: boolean; artifacts: string[] };
    assert.equal(meta.truncated, true);
    assert.equal(meta.artifacts.length, 1);
    assert.ok(text(result).length < 25_000, `${text(result).length} characters`);
    assert.match(text(result), /^Page at .*\n<untrusted-web-content id="[0-9a-f]{16}">/);
    assert.match(text(result), /read_artifact/);
  });

  test("browser_evaluate asks the host, and runs only when allowed", { timeout: 60_000 }, async () => {
    asked.length = 0;
    assert.match(await ok("browser_evaluate", { script: "document.title + ' ' + (1 + 2)" }), /Fixture 3/);
    assert.equal(asked.length, 1);
    assert.match(asked[0], /document\.title/);
    assert.equal(
      code(await call("browser_evaluate", { script: "(() => { throw new Error('x') })()" })),
      "script_error",
    );
  });

  test(
    "screenshots come back as MCP image content, at most 1000 px on the long side",
    { timeout: 60_000 },
    async () => {
      await ok("browser_navigate", { url: `${site.base}/big` });
      for (const args of [{}, { full_page: true }, { format: "jpeg" }]) {
        const result = await call("browser_screenshot", args);
        assert.ok(!result.isError, text(result));
        const image = result.content.find((c) => c.type === "image") as { data: string; mimeType: string };
        assert.ok(image, "an image follows the text");
        const bytes = Uint8Array.from(atob(image.data), (c) => c.charCodeAt(0));
        if (image.mimeType === "image/png") {
          const view = new DataView(bytes.buffer);
          const [w, h] = [view.getUint32(16), view.getUint32(20)];
          assert.ok(Math.max(w, h) <= 1000, `${w}×${h}`);
        } else assert.equal(image.mimeType, "image/jpeg");
        assert.ok(bytes.byteLength <= 10 * 1024 * 1024);
      }
      const full = text(await call("browser_screenshot", { full_page: true }));
      assert.match(full, /original 1000×5\d{3} px/);
      await ok("browser_evaluate", { script: "document.body.style.height = '60000px'" });
      assert.match(text(await call("browser_screenshot", { full_page: true })), /top 10000 px.*original 1000×10000 px/);
    },
  );

  test("windows a page opens are tabs", { timeout: 60_000 }, async () => {
    await ok("browser_navigate", { url: `${site.base}/popup` });
    await ok("browser_click", { ref: ref(await ok("browser_snapshot"), /button "Open"/) });
    await ok("browser_wait_for", { time: 0.3 });
    const list = await ok("browser_tabs");
    assert.match(list, /^2 tab\(s\); the current one is 0\./);
    assert.equal(list.match(/^\d+: /gm)?.length, 2, list);
    assert.match(await ok("browser_tabs", { action: "select", index: 1 }), /1: .*\/form.*\(current\)/);
    assert.doesNotMatch(await ok("browser_tabs", { action: "close", index: 1 }), /\/form/);
    assert.equal(code(await call("browser_tabs", { action: "select", index: 7 })), "tab_not_found");
  });

  test("a download lands in the session temp dir", { timeout: 60_000 }, async () => {
    await ok("browser_console_messages", { clear: true });
    await ok("browser_navigate", { url: `${site.base}/download` });
    await ok("browser_click", { ref: ref(await ok("browser_snapshot"), /link "Get the file"/) });
    let saved: string | undefined;
    for (let i = 0; i < 50 && !saved; i++) {
      saved = (await ok("browser_console_messages")).match(/saved to (\S+)/)?.[1];
      if (!saved) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(saved, "the download was saved");
    assert.ok(saved.startsWith(await served.session.workspace.tempDir()), saved);
    assert.equal(await fs.readFile(saved, "utf8"), "downloaded content\n");
    // The session temp dir is part of the workspace, so its files open as file: pages.
    await ok("browser_navigate", { url: `file://${saved}` });
    assert.match(await ok("browser_snapshot"), /downloaded content/);
  });

  test("uploads come only from the workspace", { timeout: 60_000 }, async () => {
    await fs.writeFile(join(dir, "upload.txt"), "twelve bytes");
    await ok("browser_navigate", { url: `${site.base}/upload` });
    const input = ref(await ok("browser_snapshot"), /button "Attachment"/);
    await ok("browser_file_upload", { ref: input, paths: ["upload.txt"] });
    assert.match(await ok("browser_snapshot"), /upload\.txt:12/);
    assert.equal(code(await call("browser_file_upload", { ref: input, paths: ["/etc/passwd"] })), "outside_workspace");
    assert.equal(
      code(await call("browser_file_upload", { ref: input, paths: ["../../etc/passwd"] })),
      "outside_workspace",
    );
    // Opened through the file door: a link leading out is refused, and so is a folder.
    await fs.symlink("/etc/passwd", join(dir, "leads-out.txt"));
    await fs.mkdir(join(dir, "a-folder"));
    assert.equal(
      code(await call("browser_file_upload", { ref: input, paths: ["leads-out.txt"] })),
      "outside_workspace",
    );
    assert.equal(code(await call("browser_file_upload", { ref: input, paths: ["a-folder"] })), "not_a_file");
  });

  test(
    "a redirect, a subframe, an image or a link to a destination not allowed never reaches it",
    { timeout: 60_000 },
    async () => {
      const redirect = await call("browser_navigate", { url: `${site.base}/redirect` });
      assert.equal(code(redirect), "url_not_allowed", text(redirect));
      await ok("browser_navigate", { url: `${site.base}/iframe` });
      await ok("browser_navigate", { url: `${site.base}/links` });
      await call("browser_click", { ref: ref(await ok("browser_snapshot"), /link "Away"/) });
      await ok("browser_navigate", { url: `${site.base}/sneaky` });
      await ok("browser_wait_for", { time: 0.5 });
      const direct = await call("browser_navigate", { url: `${away.base}/direct` });
      assert.equal(code(direct), "url_not_allowed", text(direct));
      assert.ok(asked.some((m) => m.includes(`127.0.0.1:${away.port}`)), "the host was asked");
      assert.deepEqual(away.log, []);
    },
  );

  test("other spellings of the loopback address are judged as loopback", { timeout: 60_000 }, async () => {
    for (
      const host of [
        "2130706433",
        "0x7f.0.0.1",
        "0177.0.0.1",
        "127.1",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "localhost",
      ]
    ) {
      const result = await call("browser_navigate", { url: `http://${host}:${away.port}/spelled` });
      assert.ok(result.isError, `${host}: ${text(result)}`);
      assert.match(code(result) ?? "", /url_not_allowed|permission_denied/, host);
    }
    assert.deepEqual(away.log, []);
  });

  test("file: inside the workspace opens, outside is refused, also as a subframe", { timeout: 60_000 }, async () => {
    await ok("browser_navigate", { url: `file://${dir}/local.html` });
    const snapshot = await ok("browser_snapshot");
    assert.match(snapshot, /workspace page/);
    assert.match(await ok("browser_console_messages"), /\[blocked\] file:\/\/\/etc\/hostname/);
    assert.equal(code(await call("browser_navigate", { url: "file:///etc/hostname" })), "outside_workspace");
    assert.equal(code(await call("browser_navigate", { url: "file://otherhost/etc/hostname" })), "url_not_allowed");
    assert.equal(code(await call("browser_navigate", { url: "javascript:alert(1)" })), "url_not_allowed");
  });

  test("a crashed browser gives browser_crashed once, then a new browser", { timeout: 60_000 }, async () => {
    await ok("browser_navigate", { url: `${site.base}/form` });
    const pids = descendantsWith(BROWSER_MARKER);
    assert.ok(pids.length > 0, "browser processes found");
    // Inside bubblewrap the browser sees no secrets of this machine and none of /tmp but its own folders.
    const browserPid = pids.find((pid) => /chromium/.test(readFileSync(`/proc/${pid}/comm`, "utf8")));
    assert.ok(browserPid, "the chromium process");
    const root = `/proc/${browserPid}/root`;
    assert.equal(existsSync(`${root}/usr/bin`), true);
    for (const hidden of ["/root", "/home", "/work", "/srv", "/opt", "/var", "/mnt", "/media"]) {
      assert.equal(existsSync(`${root}${hidden}`), false, hidden);
    }
    // The system configuration is there, its credential files masked (an empty, unreadable node).
    assert.equal(existsSync(`${root}/etc/passwd`), true);
    assert.equal(statSync(`${root}/etc/shadow`).size, 0, "/etc/shadow is masked");
    // Only the browser's own folder, the workspace and its temp dir (all named toolfence-…) are in its /tmp.
    assert.deepEqual(readdirSync(`${root}/tmp`).filter((name) => !name.startsWith("toolfence-")), []);
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    // The browser is gone once none of its processes is left; its context's close event follows.
    for (let i = 0; i < 200 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 25));
    await new Promise((r) => setTimeout(r, 300));
    const crashed = await call("browser_snapshot");
    assert.equal(code(crashed), "browser_crashed", text(crashed));
    assert.match(await ok("browser_navigate", { url: `${site.base}/form` }), /status 200/);
  });

  test("browser_close ends the processes; closing the session leaves none behind", { timeout: 60_000 }, async () => {
    const first = descendantsWith(BROWSER_MARKER);
    assert.ok(first.length > 0);
    assert.equal(await ok("browser_close"), "Closed the browser.");
    // The sandbox's last processes are killed as its init ends, which a loaded machine may finish a moment after the
    // close is answered (one CI run saw one still alive): gone within a bound, never left running.
    for (let i = 0; i < 200 && first.some(alive); i++) await new Promise((r) => setTimeout(r, 25));
    assert.deepEqual(first.filter(alive), []);
    await ok("browser_navigate", { url: `${site.base}/form` });
    const second = descendantsWith(BROWSER_MARKER);
    assert.ok(second.length > 0);
    await served.close();
    for (let i = 0; i < 200 && second.some(alive); i++) await new Promise((r) => setTimeout(r, 25));
    assert.deepEqual(second.filter(alive), []);
    assert.deepEqual(away.log, []);
  });
});
