// Who may use the console. A person signs in with a console token (an entry
// of the token file with the `console` scope, or an OAuth access token
// granting it) and gets a session cookie (HttpOnly, SameSite=Strict) and a
// CSRF token that every POST must carry. A token that holds any tool scope is
// an agent's and is refused: the questions are meant for a person, never for
// the agent that asked them.

import { timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";
import type { Identity, TokenFile } from "../_http_tokens.ts";
import { type JwtVerifier, TokenRefused } from "../_http_jwt.ts";
import { ALL_SCOPES, CONSOLE_SCOPE } from "../_http_scopes.ts";

/** A signed-in person. */
export interface ConsoleSession {
  identity: Identity;
  csrf: string;
  expires: number;
}

/** The session cookie's name. */
export const COOKIE = "toolfence_console";

const SESSION_MS = 8 * 60 * 60_000;

function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** Signs people in and keeps their sessions. */
export class ConsoleAccess {
  readonly #tokens?: TokenFile;
  readonly #jwt?: JwtVerifier;
  readonly #sessions = new Map<string, ConsoleSession>();

  constructor(tokens: TokenFile | undefined, jwt: JwtVerifier | undefined) {
    this.#tokens = tokens;
    this.#jwt = jwt;
  }

  /** The identity of a console token, or why it is refused. */
  async identify(token: string): Promise<Identity | string> {
    let identity: Identity | undefined;
    if (this.#tokens) {
      // An agent's token is told apart from an unknown one, so that the person learns why.
      identity = await this.#tokens.identify(token, "console") ?? await this.#tokens.identify(token, "tools");
    } else {
      try {
        identity = await this.#jwt!.identify(token, "console");
      } catch (error) {
        if (error instanceof TokenRefused) return `the token is refused: ${error.message}`;
        throw error;
      }
    }
    if (identity === undefined) return "the token is not valid";
    return personOf(identity);
  }

  /** Opens a session for `identity`; returns its id (the cookie's value). */
  open(identity: Identity): string {
    const now = Date.now();
    for (const [id, session] of this.#sessions) if (session.expires < now) this.#sessions.delete(id);
    const id = randomToken();
    // A session lasts no longer than the token that opened it (a JWT's expiry).
    const expires = Math.min(now + SESSION_MS, identity.expiresAt ?? Infinity);
    this.#sessions.set(id, { identity, csrf: randomToken(), expires });
    return id;
  }

  /**
   * The session of a cookie value, while it lasts and the token that opened it
   * still counts: a token taken out of the token file (or moved to another
   * tenant, or given a tool scope) ends its sessions, as it ends its use of the
   * MCP endpoint, at once.
   */
  async session(id: string | undefined): Promise<ConsoleSession | undefined> {
    if (id === undefined) return undefined;
    const session = this.#sessions.get(id);
    if (!session || session.expires < Date.now()) return undefined;
    if (this.#tokens) {
      const now = await this.#tokens.current(session.identity, "console");
      if (now === undefined || typeof personOf(now) === "string" || now.tenant !== session.identity.tenant) {
        this.#sessions.delete(id);
        return undefined;
      }
    }
    return session;
  }

  /** Ends a session. */
  close(id: string | undefined): void {
    if (id !== undefined) this.#sessions.delete(id);
  }
}

// A person's identity, or why it is none: an agent's token (one holding a tool scope) is refused.
function personOf(identity: Identity): Identity | string {
  if (identity.scopes.some((scope) => ALL_SCOPES.includes(scope))) {
    return "this is an agent's token (it holds a tool scope); the console takes only a token with the console scope alone";
  }
  if (!identity.scopes.includes(CONSOLE_SCOPE)) return "the token does not hold the console scope";
  return identity;
}

/** Whether `presented` is the session's CSRF token, compared in constant time. */
export function csrfMatches(session: ConsoleSession, presented: unknown): boolean {
  if (typeof presented !== "string") return false;
  const a = Buffer.from(session.csrf), b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}
