// The browser group in the library: `withDefaults()` registers it with the
// other seven, the screenshot tool is listed only for a model with vision, and
// listing the tools starts no browser.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import { readFileSync } from "node:fs";
import http from "node:http";
import { Buffer } from "node:buffer";
import type { AddressInfo, Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { Session } from "../../../policy/session.ts";
import { autoHost, callbackHost } from "../../../policy/hosts.ts";
import { classifyAddress } from "../../../policy/egress/addresses.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { ToolBox } from "../../../toolbox.ts";
import { browserTools } from "../../../tools/browser/mod.ts";
import { MAX_FULL_PAGE_HEIGHT } from "../../../tools/browser/screenshot.ts";
import { BUILTIN_GROUPS } from "../../../tools/groups.ts";
import { BROWSER_MARKER, MAX_TABS } from "../../../tools/browser/_browser_session.ts";
import { MAX_PAGE_QUESTIONS } from "../../../tools/browser/_destinations.ts";
import { alive, descendantsWith, fixtureServer, forbiddenServer, noBrowser } from "./_fixtures.ts";
import { whileSwappedForLink } from "../../_link_swapper.ts";

test("withDefaults() registers all eight groups, the browser among them", { timeout: 60_000 }, () => {
  assert.deepEqual(
    Object.keys(BUILTIN_GROUPS),
    ["fs", "search", "patch", "cmd", "system", "framework", "diagnostic", "browser"],
  );
  const box = new ToolBox().withDefaults();
  const names = box.list({ capabilities: ["vision"] }).map((t) => t.name);
  assert.ok(names.includes("browser_navigate") && names.includes("browser_screenshot"));
  assert.ok(!box.list().map((t) => t.name).includes("browser_screenshot"), "no vision, no screenshot tool");
  for (const tool of box.list({ capabilities: ["vision"] }).filter((t) => t.name.startsWith("browser_"))) {
    assert.match(tool.description, /--allow-run.*--allow-net/s, tool.name);
  }
  assert.deepEqual(descendantsWith(BROWSER_MARKER), [], "listing tools starts no browser");
});

test("through the library, without the sandbox (sandbox: off), the browser works and ends with the session", {
  timeout: 60_000,
  skip: noBrowser,
}, async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
  const session = new Session({ workspace: dir });
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off" }));
    const opened = await box.call(session, "browser_navigate", { url: "data:text/html,<h1>Inline</h1>" });
    assert.equal(opened.status, "success", String(opened.error));
    assert.match(String((await box.call(session, "browser_snapshot", {})).output), /heading "Inline"/);
    const pids = descendantsWith(BROWSER_MARKER);
    assert.ok(pids.length > 0);
    assert.ok(pids.every((pid) => !readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0].endsWith("bwrap")));
    await session.close();
    assert.deepEqual(pids.filter(alive), []);
  } finally {
    await session.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("a download never follows a link the commands put in the temp dir's place for downloads", {
  timeout: 90_000,
  skip: noBrowser,
}, async () => {
  const away = await forbiddenServer();
  const site = await fixtureServer(away.base);
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-")));
  const outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-outside-")));
  const session = new Session({ workspace: dir });
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off", allow: [site.base] }));
    // What `ln -s <outside> <temp dir>/output/downloads` in a command without the sandbox does.
    await fs.mkdir(path.join(await session.workspace.tempDir(), "output"), { recursive: true });
    await fs.symlink(outside, path.join(await session.workspace.tempDir(), "output", "downloads"));
    assert.equal((await box.call(session, "browser_navigate", { url: `${site.base}/download` })).status, "success");
    const snapshot = String((await box.call(session, "browser_snapshot", {})).output);
    const ref = snapshot.match(/link "Get the file" \[ref=(\w+)\]/)?.[1];
    assert.ok(ref, snapshot);
    assert.equal((await box.call(session, "browser_click", { ref })).status, "success");
    let events = "";
    for (let i = 0; i < 100 && !/\[download\]/.test(events); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      events = String((await box.call(session, "browser_console_messages", {})).output);
    }
    assert.match(events, /\[download\] \S+ failed: .*not within the agent's workspace/);
    assert.deepEqual(await fs.readdir(outside), [], "nothing was written through the link");
  } finally {
    await session.close();
    await site.close();
    await away.close();
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(outside, { recursive: true, force: true });
  }
});

// Without the sandbox a file: request was judged, then opened by the browser by its path: with `d` swapped for a
// link to a folder outside the workspace in between, a frame of a workspace page showed the outside file's bytes.
test("a file: page never shows a file outside the workspace through a folder swapped for a link", {
  timeout: 120_000,
  skip: noBrowser,
}, async () => {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-")));
  const outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-outside-")));
  const session = new Session({ workspace: dir });
  try {
    await fs.mkdir(path.join(dir, "d"));
    await fs.writeFile(path.join(dir, "d", "page.html"), "<p>inside page</p>");
    await fs.writeFile(path.join(outside, "page.html"), "<p>OUTSIDE SECRET</p>");
    const frames = Array.from({ length: 12 }, () => `<iframe src="d/page.html"></iframe>`).join("");
    await fs.writeFile(path.join(dir, "index.html"), `<p>index</p>${frames}`);
    const box = new ToolBox().register(...browserTools({ sandbox: "off" }));
    const url = `file://${dir}/index.html`;
    assert.equal((await box.call(session, "browser_navigate", { url })).status, "success");
    assert.match(String((await box.call(session, "browser_snapshot", {})).output), /inside page/);
    // A folder's file: page lists its entries.
    const listed = await box.call(session, "browser_navigate", { url: `file://${dir}/d/` });
    assert.equal(listed.status, "success", String(listed.error));
    assert.match(String((await box.call(session, "browser_snapshot", {})).output), /page\.html/);
    let shown = 0;
    await whileSwappedForLink(dir, "d", outside, async () => {
      for (let i = 0; i < 8; i++) {
        const opened = await box.call(session, "browser_navigate", { url });
        assert.equal(opened.status, "success", String(opened.error));
        const snapshot = String((await box.call(session, "browser_snapshot", {})).output);
        assert.doesNotMatch(snapshot, /OUTSIDE SECRET/);
        if (/inside page/.test(snapshot)) shown++;
      }
    });
    // The race did not stop the workspace's own frames from loading.
    assert.ok(shown > 0, "no frame of the workspace loaded during the race");
  } finally {
    await session.close();
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(outside, { recursive: true, force: true });
  }
});

test("a page's window.open loop leaves at most MAX_TABS tabs, and browser_tabs new refuses past them", {
  timeout: 120_000,
  skip: noBrowser,
}, async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
  const session = new Session({ workspace: dir });
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off" }));
    const storm = `data:text/html,<p>storm</p><script>for (let i = 0; i < 60; i++) window.open("about:blank%23" + i)` +
      `</script>`;
    // The loop may hold the navigation up; what matters is what stays open.
    await box.call(session, "browser_navigate", { url: storm });
    await box.call(session, "browser_wait_for", { time: 2 });
    const listed = await box.call(session, "browser_tabs", {});
    assert.equal(listed.status, "success", String(listed.error));
    const count = Number(/^(\d+) tab\(s\)/.exec(String(listed.output))?.[1]);
    assert.ok(count <= MAX_TABS, `${count} tabs are open`);
    while (true) {
      const opened = await box.call(session, "browser_tabs", { action: "new" });
      if (opened.status !== "success") {
        assert.equal(opened.errorCode, "too_many_tabs", String(opened.error));
        break;
      }
      assert.ok(Number(/^(\d+) tab\(s\)/.exec(String(opened.output))?.[1]) <= MAX_TABS, String(opened.output));
    }
    const events = String((await box.call(session, "browser_console_messages", {})).output);
    assert.match(events, /tabs are open, the most allowed/);
  } finally {
    await session.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("browser_evaluate writes what a page's value holds (BigInts, cycles, non-finite numbers) instead of failing", {
  timeout: 120_000,
  skip: noBrowser,
}, async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
  const session = new Session({ workspace: dir });
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off", evaluate: "allow" }));
    const page = `data:text/html,<script>window.v = { n: 10n, when: new Date(0), nan: NaN }; v.self = v;</script>`;
    assert.equal((await box.call(session, "browser_navigate", { url: page })).status, "success");
    const result = await box.call(session, "browser_evaluate", { script: "window.v" });
    assert.equal(result.status, "success", String(result.error));
    const inside = String(result.output).split("\n").slice(2, -1).join("\n");
    assert.deepEqual(JSON.parse(inside), {
      n: "10n",
      when: "1970-01-01T00:00:00.000Z",
      nan: "NaN",
      self: "[Circular]",
    });
    const big = await box.call(session, "browser_evaluate", { script: "2n ** 70n" });
    assert.equal(big.status, "success", String(big.error));
    assert.match(String(big.output), /"1180591620717411303424n"/);
  } finally {
    await session.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("the session's policy network.deny stops the browser as it stops commands, whatever the tools' options", {
  timeout: 120_000,
  skip: noBrowser,
}, async () => {
  const away = await forbiddenServer();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
  const file = JSON.stringify({ network: { deny: [`127.0.0.1:${away.port}`] } });
  const rules = PolicyRules.fromLayers([parsePolicyFile("project", file, "project")], dir);
  // The person would allow anything asked: the deny rule must decide before a question.
  const session = new Session({ workspace: dir, rules, host: callbackHost({ choose: () => "allow" as never }) });
  try {
    for (const options of [{}, { allow: [`127.0.0.1:${away.port}`] }]) {
      const box = new ToolBox().register(...browserTools({ sandbox: "off", ...options }));
      const opened = await box.call(session, "browser_navigate", { url: `${away.base}/direct` });
      assert.equal(opened.errorCode, "url_not_allowed", String(opened.output ?? opened.error));
      const page = `data:text/html,<img src="${away.base}/img"><script>fetch("${away.base}/fetch")</script>`;
      assert.equal((await box.call(session, "browser_navigate", { url: page })).status, "success");
      await box.call(session, "browser_wait_for", { time: 0.5 });
    }
    assert.deepEqual(away.log, []);
  } finally {
    await session.close();
    await away.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("a page whose script never yields loses its tab, and the next navigation works", {
  timeout: 150_000,
  skip: noBrowser,
}, async () => {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-")));
  const session = new Session({ workspace: dir });
  try {
    await fs.writeFile(path.join(dir, "loop.html"), "<p>loop</p><script>while (true) {}</script>");
    await fs.writeFile(path.join(dir, "after.html"), "<p>after the loop</p>");
    const box = new ToolBox().register(...browserTools({ sandbox: "off" }));
    const hung = await box.call(session, "browser_navigate", { url: `file://${dir}/loop.html` });
    assert.equal(hung.errorCode, "page_unresponsive", String(hung.output ?? hung.error));
    const next = await box.call(session, "browser_navigate", { url: `file://${dir}/after.html` });
    assert.equal(next.status, "success", String(next.error));
    assert.match(String((await box.call(session, "browser_snapshot", {})).output), /after the loop/);
  } finally {
    await session.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("a screenshot renders at most the viewport's width and MAX_FULL_PAGE_HEIGHT, whatever size the page claims", {
  timeout: 150_000,
  skip: noBrowser,
}, async () => {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-")));
  const session = new Session({ workspace: dir, capabilities: ["vision"] });
  try {
    // 20,000 × 60,000 px, and a script that says the page is 10 px high.
    await fs.writeFile(
      path.join(dir, "big.html"),
      `<div role="img" aria-label="Huge" style="width:20000px;height:60000px;background:linear-gradient(red,blue)">` +
        `</div><script>Object.defineProperty(Element.prototype, "scrollHeight", { get: () => 10 })</script>`,
    );
    const box = new ToolBox().register(...browserTools({ sandbox: "off" }));
    assert.equal((await box.call(session, "browser_navigate", { url: `file://${dir}/big.html` })).status, "success");
    const snapshot = String((await box.call(session, "browser_snapshot", {})).output);
    const ref = /img "Huge" \[ref=(e\d+)\]/.exec(snapshot)?.[1];
    assert.ok(ref, snapshot);
    for (const args of [{ full_page: true }, { ref }]) {
      const shot = await box.call(session, "browser_screenshot", args);
      assert.equal(shot.status, "success", `${JSON.stringify(args)}: ${shot.error}`);
      const output = shot.output as { original_width: number; original_height: number };
      assert.ok(
        output.original_width <= 1000 && output.original_height <= MAX_FULL_PAGE_HEIGHT,
        JSON.stringify(output),
      );
    }
  } finally {
    await session.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

// This machine's own interface address in a range the judge calls public (this test machine's eth0 is 192.0.2.2; a
// server's may be a real public address): a host answering automatically allowed it as public, and a page read a
// server listening on every address, meant for this machine alone. Skipped where no interface has such an address.
const ownPublic = Object.values(os.networkInterfaces()).flat()
  .map((i) => i?.address ?? "")
  .find((address) => classifyAddress(address) === "public");

test("a page never reaches this machine through its own interface address, however public its range looks", {
  timeout: 120_000,
  skip: noBrowser || (ownPublic === undefined && "no interface of this machine has an address of a public range"),
}, async () => {
  const hits: string[] = [];
  const local = http.createServer((req, res) => {
    hits.push(req.url ?? "");
    res.setHeader("access-control-allow-origin", "*");
    res.end("LOCAL ONLY");
  });
  await new Promise<void>((resolve) => local.listen(0, "::", resolve));
  const port = (local.address() as AddressInfo).port;
  const there = `http://${ownPublic!.includes(":") ? `[${ownPublic}]` : ownPublic}:${port}`;
  const site = await fixtureServer(there);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
  const session = new Session({ workspace: dir, host: autoHost() });
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off", allow: [site.base] }));
    // A page's fetch, image, frame and navigation (the fixture's sneaky page), and the model's own navigation.
    assert.equal((await box.call(session, "browser_navigate", { url: `${site.base}/sneaky` })).status, "success");
    await box.call(session, "browser_wait_for", { time: 1 });
    const opened = await box.call(session, "browser_navigate", { url: `${there}/from-the-model` });
    assert.equal(opened.errorCode, "url_not_allowed", String(opened.output ?? opened.error));
    assert.match(String(opened.error), /this machine's own network interfaces|a loopback address, /);
    assert.deepEqual(hits, []);
  } finally {
    await session.close();
    await site.close();
    await new Promise((resolve) => local.close(resolve));
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("maxDownloadBytes must be a positive whole number of bytes", { timeout: 60_000 }, () => {
  for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => browserTools({ maxDownloadBytes: bad }), /maxDownloadBytes must be a positive whole number/);
  }
});

// A server of a page with one link and the download behind it: `mib` chunks of 1 MiB, one every `everyMs` (paced, so
// that a test does not depend on how fast this machine is, and each download lasts several of the 100 ms between two
// measures of the downloads in progress). `sent` counts the chunks written, of every download together.
async function downloadServer(link: string, mib: number, everyMs: number, headers: Record<string, string | number>) {
  const chunk = Buffer.alloc(1 << 20, 0x61);
  const counts = { sent: 0, ended: false };
  const server = http.createServer((req, res) => {
    if (req.url === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      return res.end(link);
    }
    res.writeHead(200, { "content-type": "application/octet-stream", ...headers });
    let mine = 0;
    const timer = setInterval(() => {
      if (res.writableNeedDrain) return;
      if (mine >= mib || res.destroyed) {
        clearInterval(timer);
        counts.ended ||= mine >= mib;
        return void res.end();
      }
      mine++;
      counts.sent++;
      res.write(chunk);
    }, everyMs);
    res.on("close", () => clearInterval(timer));
  });
  const connections = new Set<Socket>();
  server.on("connection", (socket) => {
    connections.add(socket);
    socket.on("close", () => connections.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    close: async () => {
      for (const socket of connections) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// A download was measured against its cap (256 MiB by default) only once finished: a page's 700 MiB download lay whole
// in the browser's folder first (any size would have, where no sandbox limits a file's size). Here the cap is 16 MiB
// (maxDownloadBytes), so that the test streams a few MiB, not a GiB.
test("a download is cancelled once it passes maxDownloadBytes, not written whole and refused afterwards", {
  timeout: 120_000,
  skip: noBrowser,
}, async () => {
  const MiB = 1 << 20;
  // 256 MiB at about 200 MiB/s.
  const server = await downloadServer(`<a id="a" href="/big">big</a>`, 256, 5, { "content-disposition": "attachment" });
  const base = server.base;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
  const session = new Session({ workspace: dir });
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off", allow: [base], maxDownloadBytes: 16 * MiB }));
    assert.equal((await box.call(session, "browser_navigate", { url: `${base}/` })).status, "success");
    const snapshot = String((await box.call(session, "browser_snapshot", {})).output);
    const ref = snapshot.match(/link "big" \[ref=(\w+)\]/)?.[1];
    assert.ok(ref, snapshot);
    await box.call(session, "browser_click", { ref });
    let events = "";
    for (let i = 0; i < 300 && !/\[download\] \S+ failed/.test(events); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      events = String((await box.call(session, "browser_console_messages", {})).output);
    }
    assert.match(events, /\[download\] \S+ was cancelled at \d+ bytes: a download may have at most 16777216 bytes/);
    const { sent, ended } = server.counts;
    assert.ok(!ended && sent < 160, `${sent} MiB were sent before the download stopped`);
  } finally {
    await session.close();
    await server.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

// Each download was capped, their number was not: a page that started a 200 MiB download every 2.5 s had 1,200 MiB
// kept in the temp dir after 15 s, from one navigation. Here a download may have 8 MiB (maxDownloadBytes), the
// session's 32 MiB together.
test("a session's downloads, kept and in progress, come to at most four times maxDownloadBytes", {
  timeout: 180_000,
  skip: noBrowser,
}, async () => {
  const MiB = 1 << 20;
  // Downloads of 7 MiB, 1 MiB every 50 ms.
  const server = await downloadServer(`<a id="a" href="/f" download="f.bin">file</a>`, 7, 50, {
    "content-length": 7 * MiB,
  });
  const base = server.base;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
  const session = new Session({ workspace: dir });
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off", allow: [base], maxDownloadBytes: 8 * MiB }));
    assert.equal((await box.call(session, "browser_navigate", { url: `${base}/` })).status, "success");
    const ref = String((await box.call(session, "browser_snapshot", {})).output).match(/link "file" \[ref=(\w+)\]/)
      ?.[1];
    assert.ok(ref);
    let events = "";
    for (let round = 1; round <= 5; round++) {
      await box.call(session, "browser_click", { ref });
      const done = () => (events.match(/\[download\] \S+ (saved to|failed)/g) ?? []).length >= round;
      for (let i = 0; i < 600 && !done(); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        events = String((await box.call(session, "browser_console_messages", {})).output);
      }
      assert.ok(done(), events);
    }
    assert.equal((events.match(/saved to/g) ?? []).length, 4, events);
    // The fifth is refused at its start where its announced length is seen in time, else cancelled as it arrives (a
    // CI run under Node 22 and load saw the first): either way by the session's cap.
    assert.match(
      events,
      /was cancelled at \d+ bytes: .*the session's downloads \(kept and in progress\) 33554432|failed: the session's downloads would come to more than 33554432 bytes with this one/,
    );
    const kept = path.join(await session.workspace.tempDir(), "output", "downloads");
    let total = 0;
    for (const name of await fs.readdir(kept)) total += (await fs.stat(path.join(kept, name))).size;
    assert.ok(total <= 32 * MiB, `${total} bytes kept`);
  } finally {
    await session.close();
    await server.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

// The folders (`--user-data-dir`'s parent) of the browsers this process runs now.
function browserFolders(): string[] {
  return [
    ...new Set(
      descendantsWith(BROWSER_MARKER).flatMap((pid) => {
        const dataDir = /--user-data-dir=([^\0]+)/.exec(readFileSync(`/proc/${pid}/cmdline`, "utf8"))?.[1];
        return dataDir ? [path.dirname(dataDir)] : [];
      }),
    ),
  ];
}

test(
  "browser_close racing a call that starts the next browser frees the closed one's folder, and the session's end the last",
  {
    timeout: 150_000,
    skip: noBrowser,
  },
  async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
    const session = new Session({ workspace: dir });
    const seen = new Set<string>();
    try {
      const box = new ToolBox().register(...browserTools({ sandbox: "off" }));
      const page = "data:text/html,<h1>x</h1>";
      // The next call may start its browser at any point of the close: a few delays cover the moments between.
      for (const delay of [0, 5, 20, 60]) {
        assert.equal((await box.call(session, "browser_navigate", { url: page })).status, "success");
        for (const folder of browserFolders()) seen.add(folder);
        const [closed, next] = await Promise.all([
          box.call(session, "browser_close", {}),
          new Promise((resolve) => setTimeout(resolve, delay)).then(() =>
            box.call(session, "browser_navigate", { url: page })
          ),
        ]);
        assert.equal(closed.status, "success", String(closed.error));
        assert.equal(next.status, "success", String(next.error));
        for (const folder of browserFolders()) seen.add(folder);
      }
      assert.ok(seen.size >= 4, [...seen].join(", "));
      await session.close();
      assert.deepEqual(descendantsWith(BROWSER_MARKER), []);
      // Each browser's folder (its profile's cookies and storage, its downloads) is gone with it.
      const left = [];
      for (const folder of seen) if (await fs.lstat(folder).catch(() => undefined)) left.push(folder);
      assert.deepEqual(left, []);
    } finally {
      await session.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
);

test("a workspace page's many requests for one big file hold the server's memory to a budget", {
  timeout: 150_000,
  skip: noBrowser,
}, async () => {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-")));
  const session = new Session({ workspace: dir });
  const MiB = 1 << 20;
  // 200 answers of 4 MiB each: before, each was read, base64-encoded and sent at once (about 30 MB apiece in flight).
  await fs.writeFile(path.join(dir, "big.png"), new Uint8Array(4 * MiB));
  const images = Array.from({ length: 200 }, (_, i) => `<img src="big.png?${i}">`).join("");
  await fs.writeFile(path.join(dir, "many.html"), `<p>many</p>${images}`);
  const rss = () => process.memoryUsage().rss;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 10);
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off" }));
    // The browser runs before the baseline is taken: its start is no part of what the page costs.
    assert.equal((await box.call(session, "browser_navigate", { url: "about:blank" })).status, "success");
    const before = rss();
    peak = before;
    const opened = await box.call(session, "browser_navigate", { url: `file://${dir}/many.html` });
    assert.equal(opened.status, "success", String(opened.error));
    await box.call(session, "browser_wait_for", { time: 1 });
    // Bounded by the budgets (0.5 to 0.7 GB measured, whatever the number of images); before, 2 GB here.
    assert.ok(peak - before < 1_300 * MiB, `the server grew by ${Math.round((peak - before) / MiB)} MiB`);
  } finally {
    clearInterval(sampler);
    await session.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("a download whose suggested name is as long as a name may be is kept, its name cut to fit", {
  timeout: 90_000,
  skip: noBrowser,
}, async () => {
  const names = ["A".repeat(300) + ".txt", "\u00fc".repeat(150) + ".txt"];
  const server = http.createServer((req, res) => {
    const index = Number(req.url?.slice(1));
    if (req.url === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      return res.end(names.map((_, i) => `<a href="/${i}">file ${i}</a>`).join(" "));
    }
    res.writeHead(200, {
      "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(names[index])}`,
    });
    res.end(`content ${index}`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
  const session = new Session({ workspace: dir });
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off", allow: [base] }));
    assert.equal((await box.call(session, "browser_navigate", { url: `${base}/` })).status, "success");
    const snapshot = String((await box.call(session, "browser_snapshot", {})).output);
    let events = "";
    for (const [i] of names.entries()) {
      const ref = snapshot.match(new RegExp(`link "file ${i}" \\[ref=(\\w+)\\]`))?.[1];
      assert.ok(ref, snapshot);
      await box.call(session, "browser_click", { ref });
      const done = () => (events.match(/\[download\] \S+ (saved to|failed)/g) ?? []).length > i;
      for (let wait = 0; wait < 300 && !done(); wait++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        events = String((await box.call(session, "browser_console_messages", {})).output);
      }
      assert.ok(done(), events);
    }
    assert.doesNotMatch(events, /\[download\] \S+ failed/);
    const kept = path.join(await session.workspace.tempDir(), "output", "downloads");
    const files = (await fs.readdir(kept)).sort();
    assert.equal(files.length, 2, files.join(", "));
    for (const name of files) {
      assert.ok(Buffer.byteLength(name) <= 255, name);
      assert.match(name, /^\d+-(A+|\u00fc+)\.txt$/);
      assert.match(await fs.readFile(path.join(kept, name), "utf8"), /^content [01]$/);
    }
  } finally {
    await session.close();
    await new Promise((resolve) => server.close(resolve));
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("under answers.elicitation refuse, the MCP client's yes lets the browser nowhere, as it lets no command", {
  timeout: 90_000,
  skip: noBrowser,
}, async () => {
  const away = await forbiddenServer();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
  const file = JSON.stringify({ answers: { elicitation: "refuse" } });
  const rules = PolicyRules.fromLayers([parsePolicyFile("project", file, "project")], dir);
  // A host that passes the client's answers on (a library's own host, or one a server was given by its options).
  const host = callbackHost({ choose: (request) => ({ choice: request.options[0].value, source: "client" }) });
  const session = new Session({ workspace: dir, rules, host });
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off" }));
    const opened = await box.call(session, "browser_navigate", { url: `${away.base}/direct` });
    assert.equal(opened.errorCode, "url_not_allowed", String(opened.output ?? opened.error));
    assert.deepEqual(away.log, []);
    // A person's answer still counts.
    const person = new Session({ workspace: dir, rules, host: callbackHost({ choose: (r) => r.options[0].value }) });
    try {
      assert.equal((await box.call(person, "browser_navigate", { url: `${away.base}/person` })).status, "success");
      assert.deepEqual(away.log, ["/person"]);
    } finally {
      await person.close();
    }
  } finally {
    await session.close();
    await away.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("under answers.elicitation once, the MCP client's yes to a destination holds for its browser call only", {
  timeout: 90_000,
  skip: noBrowser,
}, async () => {
  // Before, it held for the session: one yes, and every later call reached the destination without a question.
  const away = await forbiddenServer();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
  const rules = PolicyRules.fromLayers(
    [parsePolicyFile("project", '{"answers":{"elicitation":"once"}}', "project")],
    dir,
  );
  const asked: string[] = [];
  const host = callbackHost({
    choose: (request) => (asked.push(request.message), { choice: request.options[0].value, source: "client" }),
  });
  const session = new Session({ workspace: dir, rules, host });
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off" }));
    for (const page of ["/first", "/second"]) {
      const opened = await box.call(session, "browser_navigate", { url: `${away.base}${page}` });
      assert.equal(opened.status, "success", String(opened.error));
    }
    assert.deepEqual(away.log, ["/first", "/second"]);
    assert.equal(asked.length, 2, asked.join("\n"));
  } finally {
    await session.close();
    await away.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("a page causes at most MAX_PAGE_QUESTIONS questions between two browser calls; the model's own URL still asks", {
  timeout: 90_000,
  skip: noBrowser,
}, async () => {
  const images = Array.from({ length: 40 }, (_, i) => `<img src="http://x${i}.example.invalid/${i}.png">`).join("");
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<p>many hosts</p>${images}`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-lib-"));
  const asked: string[] = [];
  const host = callbackHost({ choose: (request) => (asked.push(request.message), "deny" as never) });
  const session = new Session({ workspace: dir, host });
  try {
    const box = new ToolBox().register(...browserTools({ sandbox: "off", allow: [base] }));
    assert.equal((await box.call(session, "browser_navigate", { url: `${base}/` })).status, "success");
    // Before, every one of the 40 hosts was asked about while the page loaded.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.ok(asked.length <= MAX_PAGE_QUESTIONS, `${asked.length} questions`);
    const events = String((await box.call(session, "browser_console_messages", {})).output);
    assert.match(events, /the page already caused 5 questions about destinations since the last browser call/);
    // A refusal by the budget is no answer: the model's own navigation to such a host asks.
    const before = asked.length;
    const opened = await box.call(session, "browser_navigate", { url: "http://chosen.example.invalid/" });
    assert.equal(opened.errorCode, "url_not_allowed");
    assert.equal(asked.length, before + 1, asked.join("\n"));
    assert.match(asked.at(-1)!, /chosen\.example\.invalid/);
  } finally {
    await session.close();
    await new Promise((resolve) => server.close(resolve));
    await fs.rm(dir, { recursive: true, force: true });
  }
});
