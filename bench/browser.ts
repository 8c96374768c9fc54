/**
 * The browser group against bare playwright-core, in one run: snapshot
 * (`ariaSnapshot({ mode: "ai" })`), click (by `aria-ref`) and viewport
 * screenshot latency, on the same fixture page served from 127.0.0.1 and the
 * same system Chromium. Bare playwright launches the browser directly with no
 * proxy; toolfence goes through the whole call pipeline (validation, policy,
 * result), its browser inside bubblewrap behind the judging proxy. Calls
 * alternate one by one; medians of the rounds' means; ratios against bare playwright.
 *
 * `deno run -A bench/browser.ts`
 *
 * @module
 */

import http from "node:http";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type net from "node:net";
import { chromium } from "playwright-core";
import { Session } from "../policy/session.ts";
import { ToolBox } from "../toolbox.ts";
import { browserTools } from "../tools/browser/mod.ts";
import { median, printRatios } from "./_measure.ts";
import { sized } from "./_report.ts";

const ROUNDS = sized(9, 1);
const PER_ROUND = sized(15, 1);

const PAGE = `<!doctype html><title>Bench</title><h1>Bench page</h1><nav>${
  Array.from({ length: 40 }, (_, i) => `<a href="#s${i}">Section ${i}</a>`).join(" ")
}</nav><form><label>Name <input name="n"></label><select><option>a</option><option>b</option></select>
<button type="button" id="b" onclick="this.dataset.n = (+(this.dataset.n || 0) + 1)">Count</button></form>${
  Array.from({ length: 40 }, (_, i) => `<h2 id="s${i}">Section ${i}</h2><p>Some text for section ${i}.</p>`).join("")
}`;

const server = http.createServer((_req, res) => res.end(PAGE));
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;

const executablePath = "/usr/bin/chromium-headless-shell";
const bare = await chromium.launch({ executablePath });
const page = await (await bare.newContext({ viewport: { width: 1000, height: 700 } })).newPage();
await page.goto(`${base}/`);
const bareRef = (await page.ariaSnapshot({ mode: "ai" })).match(/button "Count" \[ref=(e\d+)\]/)![1];

const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-bench-browser-"));
const session = new Session({ workspace: dir, capabilities: ["vision"] });
const box = new ToolBox().register(...browserTools({ allow: [base], executablePath }));
const must = async (name: string, args: Record<string, unknown> = {}) => {
  const result = await box.call(session, name, args);
  if (result.status !== "success") throw new Error(`${name}: ${result.error}`);
  session.takeDeferredImages();
  return String(result.output);
};
await must("browser_navigate", { url: `${base}/` });
const ref = (await must("browser_snapshot")).match(/button "Count" \[ref=(e\d+)\]/)![1];

const pairs: [string, [string, () => Promise<unknown>][]][] = [
  ["snapshot", [
    ["playwright-core", () => page.ariaSnapshot({ mode: "ai" })],
    ["toolfence", () => must("browser_snapshot")],
  ]],
  ["click", [
    ["playwright-core", () => page.locator(`aria-ref=${bareRef}`).click()],
    ["toolfence", () => must("browser_click", { ref })],
  ]],
  ["screenshot", [
    ["playwright-core", () => page.screenshot()],
    ["toolfence", () => must("browser_screenshot")],
  ]],
];

console.log(`Chromium ${bare.version()}, ${ROUNDS} rounds of ${PER_ROUND} alternating calls, median ms per call`);
for (const [what, candidates] of pairs) {
  const samples = candidates.map(() => [] as number[]);
  for (const [, fn] of candidates) for (let i = 0; i < sized(5, 0); i++) await fn(); // warm-up, none at the tiny size
  // Calls alternate one by one, so that the shared machine's drift hits both alike.
  for (let r = 0; r < ROUNDS; r++) {
    const totals = candidates.map(() => 0);
    for (let i = 0; i < PER_ROUND; i++) {
      for (let c = 0; c < candidates.length; c++) {
        const start = performance.now();
        await candidates[c][1]();
        totals[c] += performance.now() - start;
      }
    }
    totals.forEach((t, c) => samples[c].push(t / PER_ROUND));
  }
  printRatios(what, candidates.map(([name], c) => [name, median(samples[c])]), "ms", "playwright-core", {
    toolfence: "≤ 1.2x",
  });
}

const started = performance.now();
await must("browser_close");
await must("browser_navigate", { url: `${base}/` });
console.log(
  `\ncold start (launch in bubblewrap + proxy + first navigation): ${(performance.now() - started).toFixed(0)} ms`,
);

await session.close();
await bare.close();
server.close();
await fs.rm(dir, { recursive: true, force: true });
