// OAuth 2.1 resource-server mode: access tokens are JWTs signed by the
// authorization server, checked against its JWKS (fetched and cached by jose,
// refetched when a token names an unknown key). A token counts only when its
// issuer is the configured one, its audience names this server's resource URL
// (RFC 8707: a token minted for another server cannot be replayed here), it
// has not expired, and it carries at least one toolfence scope.

import { createHash } from "node:crypto";
import type { JWTPayload } from "jose";
import { ALL_SCOPES, CONSOLE_SCOPE, knownScopes } from "./_http_scopes.ts";
import type { Identity } from "./_http_tokens.ts";

// An optional peer on npm, imported statically: a top-level await here would make the MCP entry points impossible to
// require() (ERR_REQUIRE_ASYNC_MODULE). `toolfence serve` loads them through importPeer, which names it when missing.
import { createRemoteJWKSet, errors, jwtVerify } from "jose";

/** Options of {@linkcode JwtVerifier}. */
export interface JwtOptions {
  /** The authorization server's issuer identifier (the `iss` tokens must carry). */
  issuer: string;
  /** Where its signing keys are published. */
  jwksUrl: string;
  /** This server's resource URL (the `aud` tokens must carry), e.g. `https://tools.example.com/mcp`. */
  resource: string;
  /** The claim that names the tenant; default `sub`. */
  tenantClaim?: string;
  /**
   * Allowed clock skew in seconds, for `nbf` and `iat`; default 30. Not for `exp`: a token stops counting when it
   * expires, and so do the sessions it opened (a token expiring early by a skewed clock is refreshed by its client).
   */
  clockToleranceSec?: number;
}

/** Why a token was refused, in words for the WWW-Authenticate header. */
export class TokenRefused extends Error {
  /** `invalid_token` or `insufficient_scope` (RFC 6750). */
  readonly oauthError: "invalid_token" | "insufficient_scope";
  constructor(message: string, oauthError: "invalid_token" | "insufficient_scope" = "invalid_token") {
    super(message);
    this.oauthError = oauthError;
  }
}

const SAFE_TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A folder-safe tenant name for a claim value: the value itself when safe, else a hash of it. */
export function tenantName(value: string): string {
  // Names starting "h-" are always hashed, so that no subject can take the name another's hash gives; "H-" too, one
  // folder with it on a file system that ignores case (before, subject H-<hash of alice's> took the folder of alice's).
  if (SAFE_TENANT.test(value) && !/^h-/i.test(value)) return value;
  return `h-${createHash("sha256").update(value, "utf8").digest("hex").slice(0, 32)}`;
}

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "the token has expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "aud") return "the token is not for this server (its audience does not name it)";
    if (error.claim === "iss") return "the token was not issued by the expected authorization server";
    if (error.claim === "nbf") return "the token is not valid yet";
    return `the token's ${error.claim} claim is not acceptable`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (error instanceof errors.JWKSNoMatchingKey) return "the token is signed with a key the issuer does not publish";
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JOSEError && /fetch|JWKS/i.test(error.message)) {
    return "the issuer's keys could not be fetched";
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return "the token is not a valid JWT";
  return "the token could not be verified";
}

/** Checks JWT access tokens. */
export class JwtVerifier {
  /** What tokens are checked against. */
  readonly options: JwtOptions;
  readonly #keys: ReturnType<typeof createRemoteJWKSet>;

  /** A verifier fetching the issuer's keys from `options.jwksUrl` when first needed. */
  constructor(options: JwtOptions) {
    this.options = options;
    this.#keys = createRemoteJWKSet(new URL(options.jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30_000 });
  }

  /**
   * The identity a valid token gives; throws {@linkcode TokenRefused}
   * otherwise. `for: "tools"` (the MCP endpoint) needs a tool scope,
   * `for: "console"` the console scope.
   */
  async identify(token: string, purpose: "tools" | "console" = "tools"): Promise<Identity> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#keys, {
        issuer: this.options.issuer,
        audience: this.options.resource,
        clockTolerance: this.options.clockToleranceSec ?? 30,
        requiredClaims: ["exp"],
        algorithms: ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"],
      }));
    } catch (error) {
      throw new TokenRefused(describe(error));
    }
    // jose lets `exp` pass within the leeway too: a session's token counted for 30 s after it expired.
    if (payload.exp! * 1000 <= Date.now()) throw new TokenRefused("the token has expired");
    const claim = this.options.tenantClaim ?? "sub";
    const subject = payload[claim];
    if (typeof subject !== "string" || subject === "") {
      throw new TokenRefused(`the token has no ${claim} claim to name its tenant`);
    }
    const scopes = knownScopes(payload.scope ?? payload.scp);
    if (purpose === "console" && !scopes.includes(CONSOLE_SCOPE)) {
      throw new TokenRefused("the token does not grant the console scope", "insufficient_scope");
    }
    if (purpose === "tools" && !scopes.some((scope) => ALL_SCOPES.includes(scope))) {
      throw new TokenRefused("the token grants none of tools:read, tools:write, tools:commands", "insufficient_scope");
    }
    const tenant = tenantName(subject);
    return { tenant, scopes, key: `jwt:${tenant}`, expiresAt: payload.exp! * 1000 };
  }
}
