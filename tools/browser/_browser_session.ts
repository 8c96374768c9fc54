// One browser per session: started on first use behind the egress proxy (and
// inside bubblewrap where it can run), one persistent context in a fresh
// profile folder, closed with the session. A browser that died is noticed, the
// call that saw it gets `browser_crashed`, and the next call starts a new one.

import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { Buffer } from "node:buffer";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BrowserContext, Download, Page } from "playwright-core";
import { textPrefix, ToolError } from "@toolfence/core";
import { readProgramFile, removeProgramFolder } from "@toolfence/policy";
import type { SessionBase as Session } from "@toolfence/core";
import { Destinations } from "./_destinations.ts";
import { type BlockedRequest, type EgressProxy, startEgressProxy } from "./_egress_proxy.ts";
import { findBrowser } from "./_launch.ts";
import { openFileOnly } from "../_shared/fs_open.ts";
import { ByteBudget } from "../_shared/byte_budget.ts";
import { untilAborted } from "../_shared/abort.ts";
import type { BrowserOptions, Browsers, PageEvent } from "./browsers.ts";

const MAX_EVENTS = 500;
/** The largest download kept in the temp dir by default (it passes through memory on its way there). */
const MAX_DOWNLOAD_BYTES = 256 << 20;
/** A session's downloads, kept and in progress together, come to at most this many times the largest one's bytes. */
const SESSION_DOWNLOADS_FACTOR = 4;
/** How often the browser's downloads folder is measured while a download runs. */
const DOWNLOAD_WATCH_MS = 100;
/** How long a download waits for a person's answer where the policy asks one about its path. */
const DOWNLOAD_QUESTION_MS = 120_000;
/** The most tabs a session's browser holds: a window a page opens beyond them is closed at once. */
export const MAX_TABS = 20;

/**
 * The most browsers running at once for one workspace (its real path): a session's, its sub-agents' and every
 * session of a tenant (each tenant has its own workspace) together. A browser has no cgroup (it outlives every call),
 * so it is outside the workspace's shared memory and process limits that bound the commands of all those sessions:
 * before, each session started its own, and one tenant's 32 sessions ran 32 Chromiums of up to 20 tabs each.
 */
export const MAX_WORKSPACE_BROWSERS = 4;

// The browsers running or starting, by workspace real path: a place is checked and taken in one synchronous step, so
// that sessions starting at once cannot all pass the check, and given back once the browser is gone (or failed to
// start).
const runningBrowsers = new Map<string, number>();

function takeBrowserPlace(workdir: string): () => void {
  const running = runningBrowsers.get(workdir) ?? 0;
  if (running >= MAX_WORKSPACE_BROWSERS) {
    throw new ToolError(
      `Already ${MAX_WORKSPACE_BROWSERS} browsers run for this workspace (the browsers of its sessions together)`,
      {
        code: "too_many_browsers",
        recoveryHint: "Close the browser of another session (browser_close) or end a session, then try again.",
        details: { max: MAX_WORKSPACE_BROWSERS },
      },
    );
  }
  runningBrowsers.set(workdir, running + 1);
  let given = false;
  return () => {
    if (given) return;
    given = true;
    const left = (runningBrowsers.get(workdir) ?? 1) - 1;
    if (left > 0) runningBrowsers.set(workdir, left);
    else runningBrowsers.delete(workdir);
  };
}

/** The largest workspace file a file: page (or its image, script, style) is given. */
const MAX_FILE_PAGE_BYTES = 64 << 20;

/**
 * The most bytes of workspace files that the file: answers of one browser hold at once: one largest file's worth.
 * An answer costs about seven times its bytes on its way to the browser (the bytes, Playwright's base64 of them, the
 * protocol message): before, a workspace page with 24 images of one 16 MiB file (`big.png?1`, `big.png?2`, ...) took
 * the server from 84 MiB to 2.8 GB, and more images or a bigger file past the machine's memory. Past the budget an
 * answer waits, first come first served.
 */
const BROWSER_FILE_PAGES_BYTES = MAX_FILE_PAGE_BYTES;
/**
 * The most bytes the file: answers of every browser of this process hold at once (all sessions and tenants share
 * the server's memory): two browsers' worth, so that one page's thousand answers, which wait in its own browser's
 * budget first, hold up another browser's by at most one budget.
 */
const FILE_PAGES_BUDGET_BYTES = 2 * BROWSER_FILE_PAGES_BYTES;
const filePagesBudget = new ByteBudget(FILE_PAGES_BUDGET_BYTES);
/** The media type of a file: page's bytes, by the file's extension. */
const FILE_PAGE_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".htm": "text/html; charset=utf-8",
  ".xhtml": "application/xhtml+xml",
  ".svg": "image/svg+xml",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/plain; charset=utf-8",
  ".xml": "application/xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".pdf": "application/pdf",
  ".wasm": "application/wasm",
};

/** A file: request's answer. */
interface FilePage {
  body: string | Buffer;
  contentType: string;
  /** Gives back the answer's share of {@linkcode filePagesBudget} once it was sent. */
  release?: () => void;
}

/** The most bytes of one name in a path (Linux's NAME_MAX). */
const NAME_MAX_BYTES = 255;

/**
 * `name` cut to at most `maxBytes` of UTF-8, its extension kept (when it has one of at most 32 bytes) and never a
 * surrogate pair split. A page's download may suggest a name of 255 bytes, and the time put before it to keep it made
 * the name too long to write: the download was lost (`names at most 255 bytes`).
 */
function fittedName(name: string, maxBytes: number): string {
  const bytes = (text: string) => Buffer.byteLength(text, "utf8");
  if (bytes(name) <= maxBytes) return name;
  const extension = path.extname(name);
  const kept = extension && bytes(extension) <= 32 ? extension : "";
  let stem = textPrefix(name.slice(0, name.length - kept.length), maxBytes);
  while (stem && bytes(stem) + bytes(kept) > maxBytes) stem = textPrefix(stem, stem.length - 1);
  return stem + kept;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/**
 * What one browser holds beside its processes: its folder (profile, cookies, downloads), its egress proxy and its
 * place among its workspace's browsers. Each browser's own, given back by {@linkcode SessionBrowser} once that browser
 * is gone, whichever browser of the session runs by then.
 */
interface Held {
  readonly dir: string;
  proxy?: EgressProxy;
  place?: () => void;
  /** The giving back, once begun. */
  released?: Promise<void>;
}

/** The marker argument that names a session's browser processes (tests find them by it). */
export const BROWSER_MARKER = "--toolfence-browser=";

/** The browser of one session. */
export class SessionBrowser {
  readonly session: Session;
  readonly options: BrowserOptions;
  readonly destinations: Destinations;
  /** The events seen so far, oldest first, at most 500. */
  readonly events: PageEvent[] = [];
  /** How many events were ever recorded. */
  eventCount = 0;
  /** Whether bubblewrap wraps the current browser. */
  sandboxed = false;
  /** The marker of the current browser's processes. */
  marker = "";
  #context?: BrowserContext;
  #starting?: Promise<BrowserContext>;
  /** What the current browser holds. */
  #held?: Held;
  /** What each browser started holds, by its context. */
  readonly #heldBy = new WeakMap<BrowserContext, Held>();
  #current?: Page;
  #crashed = false;
  #closing = false;
  /** The downloads in progress, and the timer that measures them. */
  readonly #downloading = new Set<Download>();
  #downloadWatch?: ReturnType<typeof setInterval>;
  /** The bytes of workspace files this session's file: answers hold at once (see BROWSER_FILE_PAGES_BYTES). */
  readonly #filePagesBudget = new ByteBudget(BROWSER_FILE_PAGES_BYTES);
  /** The bytes of the downloads kept for this session so far. */
  #keptBytes = 0;

  /** The largest download kept, and the most bytes the session's downloads come to together. */
  readonly #maxDownload: number;
  readonly #maxSessionDownloads: number;

  constructor(session: Session, options: BrowserOptions) {
    this.session = session;
    this.options = options;
    this.#maxDownload = options.maxDownloadBytes ?? MAX_DOWNLOAD_BYTES;
    this.#maxSessionDownloads = SESSION_DOWNLOADS_FACTOR * this.#maxDownload;
    this.destinations = new Destinations(session, options);
  }

  /** Records an event, dropping the oldest beyond the limit. */
  record(kind: string, text: string): void {
    this.eventCount++;
    this.events.push({ kind, text: text.length > 2000 ? text.slice(0, 2000) + "…" : text });
    if (this.events.length > MAX_EVENTS) this.events.splice(0, this.events.length - MAX_EVENTS);
  }

  /** Whether a browser is running. */
  get running(): boolean {
    return this.#context !== undefined;
  }

  /** The context, starting the browser if none runs. */
  context(): Promise<BrowserContext> {
    if (this.session.closed) {
      return Promise.reject(new ToolError("The session is closed", { code: "session_closed", recoverable: false }));
    }
    if (this.#context) return Promise.resolve(this.#context);
    if (this.#crashed) {
      // The browser died between calls: say so once, so that the model knows its pages are gone.
      this.#crashed = false;
      return Promise.reject(crashed());
    }
    this.#starting ??= this.#start().finally(() => (this.#starting = undefined));
    return this.#starting;
  }

  /** The current tab, opening one if there is none. */
  async page(): Promise<Page> {
    const context = await this.context();
    if (this.#current && !this.#current.isClosed()) return this.#current;
    this.#current = context.pages().at(-1) ?? await context.newPage();
    return this.#current;
  }

  /** The open tabs, in order. */
  async pages(): Promise<Page[]> {
    return (await this.context()).pages();
  }

  /** Makes `page` the current tab. */
  select(page: Page): void {
    this.#current = page;
  }

  /**
   * Runs `action` with the current tab; a browser that dies meanwhile ends the
   * call with `browser_crashed` (the next call starts a new browser), and the
   * call's signal ends it with the abort reason.
   */
  async withPage<T>(signal: AbortSignal, action: (page: Page) => Promise<T>): Promise<T> {
    this.destinations.newCall(signal);
    const page = await this.page();
    try {
      return await untilAborted(action(page), signal);
    } catch (error) {
      if (this.#crashed || (!this.#context && !this.#closing)) {
        this.#crashed = false;
        throw crashed(error);
      }
      // A page whose script never yields (while (true) {}) holds its tab's renderer: every later call on it timed out
      // too, a navigation elsewhere included. Such a tab is closed, and the next call opens a new one.
      if ((timedOut(error) || signal.aborted) && !page.isClosed() && !(await responds(page))) {
        const url = page.url();
        this.record("unresponsive", `${url} stopped responding; its tab was closed`);
        if (this.#current === page) this.#current = undefined;
        await page.close({ runBeforeUnload: false }).catch(() => {});
        throw new ToolError(
          `The page ${url} stopped responding (a script that never yields) and its tab was closed`,
          {
            code: "page_unresponsive",
            recoveryHint: "The next browser call opens a new tab; navigate again with browser_navigate.",
            cause: error,
          },
        );
      }
      throw error;
    }
  }

  async #start(): Promise<BrowserContext> {
    const executable = findBrowser(this.options.executablePath);
    // Its real path (TMPDIR may pass through a link): a download is read back in its pinned folder by that path.
    const dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-browser-")));
    // This browser's own, given back with it (never through the session's fields, which a browser started after a
    // browser_close began may hold by the time that close ends).
    const held: Held = { dir };
    try {
      held.place = takeBrowserPlace(this.session.workspace.workdir);
      const credentials = { username: "toolfence", password: crypto.randomUUID() };
      const proxy = held.proxy = await startEgressProxy(
        (scheme, host, port) => this.destinations.judgePageHost(scheme, host, port),
        (blocked: BlockedRequest) => this.record("blocked", `${blocked.url}: ${blocked.reason}`),
        credentials,
      );
      // Through the policy's process door: the one read view, hidden paths masked, its own folder writable,
      // the workspace read-only for file: pages (its temp dir too, where downloads land).
      const launcher = await this.session.policy.processes.launcher({
        executable,
        privateDir: dir,
        readable: [this.session.workspace.workdir, await this.session.workspace.tempDir()],
        network: true,
        ...(this.options.sandbox !== undefined ? { sandbox: this.options.sandbox } : {}),
      });
      this.sandboxed = launcher.sandboxed;
      this.marker = crypto.randomUUID();
      const viewport = this.options.viewport ?? { width: 1000, height: 700 };
      // Loaded on first use: importing playwright-core reads the home folder, which
      // programs that never open a browser must not need permission for.
      const { chromium } = await importPlaywright();
      const context = await chromium.launchPersistentContext(path.join(dir, "profile"), {
        executablePath: launcher.path,
        headless: true,
        viewport,
        acceptDownloads: true,
        downloadsPath: path.join(dir, "downloads"),
        serviceWorkers: "block",
        // Loopback goes through the proxy too, so that it is judged.
        proxy: { server: `http://127.0.0.1:${proxy.port}`, bypass: "<-loopback>", ...credentials },
        // The browser gets no secrets from the environment.
        env: { HOME: dir, TMPDIR: dir, LANG: "C.UTF-8", PATH: "/usr/bin:/bin" },
        args: [
          // WebRTC's UDP would bypass the proxy. (No second --disable-features: it would replace playwright's.)
          "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
          `${BROWSER_MARKER}${this.marker}`,
        ],
        timeout: 30_000,
      });
      context.setDefaultTimeout(10_000);
      context.setDefaultNavigationTimeout(30_000);
      await context.route(() => true, async (route) => {
        const url = new URL(route.request().url());
        if (url.protocol !== "file:") return route.fallback();
        let page: FilePage;
        try {
          page = await this.#filePage(url);
        } catch (error) {
          this.record("blocked", `${url.href}: ${(error as Error).message}`);
          return route.abort("blockedbyclient");
        }
        try {
          return await route.fulfill({ status: 200, body: page.body, contentType: page.contentType });
        } finally {
          page.release?.();
        }
      });
      context.on("page", (page) => this.#watch(page));
      for (const page of context.pages()) this.#watch(page);
      this.#heldBy.set(context, held);
      context.on("close", () => {
        void this.#release(held);
        if (this.#context !== context) return;
        this.#context = undefined;
        this.#held = undefined;
        this.#current = undefined;
        if (!this.#closing) this.#crashed = true;
        this.#forgetDownloads();
      });
      this.#context = context;
      this.#held = held;
      return context;
    } catch (error) {
      await this.#release(held);
      if (error instanceof ToolError) throw error;
      throw new ToolError(`The browser ${executable} did not start: ${(error as Error).message.split("\n")[0]}`, {
        code: "browser_launch_failed",
        recoverable: false,
        details: { executable, error: (error as Error).message },
        cause: error,
      });
    }
  }

  // A file: request is answered here, with bytes the file door read: judged and opened in one step (in its folder
  // pinned at the real path judged, never through a link swapped in since). Were the browser left to open the path
  // itself once it was judged, a folder on it swapped for a link in between led the browser outside the workspace
  // (without the OS sandbox, to any file the server can read; with it, past the policy's hidden paths' judgement).
  async #filePage(url: URL): Promise<FilePage> {
    await this.destinations.judgeFile(url);
    const files = this.session.policy.files;
    const shown = fileURLToPath(url);
    const target = await files.resolve(shown);
    if (target.stat?.isDirectory()) {
      const base = shown.endsWith("/") ? shown : `${shown}/`;
      const items = files.entries(target)
        .map((entry) => entry.name + (entry.isDirectory() ? "/" : ""))
        .sort()
        .map((name) => `<li><a href="${escapeHtml(pathToFileURL(base + name).href)}">${escapeHtml(name)}</a></li>`);
      return {
        body: `<!doctype html><title>${escapeHtml(base)}</title><h1>Index of ${escapeHtml(base)}</h1>` +
          `<ul>${items.join("")}</ul>`,
        contentType: "text/html; charset=utf-8",
      };
    }
    const tooLarge = (size: number) => {
      if (size <= MAX_FILE_PAGE_BYTES) return;
      throw new ToolError(`${shown} has more than ${MAX_FILE_PAGE_BYTES} bytes, too many for a file: page`, {
        code: "file_too_large",
        kind: "semantic",
      });
    };
    // Its share of the browser's and the process's budgets is taken before it is opened (a page's thousand requests wait without a
    // descriptor each), by the size resolved, and taken again by the size opened when the file grew in between.
    const resolvedSize = target.stat?.size ?? 0;
    tooLarge(resolvedSize);
    const take = async (bytes: number) => {
      const own = await this.#filePagesBudget.take(bytes);
      const all = await filePagesBudget.take(bytes);
      return () => (all(), own());
    };
    let release = await take(Math.max(1, resolvedSize));
    try {
      const opened = await openFileOnly(files, target, shown);
      try {
        tooLarge(opened.stat.size);
        if (opened.stat.size > resolvedSize) {
          release();
          release = await take(opened.stat.size);
        }
        const bytes = await opened.handle.readFile();
        const type = FILE_PAGE_TYPES[path.extname(target.path).toLowerCase()] ?? "application/octet-stream";
        return { body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), contentType: type, release };
      } finally {
        await opened.handle.close();
      }
    } catch (error) {
      release();
      throw error;
    }
  }

  #watch(page: Page): void {
    // A window beyond the cap is closed before anything else sees it: a page's window.open loop would otherwise
    // open tabs without bound (each a renderer), and a navigation waiting on the page timed out meanwhile.
    const context = page.context();
    if (context.pages().length > MAX_TABS) {
      this.record(
        "tab-closed",
        `a window the page opened (${page.url()}): ${MAX_TABS} tabs are open, the most allowed`,
      );
      void page.close().catch(() => {});
      return;
    }
    page.on("console", (m) => this.record(`console.${m.type()}`, m.text()));
    page.on("pageerror", (e) => this.record("pageerror", e.message));
    page.on("requestfailed", (r) => this.record("requestfailed", `${r.url()}: ${r.failure()?.errorText ?? "failed"}`));
    page.on("crash", () => this.record("crash", page.url()));
    page.on("download", async (download) => {
      this.#downloading.add(download);
      this.#downloadWatch ??= setInterval(() => void this.#measureDownloads(), DOWNLOAD_WATCH_MS);
      if (this.#keptBytes >= this.#maxSessionDownloads) this.#cancelDownloads(this.#keptBytes);
      try {
        this.record("download", `${download.url()} saved to ${await this.#keep(download)}`);
      } catch (error) {
        this.record("download", `${download.url()} failed: ${(error as Error).message}`);
      } finally {
        this.#stopWatching(download);
        await download.delete().catch(() => {});
      }
    });
  }

  #stopWatching(download?: Download): void {
    if (download) this.#downloading.delete(download);
    if (this.#downloading.size > 0 || this.#downloadWatch === undefined) return;
    clearInterval(this.#downloadWatch);
    this.#downloadWatch = undefined;
  }

  // Chromium writes a download into the browser's folder as it arrives, and MAX_DOWNLOAD_BYTES was checked only once
  // it had finished: a page's 700 MiB download lay whole on disk before it was refused (and any size would have, with
  // nothing but the disk to stop it where no sandbox's file size limit applies). While downloads run, their folder is
  // measured (by lstat, never through a link): one file past maxDownloadBytes, or all of them with the session's kept
  // downloads past four times it, cancels every download in progress, which Chromium then deletes. Before
  // that session cap, a page that started a 200 MiB download every 2.5 s had 1,200 MiB kept in the temp dir after 15 s
  // (one navigation, no other call), and more for as long as it stayed open.
  async #measureDownloads(): Promise<void> {
    const dir = this.#held?.dir;
    if (!dir || this.#downloading.size === 0) return this.#stopWatching();
    const folder = path.join(dir, "downloads");
    let largest = 0;
    let total = 0;
    for (const name of await fsp.readdir(folder).catch(() => [] as string[])) {
      const size = (await fsp.lstat(path.join(folder, name)).catch(() => undefined))?.size ?? 0;
      largest = Math.max(largest, size);
      total += size;
    }
    if (largest > this.#maxDownload) this.#cancelDownloads(largest);
    else if (this.#keptBytes + total > this.#maxSessionDownloads) this.#cancelDownloads(this.#keptBytes + total);
  }

  #cancelDownloads(bytes: number): void {
    for (const download of this.#downloading) {
      this.record(
        "download",
        `${download.url()} was cancelled at ${bytes} bytes: a download may have at most ${this.#maxDownload} bytes, ` +
          `and the session's downloads (kept and in progress) ${this.#maxSessionDownloads} together`,
      );
      this.#downloading.delete(download);
      void download.cancel().catch(() => {});
    }
    this.#stopWatching();
  }

  // A finished download, kept in the session temp dir's `output/downloads` through the file door. `output` is the
  // process door's captures folder, read-only inside a sandboxed command (before, downloads lay in the temp dir's
  // `downloads`, and a command could rewrite a kept download before the model read it). Without the sandbox the
  // commands may still change it, so a `downloads` made a link to a folder outside must be refused, not followed (as
  // Playwright's saveAs, a copy by path, would). The browser wrote it into its own folder first.
  async #keep(download: Download): Promise<string> {
    const name = path.basename(download.suggestedFilename()).replace(/^\.+/, "_") || "download";
    const stamp = `${Date.now()}-`;
    const named = path.join(
      await this.session.workspace.tempDir(),
      "output",
      "downloads",
      stamp + fittedName(name, NAME_MAX_BYTES - Buffer.byteLength(stamp)),
    );
    const files = this.session.policy.files;
    const target = await files.resolve(named, { access: "write" });
    await files.authorize(target, "write", AbortSignal.timeout(DOWNLOAD_QUESTION_MS));
    // The sandboxed browser wrote it and could have made it a link to a file only the server may read.
    const bytes = await readProgramFile(await download.path(), this.#maxDownload);
    if (this.#keptBytes + bytes.byteLength > this.#maxSessionDownloads) {
      throw new ToolError(
        `the session's downloads would come to more than ${this.#maxSessionDownloads} bytes with this one`,
        { code: "file_too_large", kind: "semantic" },
      );
    }
    this.#keptBytes += bytes.byteLength;
    await files.write(target, bytes);
    return target.path;
  }

  /**
   * Closes the browser (if it runs) and frees its files; the next call starts a new one. What is freed is what the
   * closed browser holds: before, the session's fields were read once the close ended, and a call that started the
   * next browser meanwhile (browser_close and browser_navigate at once) had put that browser's there. The closed
   * browser's folder (its profile's cookies and storage, its downloads) then stayed in the temp folder after the
   * session ended, one more for each such close, and the new browser's was removed under it.
   */
  async close(): Promise<void> {
    const context = this.#context;
    this.#closing = true;
    try {
      if (this.#starting) await this.#starting.catch(() => {});
      const current = this.#context ?? context;
      const held = current && this.#heldBy.get(current);
      if (this.#context === current) {
        this.#context = undefined;
        this.#held = undefined;
        this.#current = undefined;
      }
      await current?.close().catch(() => {});
      if (held) await this.#release(held);
    } finally {
      this.#forgetDownloads();
      this.#closing = false;
    }
  }

  #forgetDownloads(): void {
    this.#downloading.clear();
    this.#stopWatching();
  }

  /** Gives back what a browser held, once (a second call waits for the first). */
  #release(held: Held): Promise<void> {
    held.released ??= (async () => {
      held.place?.();
      await held.proxy?.close();
      // Never fs.rm: the sandboxed browser writes here and could swap a folder for a link while it goes, and Node's
      // recursive rm follows it (tests/policy/program_folder_test.ts).
      await removeProgramFolder(held.dir).catch(() => {});
    })();
    return held.released;
  }
}

const bySession = new WeakMap<Browsers, WeakMap<Session, SessionBrowser>>();

/** The session's browser state under `browsers`, created (without starting a browser) on first use. */
export function browserOf(browsers: Browsers, session: Session): SessionBrowser {
  let sessions = bySession.get(browsers);
  if (!sessions) bySession.set(browsers, sessions = new WeakMap());
  let browser = sessions.get(session);
  if (!browser) {
    const created = new SessionBrowser(session, browsers.options);
    browser = created;
    sessions.set(session, created);
    session.onClose(() => created.close());
  }
  return browser;
}

// At load, playwright-core's bundled is-wsl probes /proc/sys/fs/binfmt_misc, which
// Deno lets only --allow-all read; its own switch defers the probe (to a
// Windows-only path), so that the browser runs under narrow flags.
async function importPlaywright(): Promise<typeof import("playwright-core")> {
  const had = process.env.__IS_WSL_TEST__;
  process.env.__IS_WSL_TEST__ = "1";
  try {
    return await import("playwright-core");
  } finally {
    if (had === undefined) delete process.env.__IS_WSL_TEST__;
    else process.env.__IS_WSL_TEST__ = had;
  }
}

function crashed(cause?: unknown): ToolError {
  return new ToolError(
    "The browser crashed (or was killed); its pages are lost and the next browser call starts a new one",
    {
      code: "browser_crashed",
      recoveryHint: "Navigate again with browser_navigate.",
      cause,
    },
  );
}

/** How long a page has to answer a trivial script before it counts as hung. */
const RESPONSE_MS = 2_000;

/** Whether `error`, or an error it was caused by, is one of Playwright's timeouts. */
function timedOut(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.name === "TimeoutError") return true;
  }
  return false;
}

/** Whether the page's main frame still runs a script within {@linkcode RESPONSE_MS}. */
async function responds(page: Page): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), RESPONSE_MS)));
  try {
    return await Promise.race([page.evaluate("1").then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
