/**
 * The web console: a small web app (on Hono) where a person answers the
 * questions waiting for a person (per tenant, updated live by Server-Sent
 * Events) and reads the audit log (filtered, on a timeline, a call's detail
 * with its result and its file changes as a diff).
 *
 * Access: sign-in with a console token (a token file entry with only the
 * `console` scope, or an OAuth access token granting `console`), a session
 * cookie, a CSRF token on every POST and the Host and Origin checks of the
 * HTTP server. A person sees only their tenant's questions and records. An
 * agent's token (one holding a tool scope) is refused.
 *
 * @module
 */

import type { Context } from "hono";
import type { TokenFile } from "../_http_tokens.ts";
import type { JwtVerifier } from "../_http_jwt.ts";
import { listen, type Listener } from "../_http_listen.ts";
import { originPolicy, refusedOrigin } from "../_http_origin.ts";
import type { QuestionQueue } from "./question_queue.ts";
import { ConsoleAccess, type ConsoleSession, COOKIE, csrfMatches } from "./_access.ts";
import { esc, page } from "./_html.ts";
import { questionsHtml } from "./_questions_html.ts";
import { type AuditFilter, auditHtml, callHtml, filterAudit, readAudit } from "./_audit_view.ts";
import { APP_CSS, APP_JS } from "./_assets.ts";

// An optional peer on npm (only the console needs it), imported statically: a top-level await here would make the
// console entry point impossible to require() (ERR_REQUIRE_ASYNC_MODULE). `serve --console` loads this module through
// importPeer, which names the package when it is missing.
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { streamSSE } from "hono/streaming";

/** Options of {@linkcode serveConsole}. */
export interface ConsoleServeOptions {
  /** The address to listen on; default `127.0.0.1`. */
  hostname?: string;
  /** The port; 0 picks a free one. */
  port: number;
  /** Where the questions wait (the one the sessions' {@linkcode consoleHost}s put them in). */
  queue: QuestionQueue;
  /** Console tokens: entries of a token file with the `console` scope alone. */
  tokens?: TokenFile;
  /** Or OAuth access tokens that grant the `console` scope. */
  jwt?: JwtVerifier;
  /** The audit log to show (records carry their tenant when the log was given `tenantOf`). */
  auditFile?: string;
  /** Extra Host values to answer to (a reverse proxy's name). */
  allowedHosts?: string[];
  /** Extra Origins allowed. */
  allowedOrigins?: string[];
  /** Serve with `node:http` even under Deno. */
  platform?: "deno" | "node";
}

/** A running console. */
export interface ConsoleServer {
  /** Its address. */
  readonly url: URL;
  /** The port listened on. */
  readonly port: number;
  /** Ends the live updates and closes the listener. */
  close(): Promise<void>;
}

type Env = { Variables: { session: ConsoleSession; sessionId: string } };

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  // Not no-referrer: under it Chromium sends `Origin: null` with the forms, and the Origin check refuses them.
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
};

/**
 * Serves the console and resolves once listening. Refuses to start without
 * console tokens (a token file or an OAuth issuer).
 *
 * Requires `--allow-net` for the address, `--allow-read` for the token file
 * and the audit log.
 *
 * @example
 * ```ts ignore
 * import { MemoryQuestionQueue, serveConsole } from "@toolfence/adapters/console";
 * import { TokenFile } from "@toolfence/adapters/mcp";
 * const console = await serveConsole({
 *   port: 8766,
 *   queue: new MemoryQuestionQueue(),
 *   tokens: await TokenFile.open("console-tokens.json"),
 * });
 * await console.close();
 * ```
 */
export async function serveConsole(options: ConsoleServeOptions): Promise<ConsoleServer> {
  if (!options.tokens && !options.jwt) {
    throw new Error("The console needs its own tokens: a token file with console entries, or an OAuth issuer");
  }
  if (options.tokens && options.jwt) throw new Error("Give the console either a token file or an OAuth issuer");
  const hostname = options.hostname ?? "127.0.0.1";
  const access = new ConsoleAccess(options.tokens, options.jwt);
  const { queue } = options;
  let origins = originPolicy(hostname, options.port, options.allowedHosts, options.allowedOrigins);
  const closing = new AbortController();
  const app = new Hono<Env>();

  app.use(async (c, next) => {
    // DNS rebinding and cross-site requests: the HTTP server's checks. A POST must also name its Origin.
    const refused = refusedOrigin(c.req.raw.headers, origins) ??
      (c.req.method === "POST" && !c.req.header("origin") ? "a POST must carry an Origin header" : undefined);
    if (refused) return c.text(`Forbidden: ${refused}`, 403);
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
  });

  app.get("/app.js", (c) => c.body(APP_JS, 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.get("/app.css", (c) => c.body(APP_CSS, 200, { "content-type": "text/css; charset=utf-8" }));

  const loginPage = (c: Context, problem?: string, status: 200 | 401 | 403 = 200) =>
    c.html(
      page(
        "Sign in",
        `${problem ? `<p class="error" role="alert">${esc(problem)}</p>` : ""}
<form method="post" action="/login"><p><label for="token">Console token</label><br>
<input id="token" name="token" type="password" autocomplete="off" required size="40"></p>
<p><button type="submit">Sign in</button></p></form>
<p>The console takes a console token, never the agent's: ask whoever runs the server for one.</p>`,
      ),
      status,
    );

  app.get("/login", (c) => loginPage(c));
  app.post("/login", async (c) => {
    const form = await c.req.parseBody();
    const token = typeof form.token === "string" ? form.token.trim() : "";
    const identity = token === "" ? "give a token" : await access.identify(token);
    if (typeof identity === "string") return loginPage(c, `Not signed in: ${identity}.`, 401);
    setCookie(c, COOKIE, access.open(identity), {
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
      secure: new URL(c.req.url).protocol === "https:",
    });
    return c.redirect("/", 303);
  });

  // Everything below needs a session; every POST its CSRF token.
  app.use(async (c, next) => {
    const id = getCookie(c, COOKIE);
    const session = await access.session(id);
    if (!session) {
      if (c.req.method === "GET" && c.req.header("accept")?.includes("text/html")) return c.redirect("/login", 303);
      return c.text("Unauthorized: sign in at /login", 401);
    }
    if (c.req.method === "POST") {
      const form = await c.req.parseBody();
      if (!csrfMatches(session, form.csrf ?? c.req.header("x-csrf-token"))) {
        return c.text("Forbidden: the CSRF token is missing or wrong; reload the page", 403);
      }
    }
    c.set("session", session);
    c.set("sessionId", id!);
    await next();
  });

  const nav = (session: ConsoleSession, current: string) => ({
    tenant: session.identity.tenant,
    csrf: session.csrf,
    current,
  });

  app.get("/", async (c) => {
    const session = c.get("session");
    const notice = c.req.query("answered") === "1"
      ? `<p class="notice" role="status">Answered.</p>`
      : c.req.query("gone") === "1"
      ? `<p class="notice" role="status">That question is no longer waiting (answered elsewhere, or its call ended).</p>`
      : "";
    return c.html(page(
      "Questions waiting for you",
      `${notice}<p id="live-status" class="sr-only" role="status" aria-live="polite"></p>
<div id="questions" aria-live="off">${questionsHtml(await queue.pending(session.identity.tenant), session.csrf)}</div>`,
      nav(session, "questions"),
    ));
  });

  app.get("/api/session", (c) => {
    const session = c.get("session");
    return c.json({ tenant: session.identity.tenant, csrf: session.csrf });
  });

  app.get("/api/questions", async (c) => c.json({ questions: await queue.pending(c.get("session").identity.tenant) }));

  app.get("/events", (c) => {
    const session = c.get("session");
    const sessionId = c.get("sessionId");
    const tenant = session.identity.tenant;
    return streamSSE(c, async (stream) => {
      let wake: () => void = () => {};
      let changed = true;
      const stop = queue.watch(tenant, () => {
        changed = true;
        wake();
      });
      const ended = () => wake();
      closing.signal.addEventListener("abort", ended);
      stream.onAbort(ended);
      try {
        while (!stream.aborted && !stream.closed && !closing.signal.aborted) {
          // The stream outlives the request that opened it: it ends with the session (its token no longer counting).
          if (await access.session(sessionId) !== session) break;
          if (changed) {
            changed = false;
            await stream.writeSSE({
              event: "questions",
              data: JSON.stringify({ html: questionsHtml(await queue.pending(tenant), session.csrf) }),
            });
          }
          // Wakes on a change, the client leaving, the server closing, or 25 s later for a keep-alive comment.
          if (!changed) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, 25_000);
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
            });
          }
          if (!changed && !stream.aborted && !closing.signal.aborted) await stream.write(": keep-alive\n\n");
        }
      } finally {
        stop();
        closing.signal.removeEventListener("abort", ended);
      }
    });
  });

  app.post("/questions/:id", async (c) => {
    const session = c.get("session");
    const form = await c.req.parseBody();
    const choice = typeof form.choice === "string" ? form.choice : "";
    const answered = await queue.answer(session.identity.tenant, c.req.param("id"), choice);
    if (answered === "invalid_choice") return c.text("Bad Request: that is not one of the question's answers", 400);
    return c.redirect(answered === true ? "/?answered=1" : "/?gone=1", 303);
  });

  app.post("/logout", (c) => {
    access.close(c.get("sessionId"));
    deleteCookie(c, COOKIE, { path: "/" });
    return c.redirect("/login", 303);
  });

  app.get("/audit", async (c) => {
    const session = c.get("session");
    if (!options.auditFile) {
      return c.html(
        page("Audit", "<p>This server keeps no audit log (start it with --audit FILE).</p>", nav(session, "audit")),
      );
    }
    const filter: AuditFilter = {
      tool: c.req.query("tool") || undefined,
      decision: c.req.query("decision") || undefined,
      from: c.req.query("from") || undefined,
      to: c.req.query("to") || undefined,
    };
    const all = await readAudit(options.auditFile, session.identity.tenant);
    return c.html(page("Audit", auditHtml(all, filterAudit(all, filter), filter), nav(session, "audit")));
  });

  app.get("/audit/calls/:session/:call", async (c) => {
    const session = c.get("session");
    const all = options.auditFile ? await readAudit(options.auditFile, session.identity.tenant) : [];
    const of = (e: Record<string, unknown>) => e.session === c.req.param("session") && e.callId === c.req.param("call");
    const call = all.find((e) => e.type === "call" && of(e));
    if (!call) {
      return c.html(page("Call not found", "<p>No call of yours has that id.</p>", nav(session, "audit")), 404);
    }
    const decisions = all.filter((e) => e.type === "decision" && of(e));
    return c.html(page(`Call of ${String(call.tool)}`, callHtml(call, decisions), nav(session, "audit")));
  });

  app.notFound((c) => c.text("Not found", 404));

  const listener: Listener = await listen((request) => Promise.resolve(app.fetch(request)), {
    hostname,
    port: options.port,
    platform: options.platform,
  });
  origins = originPolicy(hostname, listener.port, options.allowedHosts, options.allowedOrigins);
  const shownHost = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    url: new URL(`http://${shownHost}:${listener.port}/`),
    port: listener.port,
    close: async () => {
      closing.abort();
      await listener.close();
    },
  };
}
