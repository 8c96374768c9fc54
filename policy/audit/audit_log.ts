/**
 * The audit log: one JSON line per call and per policy decision, with the
 * secrets redacted, to a file (appended line by line, each with one write,
 * rotated by size) and/or a callback.
 *
 * A call record: `time`, `type: "call"`, `session`, `callId`, `tool`,
 * `arguments`, `status`, `errorCode`, `error`, `output` (cut to a length),
 * `filesChanged`, `durationMs`. Both carry `tenant` when `tenantOf` names one. A decision record: `time`, `type: "decision"`,
 * `session`, `callId` (when one call of the session was running), `kind`
 * (`command`, `path`, `write`, `connection`), `subject`, `decision`, `answeredBy`
 * (`person`, `client` for an MCP elicitation answer, `auto` for an automatic
 * default, `rule` when nobody was asked), `rule` and `layer` when a policy rule decided, `shadow` for what a
 * shadow-mode rule would have decided, `reason`; a connection also has `method`,
 * `address` (the one connected to, or those its host resolved to), `networkRule`
 * and `command`.
 *
 * @module
 */
import { textPrefix } from "@toolfence/core";
import { Buffer } from "node:buffer";
import fs from "node:fs";
import path from "node:path";
import { createHash, randomUUID } from "node:crypto";
import { type FolderPin, inFolder } from "@toolfence/internal";
import { Redactor } from "./redact.ts";

const APPEND_NOFOLLOW = fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT |
  (fs.constants.O_NOFOLLOW ?? 0);

/** A policy decision, as the policy reports it. */
export interface PolicyDecisionEvent {
  /** What was decided about (`connection`: a request or tunnel of a sandboxed command through the egress proxy). */
  kind: "command" | "path" | "write" | "connection";
  /** The command line, the path, or the URL or `host:port` of a connection. */
  subject: string;
  /** What happened. */
  decision: "allow" | "ask" | "deny";
  /**
   * Who answered: a person, the MCP client (an elicitation answer, not proof
   * that a person saw it), an automatic default, or nobody (a rule or the allowlist).
   */
  answeredBy: "person" | "client" | "auto" | "rule";
  /** Why. */
  reason?: string;
  /** The policy rule that decided, with its layer and file. */
  rule?: { pattern: string; decision: string; layer: string; file?: string; line?: number; column?: number };
  /** What a shadow-mode rule would have decided instead (not applied). */
  shadow?: { pattern: string; decision: string; layer: string; file?: string };
  /** A connection's method (`CONNECT` for a tunnel). */
  method?: string;
  /** The address a connection went to, or the addresses its host resolved to when refused. */
  address?: string;
  /** The `network.allow` or `network.deny` entry that decided a connection. */
  networkRule?: string;
  /** The command line that made a connection. */
  command?: string;
}

/** One line of the audit log. */
export type AuditRecord = Record<string, unknown> & { time: string; type: "call" | "decision" };

/** Options of an {@linkcode AuditLog}. */
export interface AuditLogOptions {
  /** The file to append to (made with mode 0600). */
  file?: string;
  /** Rotate when the file would grow past this many bytes (default 10 MiB). */
  maxBytes?: number;
  /** How many rotated files to keep (`FILE.1` newest; default 3). */
  keep?: number;
  /** Called with each record, redacted and shortened as the file keeps it (at most 256 KiB as JSON). */
  onRecord?: (record: AuditRecord) => void;
  /** The redactor (default: the process environment, token shapes). */
  redactor?: Redactor;
  /** The longest output kept in a call record, in characters (default 2,000). */
  maxOutputChars?: number;
  /**
   * The tenant a session serves, written as `tenant` in its records, which
   * are also kept in the tenant's own file ({@linkcode AuditLog.tenantFile};
   * the web console shows each tenant its own).
   */
  tenantOf?: (session: object) => string | undefined;
}

/** What the audit log needs of a toolbox: its call hooks. */
export interface AuditedToolBox {
  /** Adds a hook that runs before each call. */
  beforeToolCall(hook: (event: { session: object; toolName: string; callId?: string }) => void): unknown;
  /** Adds a hook that runs after each call. */
  afterToolCall(
    hook: (event: { session: object; result: unknown; args?: Record<string, unknown> }) => void,
  ): unknown;
}

const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
// A line longer than this is cut (its strings shortened), so that one write stays one line.
const MAX_LINE_BYTES = 256 * 1024;
// The tenants' files kept open at once (the least recently written closed first).
const MAX_OPEN_TENANT_FILES = 32;
const SAFE_TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
// What a rotation adds to a file's name (`FILE.1`, `FILE.2`, ...).
const ROTATION_SUFFIX = /\.\d+$/;

/**
 * Records calls and decisions as JSON lines.
 *
 * Requires `--allow-write` and `--allow-read` for the log's folder when a file is given.
 *
 * @example
 * ```ts
 * import { AuditLog } from "@toolfence/policy";
 * const records: unknown[] = [];
 * const audit = new AuditLog({ onRecord: (record) => records.push(record) });
 * audit.decision({}, { kind: "command", subject: "git push", decision: "deny", answeredBy: "rule" });
 * console.log(records.length); // 1
 * audit.close();
 * ```
 */
export class AuditLog {
  readonly #options: AuditLogOptions;
  readonly #redactor: Redactor;
  readonly #sessions = new WeakMap<object, string>();
  readonly #inFlight = new WeakMap<object, Map<string, { tool: string; started: number }>>();
  // The log's own file, and each tenant's (the most recently used ones open).
  #main: LogFile | undefined;
  readonly #tenants = new Map<string, LogFile>();
  #dir: { path: string; pin: FolderPin } | undefined;

  /**
   * The files a log at `file` writes, itself and its rotations (`FILE.1`,
   * ...), as `PolicyRules.denyingFiles` takes them: the agents it records
   * may neither read nor rewrite them.
   *
   * @example
   * ```ts
   * import { AuditLog, PolicyRules } from "@toolfence/policy";
   * const rules = PolicyRules.empty("/srv/w").denyingFiles(AuditLog.filesOf("/var/log/toolfence.jsonl"));
   * console.log(rules.layers.length); // 1
   * ```
   */
  static filesOf(file: string): { path: string; suffix: string }[] {
    return [{ path: file, suffix: "" }, { path: file, suffix: ".*" }];
  }

  /** Opens the log (the file is created when missing). */
  constructor(options: AuditLogOptions = {}) {
    this.#options = options;
    this.#redactor = options.redactor ?? new Redactor();
    if (options.file !== undefined) {
      this.#main = { name: path.basename(options.file), fd: undefined, size: 0 };
      this.#open(this.#main);
    }
  }

  /**
   * The file beside the log at `file` that keeps one tenant's records (and
   * is rotated as `FILE.tenant-NAME.1`, ...): with `tenantOf`, each record
   * of a tenant is written there as well as to `file`, so that one tenant's
   * records never push another's out of its rotations (the web console reads
   * a tenant's own file). A name other than 1 to 64 of `A-Z a-z 0-9 . _ -`
   * (starting with a letter or digit), or one ending like a rotation (`.` and
   * digits, as `bob.1`, whose file would be `bob`'s first rotation), is
   * replaced by `%` and a hash of it.
   *
   * @example
   * ```ts
   * import { AuditLog } from "@toolfence/policy";
   * console.log(AuditLog.tenantFile("/var/log/toolfence.jsonl", "alice")); // /var/log/toolfence.jsonl.tenant-alice
   * ```
   */
  static tenantFile(file: string, tenant: string): string {
    // A name ending like a rotation (`.1`) is hashed too: the file of tenant `bob.1` was tenant `bob`'s first rotation,
    // so bob.1's records went into bob's rotated file and bob.1's own rotations moved it away and off the disk.
    const name = SAFE_TENANT.test(tenant) && !ROTATION_SUFFIX.test(tenant)
      ? tenant
      : `%${createHash("sha256").update(tenant, "utf8").digest("hex").slice(0, 32)}`;
    return `${file}.tenant-${name}`;
  }

  // The log's folder may lie where commands write (a workspace): it is pinned at its real path at the first open,
  // and every later open, rotation and removal acts by a single name in that very folder (never through a link
  // at the log's name or in place of the folder: refused, path_changed or ELOOP), so the log's lines never land in
  // a file elsewhere.
  #open(log: LogFile): void {
    const file = this.#options.file!;
    if (this.#dir === undefined) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const dir = fs.realpathSync(path.dirname(file));
      const stat = fs.statSync(dir);
      this.#dir = { path: dir, pin: { dev: stat.dev, ino: stat.ino } };
    }
    log.fd = this.#inDir((at) => fs.openSync(at(log.name), APPEND_NOFOLLOW, 0o600));
    log.size = fs.fstatSync(log.fd).size;
  }

  #inDir<T>(fn: (at: (name: string) => string) => T): T {
    return inFolder(this.#dir!.path, fn, this.#dir!.pin);
  }

  #rotate(log: LogFile): void {
    const name = log.name;
    if (log.fd !== undefined) fs.closeSync(log.fd);
    log.fd = undefined;
    const keep = Math.max(1, this.#options.keep ?? 3);
    this.#inDir((at) => {
      for (let i = keep - 1; i >= 1; i--) {
        try {
          fs.renameSync(at(`${name}.${i}`), at(`${name}.${i + 1}`));
        } catch {
          // Not there yet.
        }
      }
      try {
        fs.renameSync(at(name), at(`${name}.1`));
      } catch {
        // Removed under us: a new one starts.
      }
      try {
        fs.unlinkSync(at(`${name}.${keep + 1}`));
      } catch {
        // Nothing to drop.
      }
    });
    this.#open(log);
  }

  #append(log: LogFile, bytes: Buffer): void {
    if (log.fd === undefined) this.#open(log);
    const max = this.#options.maxBytes ?? DEFAULT_MAX_BYTES;
    if (log.size > 0 && log.size + bytes.length > max) this.#rotate(log);
    // One write per line, appended: a killed process leaves whole lines behind it.
    let written = 0;
    while (written < bytes.length) written += fs.writeSync(log.fd!, bytes, written);
    log.size += bytes.length;
  }

  // A tenant's own file, kept open while it is among the most recently used.
  #tenantLog(tenant: string): LogFile {
    const name = path.basename(AuditLog.tenantFile(this.#options.file!, tenant));
    let log = this.#tenants.get(name);
    if (log) this.#tenants.delete(name);
    else log = { name, fd: undefined, size: 0 };
    this.#tenants.set(name, log);
    for (const [other, open] of this.#tenants) {
      if (this.#tenants.size <= MAX_OPEN_TENANT_FILES) break;
      if (open.fd !== undefined) fs.closeSync(open.fd);
      this.#tenants.delete(other);
    }
    return log;
  }

  /** The session's id in the log. */
  sessionId(session: object): string {
    let id = this.#sessions.get(session);
    if (id === undefined) {
      id = randomUUID();
      this.#sessions.set(session, id);
    }
    return id;
  }

  /** Writes one record (redacted) to the file and the callback. */
  record(record: Record<string, unknown> & { type: "call" | "decision" }): void {
    const redacted = this.#redactor.redactValue({ time: new Date().toISOString(), ...record }) as AuditRecord;
    let kept = redacted;
    let line = JSON.stringify(redacted);
    if (Buffer.byteLength(line) > MAX_LINE_BYTES) line = JSON.stringify(kept = bounded(redacted));
    // The callback gets the record the file does: it was given the whole one, and a fleet's store kept it so (every
    // record stays there), a call's megabytes of arguments written once more into every tenant's database.
    this.#options.onRecord?.(kept);
    if (this.#options.file === undefined || this.#main === undefined) return;
    const bytes = Buffer.from(`${line}\n`);
    this.#append(this.#main, bytes);
    // A tenant's records are also kept in its own file, rotated by its own volume alone: in the shared file
    // another tenant's calls (one of 256 KiB each) push them out of its rotations within seconds.
    if (typeof record.tenant === "string") this.#append(this.#tenantLog(record.tenant), bytes);
  }

  /** Records a policy decision of `session`. */
  decision(session: object, event: PolicyDecisionEvent): void {
    const running = this.#inFlight.get(session);
    const callId = running?.size === 1 ? [...running.keys()][0] : undefined;
    this.record({
      type: "decision",
      session: this.sessionId(session),
      ...this.#tenant(session),
      ...(callId ? { callId } : {}),
      ...event,
    });
  }

  /** Hooks the log into a toolbox: every call is recorded when it ends. */
  attach(box: AuditedToolBox): this {
    box.beforeToolCall(({ session, toolName, callId }) => {
      let running = this.#inFlight.get(session);
      if (running === undefined) this.#inFlight.set(session, running = new Map());
      running.set(callId ?? `${toolName}:${randomUUID()}`, { tool: toolName, started: Date.now() });
    });
    box.afterToolCall(({ session, result, args }) => {
      const r = result as Record<string, unknown>;
      const running = this.#inFlight.get(session);
      if (running) {
        const key = typeof r.callId === "string" && running.has(r.callId)
          ? r.callId
          : [...running.entries()].find(([, call]) => call.tool === r.toolName)?.[0];
        if (key !== undefined) running.delete(key);
      }
      const max = this.#options.maxOutputChars ?? 2_000;
      // Redacted whole, then cut: a cut must not leave part of a secret behind.
      const output = r.output === undefined ? undefined : this.#redactor.redactValue(r.output);
      const shown = output === undefined ? undefined : cut(JSON.stringify(output) ?? "", max);
      this.record({
        type: "call",
        session: this.sessionId(session),
        ...this.#tenant(session),
        ...(typeof r.callId === "string" ? { callId: r.callId } : {}),
        tool: r.toolName,
        arguments: args ?? {},
        status: r.status,
        ...(r.errorCode ? { errorCode: r.errorCode } : {}),
        ...(typeof r.error === "string" ? { error: cut(this.#redactor.redact(r.error), max) } : {}),
        ...(shown === undefined ? {} : { output: shown }),
        filesChanged: Array.isArray(r.filesystemChanges) ? r.filesystemChanges : [],
        durationMs: typeof r.latencyMs === "number" ? Math.round(r.latencyMs * 1000) / 1000 : undefined,
      });
    });
    return this;
  }

  #tenant(session: object): { tenant?: string } {
    const tenant = this.#options.tenantOf?.(session);
    return tenant === undefined ? {} : { tenant };
  }

  /** Closes the file. */
  close(): void {
    for (const log of [this.#main, ...this.#tenants.values()]) {
      if (log?.fd !== undefined) fs.closeSync(log.fd);
      if (log) log.fd = undefined;
    }
    this.#tenants.clear();
  }
}

interface LogFile {
  name: string;
  fd: number | undefined;
  size: number;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${textPrefix(text, max)}... (${text.length - max} more characters)`;
}

function shorten(value: unknown, chars: number, items: number): unknown {
  if (typeof value === "string") return cut(value, chars);
  if (Array.isArray(value)) return value.slice(0, items).map((item) => shorten(item, chars, items));
  if (value !== null && typeof value === "object") {
    // An object's names and their number are the client's too (arguments of 200,000 names kept them all).
    return Object.fromEntries(
      Object.entries(value).slice(0, items).map(([k, v]) => [cut(k, chars), shorten(v, chars, items)]),
    );
  }
  return value;
}

// A record past MAX_LINE_BYTES made to fit: its strings, lists and objects cut, then cut further, then its top-level
// values that are no object alone, marked `shortened`.
function bounded(record: AuditRecord): AuditRecord {
  let short: Record<string, unknown> = record;
  for (const [chars, items] of [[1_000, 100], [100, 10]]) {
    short = shorten(record, chars, items) as Record<string, unknown>;
    if (Buffer.byteLength(JSON.stringify(short)) <= MAX_LINE_BYTES) return short as AuditRecord;
  }
  const scalars = Object.entries(short).filter(([, value]) => value === null || typeof value !== "object");
  return { ...Object.fromEntries(scalars), time: record.time, type: record.type, shortened: true };
}
