// Bearer tokens from a file. The file is JSON:
//
//   {"tokens": [{"sha256": "<hex of the token's SHA-256>", "tenant": "alice",
//                "scopes": ["tools:read", "tools:write", "tools:commands"],
//                "workspace": "/srv/alice"}]}
//
// (`"token": "<the token itself>"` is accepted instead of `sha256`, and is
// hashed as it is read, never kept). A presented token is hashed and compared
// with every entry in constant time, so neither the time taken nor an early
// exit tells how much of a hash matched. The file is read again when it
// changes (checked at most once a second, on use) or when `reload()` is called
// (on SIGHUP); a file that no longer reads keeps the tokens that were loaded,
// and the reason is reported.

import { createHash, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { ALL_SCOPES, CONSOLE_SCOPE, type Scope, SCOPES } from "./_http_scopes.ts";

/** Who a token belongs to and what it may do. */
export interface Identity {
  /** The tenant: sessions, workspaces and limits are kept apart per tenant. */
  tenant: string;
  /** What the token may use. */
  scopes: readonly Scope[];
  /** The tenant's workspace folder, when the token file names one. */
  workspace?: string;
  /** A stable key for the token itself (for per-token limits); never the token. */
  key: string;
  /** When the token stops counting (ms since the epoch): a JWT's `exp`; none for a token file's entry. */
  expiresAt?: number;
}

interface Entry extends Identity {
  hash: Buffer;
}

const TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const HEX64 = /^[0-9a-f]{64}$/;

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

function parseEntries(text: string, file: string): Entry[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not JSON: ${(error as Error).message}`);
  }
  const tokens = (value as { tokens?: unknown })?.tokens;
  if (!Array.isArray(tokens)) throw new Error(`${file} needs {"tokens": [...]}`);
  const seen = new Set<string>();
  return tokens.map((raw, i) => {
    const where = `${file}: tokens[${i}]`;
    if (raw === null || typeof raw !== "object") throw new Error(`${where} is not an object`);
    const item = raw as Record<string, unknown>;
    let hash: Buffer;
    if (typeof item.sha256 === "string" && HEX64.test(item.sha256.toLowerCase())) {
      hash = Buffer.from(item.sha256.toLowerCase(), "hex");
    } else if (typeof item.token === "string" && item.token.length >= 16) {
      hash = sha256(item.token);
    } else {
      throw new Error(`${where} needs "sha256" (64 hex digits) or "token" (at least 16 characters)`);
    }
    const hex = hash.toString("hex");
    if (seen.has(hex)) throw new Error(`${where} repeats a token`);
    seen.add(hex);
    const tenant = item.tenant ?? `token-${hex.slice(0, 12)}`;
    if (typeof tenant !== "string" || !TENANT.test(tenant)) {
      throw new Error(`${where}: tenant must be 1 to 64 of A-Z a-z 0-9 . _ - (starting with a letter or digit)`);
    }
    let scopes: Scope[] = [...ALL_SCOPES];
    if (item.scopes !== undefined) {
      if (!Array.isArray(item.scopes) || item.scopes.some((s) => !SCOPES.includes(s as Scope))) {
        throw new Error(`${where}: scopes must be a list of ${SCOPES.join(", ")}`);
      }
      scopes = item.scopes as Scope[];
    }
    if (item.workspace !== undefined && typeof item.workspace !== "string") {
      throw new Error(`${where}: workspace must be a path`);
    }
    return {
      hash,
      tenant,
      scopes,
      key: `token:${hex.slice(0, 16)}`,
      ...(item.workspace === undefined ? {} : { workspace: item.workspace as string }),
    };
  });
}

/** The SHA-256 of a token, in hex, as the token file takes it. */
export function tokenHash(token: string): string {
  return sha256(token).toString("hex");
}

/** Tokens read from a file, kept current. */
export class TokenFile {
  /** The token file's path. */
  readonly path: string;
  #entries: Entry[] = [];
  // The text the entries were read from: a check compares the file's text itself, as a same-size rewrite within
  // the file clock's tick keeps its size, inode and times.
  #text = "";
  #checkedAt = 0;
  #checking: Promise<void> | undefined;
  /** Told when a reload fails (the old tokens stay). */
  onerror: (error: Error) => void = () => {};

  private constructor(path: string) {
    this.path = path;
  }

  /** Reads the file; throws when it cannot be used. */
  static async open(path: string): Promise<TokenFile> {
    const file = new TokenFile(path);
    await file.#load();
    if (file.#entries.length === 0) throw new Error(`${path} holds no tokens`);
    return file;
  }

  async #load(text?: string): Promise<void> {
    text ??= await readFile(this.path, "utf8");
    this.#entries = parseEntries(text, this.path);
    this.#text = text;
  }

  /** Reads the file again now. */
  async reload(): Promise<void> {
    try {
      await this.#load();
    } catch (error) {
      this.onerror(error as Error);
    }
  }

  #fresh(): Promise<void> {
    const now = Date.now();
    if (now - this.#checkedAt < 1000) return this.#checking ?? Promise.resolve();
    this.#checkedAt = now;
    this.#checking = (async () => {
      try {
        const text = await readFile(this.path, "utf8");
        if (text !== this.#text) await this.#load(text);
      } catch (error) {
        this.onerror(error as Error);
      }
    })();
    return this.#checking;
  }

  /** The tenants the file's entries name, each once (the file read again if it changed). */
  async tenants(): Promise<string[]> {
    await this.#fresh();
    return [...new Set(this.#entries.map((entry) => entry.tenant))];
  }

  /** Each entry's tenant and the workspace it names, if it names one (the file read again if it changed). */
  async placements(): Promise<{ tenant: string; workspace?: string }[]> {
    await this.#fresh();
    return this.#entries.map((entry) => ({
      tenant: entry.tenant,
      ...(entry.workspace === undefined ? {} : { workspace: entry.workspace }),
    }));
  }

  /**
   * The identity of `token`, or undefined when no entry holds it or it is not
   * for this use: `tools` (the MCP endpoint) needs a tool scope, `console`
   * the console scope.
   */
  async identify(token: string, purpose: "tools" | "console" = "tools"): Promise<Identity | undefined> {
    await this.#fresh();
    const presented = sha256(token);
    let found: Entry | undefined;
    // Every entry is compared, whatever matched, so the time does not depend on which one did.
    for (const entry of this.#entries) {
      if (timingSafeEqual(entry.hash, presented) && !found) found = entry;
    }
    return found && fitting(found, purpose);
  }

  /**
   * What an identity this file gave is now: the one its entry gives for
   * `purpose` (the file read again if it changed), or undefined once the
   * entry is gone or no longer fits. For what outlives the request that
   * showed the token (the console's sessions).
   */
  async current(identity: Identity, purpose: "tools" | "console" = "tools"): Promise<Identity | undefined> {
    await this.#fresh();
    const found = this.#entries.find((entry) => entry.key === identity.key);
    return found && fitting(found, purpose);
  }
}

function fitting(entry: Entry, purpose: "tools" | "console"): Identity | undefined {
  const fits = purpose === "console"
    ? entry.scopes.includes(CONSOLE_SCOPE)
    : entry.scopes.some((scope) => ALL_SCOPES.includes(scope));
  if (!fits) return undefined;
  const { hash: _hash, ...identity } = entry;
  return identity;
}
