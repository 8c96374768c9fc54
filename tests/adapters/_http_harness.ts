// Helpers of the HTTP server tests: a server on a random loopback port with a
// token file, the official SDK client over real HTTP, and raw requests through
// node:http (fetch will not send a Host header of the caller's choosing).

import { request as httpRequest } from "node:http";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { type HttpServeOptions, type HttpServer, serveHttp, TokenFile, tokenHash } from "../../adapters/mcp/http.ts";

export const GROUPS = ["fs", "search", "cmd", "system", "framework"];

export interface Harness {
  server: HttpServer;
  dir: string;
  tokenFile: string;
  close(): Promise<void>;
}

export interface TenantSpec {
  token: string;
  tenant: string;
  scopes?: string[];
}

/** A server with a token file of `tenants`, one workspace folder per tenant under `dir/tenants`. */
export async function startServer(
  tenants: TenantSpec[],
  options: Partial<HttpServeOptions> = {},
  toolbox: ToolBox = new ToolBox().withDefaults(...GROUPS),
): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), "toolfence-http-"));
  const tokenFile = join(dir, "tokens.json");
  await writeTokens(tokenFile, tenants);
  await mkdir(join(dir, "tenants"));
  await mkdir(join(dir, "tmp"));
  const server = await serveHttp(toolbox, {
    port: 0,
    tenantRoot: join(dir, "tenants"),
    tempParent: join(dir, "tmp"),
    tokens: tenants.length > 0 ? await TokenFile.open(tokenFile) : undefined,
    autoConfirm: true,
    sandbox: "off",
    // Several tenants' commands without the sandbox, each able to reach the others' files: what these tests of
    // sessions, questions and grants need. mcp_http_tenants_unsandboxed_test.ts serves tenants without it.
    allowUnsandboxedTenants: true,
    ...options,
  });
  return {
    server,
    dir,
    tokenFile,
    close: async () => {
      await server.shutdown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function writeTokens(file: string, tenants: TenantSpec[]): Promise<void> {
  await writeFile(
    file,
    JSON.stringify({
      tokens: tenants.map((t) => ({
        sha256: tokenHash(t.token),
        tenant: t.tenant,
        ...(t.scopes ? { scopes: t.scopes } : {}),
      })),
    }),
  );
}

/** The official client, connected with `token`. */
export async function connect(url: URL, token?: string, options: { elicit?: boolean } = {}): Promise<Client> {
  const client = new Client(
    { name: "http-test", version: "1.0.0" },
    { capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
  );
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  await client.connect(transport);
  return client;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): { jsonrpc?: string; id?: unknown; error?: { code: number; message: string; data?: unknown } };
}

/** One raw request, with any headers (Host included) and body. */
export function raw(
  url: URL,
  options: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      hostname: url.hostname,
      port: url.port,
      path: url.pathname,
      method: options.method ?? "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        ...options.headers,
      },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/**
 * One raw request whose answer is dropped as soon as its headers arrive,
 * before any event of its stream is read (a client gone before it held an
 * event id to resume from); resolves with the status.
 */
export function leaveAtHeaders(url: URL, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      hostname: url.hostname,
      port: url.port,
      path: url.pathname,
      method: "POST",
      headers: { accept: "application/json, text/event-stream", "content-type": "application/json", ...headers },
    }, (res) => {
      res.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end(body);
  });
}

export const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** The text of a tool call's first content item. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
}
