/**
 * `toolfence audit`: reads, follows and filters an audit log (JSON lines).
 * A line that is not complete (a server killed while writing) or not JSON
 * is skipped, and counted on stderr.
 *
 * @module
 */
import fs from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import process from "node:process";
import { CliUsageError, parseCommand } from "./usage.ts";
import { withStore } from "./_store.ts";

/** The help of `toolfence audit`. */
export const AUDIT_HELP = `Usage: toolfence audit FILE [options]
       toolfence audit --store ADDRESS [options]

Prints the records of an audit log (one JSON object a line), oldest first,
with the rotated files (FILE.3, FILE.2, FILE.1) before FILE when --rotated is given.
With --store, prints the records a fleet of serve --http replicas kept in their
shared store (sqlite:PATH or postgres://USER@HOST:PORT/DB), every replica's.

Options:
  --store ADDRESS   read the fleet's store instead of a file
  --tenant NAME     only this tenant's records (with --store)
  --follow          keep printing records as they are written (until interrupted)
  --rotated         read the rotated files too
  --type T          call | decision
  --tool NAME       only this tool's calls
  --status S        only calls with this status (success, error, skipped, ...)
  --decision D      only decisions that were allow | ask | deny
  --session ID      only this session
  --since TIME      only records at or after this ISO time
  --grep TEXT       only records whose JSON contains TEXT
  --pretty          one readable line per record instead of JSON
  -h, --help        show this help`;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  follow: { type: "boolean" },
  rotated: { type: "boolean" },
  type: { type: "string" },
  tool: { type: "string" },
  status: { type: "string" },
  decision: { type: "string" },
  session: { type: "string" },
  since: { type: "string" },
  grep: { type: "string" },
  pretty: { type: "boolean" },
  store: { type: "string" },
  tenant: { type: "string" },
} as const;

type Values = ReturnType<typeof parseCommand<typeof OPTIONS>>["values"];

/** Whether a record passes the filters. */
export function matches(record: Record<string, unknown>, values: Values, line: string): boolean {
  if (values.type && record.type !== values.type) return false;
  if (values.tool && record.tool !== values.tool) return false;
  if (values.status && record.status !== values.status) return false;
  if (values.decision && record.decision !== values.decision) return false;
  if (values.session && record.session !== values.session) return false;
  if (values.since && !(typeof record.time === "string" && record.time >= values.since)) return false;
  if (values.grep && !line.includes(values.grep)) return false;
  return true;
}

function pretty(record: Record<string, unknown>): string {
  if (record.type === "call") {
    return `${record.time} call ${record.tool} ${record.status}${record.errorCode ? ` (${record.errorCode})` : ""} ${
      JSON.stringify(record.arguments)
    } ${record.durationMs ?? "?"}ms`;
  }
  const rule = record.rule as { pattern?: string; layer?: string } | undefined;
  return `${record.time} decision ${record.kind} ${record.decision} by ${record.answeredBy}${
    rule ? ` (rule ${JSON.stringify(rule.pattern)} in ${rule.layer})` : ""
  }: ${record.subject}`;
}

class Printer {
  skipped = 0;
  constructor(readonly values: Values) {}

  /** Prints the complete lines of `text`; returns the incomplete tail. */
  feed(text: string): string {
    const lines = text.split("\n");
    const tail = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim() === "") continue;
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line);
      } catch {
        this.skipped++;
        continue;
      }
      if (!matches(record, this.values, line)) continue;
      process.stdout.write(`${this.values.pretty ? pretty(record) : line}\n`);
    }
    return tail;
  }
}

/** Prints the store's audit records, following it with --follow. */
function printStore(address: string, values: Values): Promise<number> {
  return withStore(address, async (store) => {
    const printer = new Printer(values);
    let afterSeq = 0;
    do {
      const records = await store.audit({ tenant: values.tenant, afterSeq });
      if (records.length > 0) afterSeq = records[records.length - 1].seq;
      printer.feed(records.map((item) => `${JSON.stringify(item.record)}\n`).join(""));
      if (values.follow) await sleep(500);
    } while (values.follow);
    return 0;
  });
}

function readFrom(file: string, offset: number): { text: string; size: number } {
  const fd = fs.openSync(file, "r");
  try {
    const size = fs.fstatSync(fd).size;
    if (size <= offset) return { text: "", size };
    const buffer = new Uint8Array(size - offset);
    let read = 0;
    while (read < buffer.length) {
      const n = fs.readSync(fd, buffer, read, buffer.length - read, offset + read);
      if (n === 0) break;
      read += n;
    }
    return { text: new TextDecoder().decode(buffer.subarray(0, read)), size: offset + read };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Runs `toolfence audit` with `args`; returns the exit code (1 when the log
 * cannot be read).
 *
 * Requires `--allow-read` for the log.
 *
 * @example
 * ```ts
 * import { auditCommand } from "./audit.ts";
 * await auditCommand(["/var/log/toolfence.jsonl", "--type", "decision", "--decision", "deny"]);
 * ```
 */
export async function auditCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand("audit", args, OPTIONS);
  if (values.help) {
    process.stdout.write(`${AUDIT_HELP}\n`);
    return 0;
  }
  const [file, ...extra] = positionals;
  if (values.tenant !== undefined && values.store === undefined) {
    throw new CliUsageError("--tenant reads a store: give --store too", "audit");
  }
  if (values.store !== undefined) {
    if (file !== undefined) throw new CliUsageError("give either a log file or --store, not both", "audit");
    return await printStore(values.store, values);
  }
  if (file === undefined) {
    throw new CliUsageError("audit needs the log file, e.g. audit toolfence-audit.jsonl", "audit");
  }
  if (extra.length > 0) throw new CliUsageError(`Unexpected argument ${JSON.stringify(extra[0])}`, "audit");
  if (values.type && values.type !== "call" && values.type !== "decision") {
    throw new CliUsageError(`--type must be call or decision, not ${JSON.stringify(values.type)}`, "audit");
  }
  const printer = new Printer(values);
  if (values.rotated) {
    for (let i = 9; i >= 1; i--) {
      if (!fs.existsSync(`${file}.${i}`)) continue;
      const { text } = readFrom(`${file}.${i}`, 0);
      printer.feed(text);
    }
  }
  let offset = 0;
  let tail = "";
  try {
    const first = readFrom(file, 0);
    tail = printer.feed(first.text);
    offset = first.size;
  } catch (error) {
    process.stderr.write(`toolfence: the audit log ${file} cannot be read: ${(error as Error).message}\n`);
    return 1;
  }
  while (values.follow) {
    await sleep(200);
    let size: number;
    try {
      size = fs.statSync(file).size;
    } catch {
      continue; // Being rotated.
    }
    if (size < offset) {
      // Rotated: the new file starts over.
      offset = 0;
      tail = "";
    }
    const next = readFrom(file, offset);
    offset = next.size;
    tail = printer.feed(tail + next.text);
  }
  if (tail.trim() !== "") printer.skipped++;
  if (printer.skipped > 0) {
    process.stderr.write(`toolfence: ${printer.skipped} incomplete or unreadable line(s) skipped\n`);
  }
  return 0;
}
