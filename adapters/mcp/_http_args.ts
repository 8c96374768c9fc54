// The command-line options of `toolfence serve --http`, apart from the server
// so that main.ts can parse them without loading the MCP SDK.

/** `parseArgs` options of the HTTP server. */
export const HTTP_SERVE_ARGS = {
  http: { type: "string" },
  stateless: { type: "boolean" },
  "token-file": { type: "string" },
  "oauth-issuer": { type: "string" },
  "oauth-jwks": { type: "string" },
  "resource-url": { type: "string" },
  "tenant-root": { type: "string" },
  "allowed-host": { type: "string", multiple: true },
  "allowed-origin": { type: "string", multiple: true },
  "no-auth": { type: "boolean" },
  "max-concurrent-calls": { type: "string" },
  "calls-per-minute": { type: "string" },
  "idle-minutes": { type: "string" },
} as const;

/** The help text of those options. */
export const HTTP_SERVE_HELP = `HTTP options (serve over MCP Streamable HTTP instead of stdio):
  --http HOST:PORT         listen there (HOST defaults to 127.0.0.1; PORT 0 picks one)
  --token-file FILE        bearer tokens: {"tokens":[{"sha256":HEX,"tenant":NAME,"scopes":[...],"workspace":DIR}]}
                           (read again when it changes or on SIGHUP)
  --oauth-issuer URL       accept JWT access tokens of this OAuth authorization server
  --oauth-jwks URL         its JWKS (default: URL/.well-known/jwks.json)
  --resource-url URL       this endpoint's public URL, the audience tokens must name
  --tenant-root DIR        one workspace folder per tenant, DIR/<tenant> (default: --workspace for all)
  --stateless              no sessions: a fresh server per request (no elicitation, no jobs across calls)
  --allowed-host NAME      also answer to this Host (repeatable; e.g. a reverse proxy's name)
  --allowed-origin ORIGIN  also allow this Origin (repeatable)
  --no-auth                serve without authentication (loopback addresses only)
  --max-concurrent-calls N calls one session may have in flight (default 16)
  --calls-per-minute N     calls one token may start a minute (default 600)
  --idle-minutes N         end sessions idle this long, killing their jobs (default 30)
Scopes: tools:read (tools that only read), tools:write (tools that change files), tools:commands (run programs).`;

/** Splits `HOST:PORT` (or `PORT`, or `[v6]:PORT`). */
export function parseHttpAddress(text: string): { hostname: string; port: number } {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:\[\]]+):)?(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match || !(port >= 0 && port <= 65535)) {
    throw new Error(`--http must be HOST:PORT or PORT, not ${JSON.stringify(text)}`);
  }
  return { hostname: (match[1] ?? "127.0.0.1").replace(/^\[|\]$/g, ""), port };
}
