/**
 * Redaction for the audit log: the values of the environment the process
 * started with, common token shapes (cloud keys, API tokens, JWTs, private
 * keys) and anything the configuration names, replaced in every string of a
 * record, at any depth, before anything is cut short.
 *
 * @module
 */
import process from "node:process";

/** What replaces a secret. */
export const REDACTED = "[REDACTED]";

/** The token shapes redacted wherever they appear. */
export const TOKEN_PATTERNS: readonly { name: string; pattern: RegExp }[] = Object.freeze([
  {
    name: "private key",
    pattern: /-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|$)/g,
  },
  { name: "JWT", pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g },
  { name: "AWS access key", pattern: /\b(AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b/g },
  {
    name: "AWS secret key",
    pattern: /(aws_secret_access_key|aws_session_token|secret_?access_?key)(["'\s:=]+)[A-Za-z0-9/+=]{30,}/gi,
  },
  { name: "GitHub token", pattern: /\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/g },
  { name: "GitLab token", pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { name: "Anthropic or OpenAI key", pattern: /\bsk-(ant-|proj-|svcacct-|live-|test-)?[A-Za-z0-9_-]{20,}/g },
  { name: "Stripe key", pattern: /\b[rsp]k_(live|test)_[A-Za-z0-9]{16,}/g },
  { name: "Slack token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { name: "Google API key", pattern: /\bAIza[0-9A-Za-z_-]{35}/g },
  { name: "npm token", pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { name: "bearer token", pattern: /\b(Bearer|Basic|token)\s+[A-Za-z0-9._~+/=-]{16,}/g },
  {
    name: "secret assignment",
    pattern:
      /\b([A-Za-z0-9_]*(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|CREDENTIALS?)[A-Za-z0-9_]*)(\s*[=:]\s*["']?)[^\s"'`]{6,}/gi,
  },
]);

// Environment variables whose values are not secrets and appear everywhere
// (redacting HOME would hide every path): left alone.
const NOT_SECRET = new Set([
  "PATH",
  "HOME",
  "PWD",
  "OLDPWD",
  "SHELL",
  "USER",
  "LOGNAME",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TZ",
  "TMPDIR",
  "HOSTNAME",
  "SHLVL",
  "_",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "DISPLAY",
  "COLORTERM",
  "TERM_PROGRAM",
  "INIT_CWD",
  "DENO_DIR",
  "NODE_ENV",
]);

const MIN_SECRET_LENGTH = 6;

/** Options of a {@linkcode Redactor}. */
export interface RedactorOptions {
  /**
   * The environment whose values are secrets (default: the process's, as far
   * as the runtime lets it be read); names in a fixed list of harmless ones
   * (PATH, HOME, LANG, ...) and values shorter than 6 characters are left.
   */
  env?: Record<string, string | undefined>;
  /** Names of environment variables, or literal strings, to redact too (the configuration's `audit.redact`). */
  names?: readonly string[];
  /** Other literal secrets. */
  secrets?: readonly string[];
}

function processEnv(): Record<string, string | undefined> {
  try {
    return { ...process.env };
  } catch {
    return {};
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * Replaces secrets in strings and in JSON values.
 *
 * Requires `--allow-env` to read the process environment (without it only
 * the given `env` counts).
 *
 * @example
 * ```ts
 * import { Redactor } from "@toolfence/policy";
 * const redactor = new Redactor({ env: { API_TOKEN: "s3cr3t-value" }, secrets: ["hunter22"] });
 * console.log(redactor.redact("token s3cr3t-value and hunter22 and AKIAABCDEFGHIJKLMNOP"));
 * // token [REDACTED] and [REDACTED] and [REDACTED]
 * ```
 */
export class Redactor {
  readonly #literals: RegExp | undefined;

  /** Creates a redactor. */
  constructor(options: RedactorOptions = {}) {
    const env = options.env ?? processEnv();
    const literals = new Set<string>();
    const add = (value: string | undefined) => {
      if (value === undefined || value.length < MIN_SECRET_LENGTH) return;
      literals.add(value);
      // As it appears inside JSON text.
      const escaped = JSON.stringify(value).slice(1, -1);
      if (escaped !== value) literals.add(escaped);
    };
    for (const [name, value] of Object.entries(env)) {
      if (NOT_SECRET.has(name) || name.startsWith("LC_") || name.startsWith("XDG_")) continue;
      add(value);
    }
    for (const name of options.names ?? []) {
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && env[name] !== undefined) add(env[name]);
      else add(name);
    }
    for (const secret of options.secrets ?? []) add(secret);
    // Longest first, so that a secret containing another is replaced whole.
    const sorted = [...literals].sort((a, b) => b.length - a.length);
    this.#literals = sorted.length ? new RegExp(sorted.map(escapeRegex).join("|"), "g") : undefined;
  }

  /** `text` with every secret replaced by `[REDACTED]`. */
  redact(text: string): string {
    let out = this.#literals ? text.replace(this.#literals, REDACTED) : text;
    for (const { pattern } of TOKEN_PATTERNS) out = out.replace(pattern, REDACTED);
    return out;
  }

  /** A copy of a JSON value with every string (keys too) redacted. */
  redactValue(value: unknown, depth = 0): unknown {
    if (typeof value === "string") return this.redact(value);
    if (depth > 64 || value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) return value.map((item) => this.redactValue(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[this.redact(key)] = this.redactValue(item, depth + 1);
    return out;
  }
}
