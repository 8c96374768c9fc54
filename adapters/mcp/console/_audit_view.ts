// The audit view: the log's records of one tenant, filtered, as a table, a
// timeline plot (inline SVG made here: no chart library) and a call's detail.

import fs from "node:fs";
import { open } from "node:fs/promises";
import { AuditLog } from "@toolfence/policy";
import { diffBlock, esc, shownTime } from "./_html.ts";

/** One record of the audit log (see `AuditLog` in `@toolfence/policy`). */
export type AuditEntry = Record<string, unknown> & { time: string; type: "call" | "decision" };

/** The filters of the audit page, from its query. */
export interface AuditFilter {
  tool?: string;
  decision?: string;
  from?: string;
  to?: string;
}

// The newest records shown: the file is read whole (it rotates at 10 MiB by default).
const MAX_RECORDS = 2_000;

/**
 * The records of `tenant`, oldest first: those of its own file beside `file` (and of its newest rotated file), where
 * the log keeps each tenant's records apart, so that no other tenant's volume rotates them away.
 */
export async function readAudit(file: string, tenant: string): Promise<AuditEntry[]> {
  const own = AuditLog.tenantFile(file, tenant);
  const texts = await Promise.all([`${own}.1`, own].map((f) => readLogFile(f).catch(() => "")));
  const entries: AuditEntry[] = [];
  for (const line of texts.join("\n").split("\n")) {
    if (line.trim() === "") continue;
    try {
      const record = JSON.parse(line) as AuditEntry;
      // A record without a tenant is shown to nobody: whose it is cannot be told.
      if (record.tenant === tenant && typeof record.time === "string") entries.push(record);
    } catch {
      // A line cut by a crash is skipped.
    }
  }
  return entries.slice(-MAX_RECORDS);
}

// A log file as the log wrote it: a link at its name (a log in a folder commands write) is not followed, nor is a
// FIFO waited on, nor anything but a regular file read.
async function readLogFile(file: string): Promise<string> {
  const handle = await open(
    file,
    fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0),
  );
  try {
    if (!(await handle.stat()).isFile()) return "";
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/** What a record's outcome is called in the filter: a call's status, a decision's decision. */
export function outcomeOf(entry: AuditEntry): string {
  return String(entry.type === "call" ? entry.status : entry.decision);
}

function nameOf(entry: AuditEntry): string {
  return String(entry.type === "call" ? entry.tool : `${entry.kind}`);
}

/** The entries that pass `filter`. */
export function filterAudit(entries: readonly AuditEntry[], filter: AuditFilter): AuditEntry[] {
  const from = filter.from ? Date.parse(filter.from) : NaN;
  const to = filter.to ? Date.parse(filter.to) : NaN;
  // A decision belongs to its call's tool.
  const toolOfCall = new Map<string, string>();
  for (const e of entries) {
    if (e.type === "call" && e.callId) toolOfCall.set(`${e.session}/${e.callId}`, String(e.tool));
  }
  return entries.filter((e) => {
    const tool = e.type === "call" ? String(e.tool) : toolOfCall.get(`${e.session}/${e.callId}`);
    if (filter.tool && tool !== filter.tool) return false;
    if (filter.decision && outcomeOf(e) !== filter.decision) return false;
    const t = Date.parse(e.time);
    if (!Number.isNaN(from) && t < from) return false;
    if (!Number.isNaN(to) && t > to) return false;
    return true;
  });
}

const COLOURS: Record<string, string> = {
  ok: "#1a7f37",
  allow: "#1a7f37",
  error: "#cf222e",
  deny: "#cf222e",
  skipped: "#9a6700",
  ask: "#9a6700",
  cancelled: "#57606a",
  timeout: "#8250df",
};

/** The timeline: calls on one row, decisions on the other, by time. */
export function timelineSvg(entries: readonly AuditEntry[]): string {
  const width = 800, height = 120, left = 90, right = 10;
  if (entries.length === 0) return "";
  const times = entries.map((e) => Date.parse(e.time));
  const start = Math.min(...times), end = Math.max(...times);
  const span = Math.max(end - start, 1);
  const x = (t: number) => left + ((t - start) / span) * (width - left - right);
  const rows = { call: 35, decision: 80 };
  const marks = entries.map((e, i) => {
    const outcome = outcomeOf(e);
    const colour = COLOURS[outcome] ?? "#0969da";
    const label = `${shownTime(e.time)} ${e.type} ${nameOf(e)}: ${outcome}`;
    return `<circle cx="${x(times[i]).toFixed(1)}" cy="${rows[e.type]}" r="5" fill="${colour}"><title>${
      esc(label)
    }</title></circle>`;
  });
  const calls = entries.filter((e) => e.type === "call").length;
  const summary = `${calls} calls and ${entries.length - calls} decisions from ${shownTime(entries[0].time)} to ${
    shownTime(entries[entries.length - 1].time)
  }`;
  return `<figure class="timeline"><svg viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="timeline-title">
<title id="timeline-title">Timeline: ${esc(summary)}</title>
<text x="0" y="${rows.call + 4}">Calls</text><text x="0" y="${rows.decision + 4}">Decisions</text>
<line x1="${left}" x2="${width - right}" y1="${rows.call}" y2="${rows.call}" stroke="#d0d7de"/>
<line x1="${left}" x2="${width - right}" y1="${rows.decision}" y2="${rows.decision}" stroke="#d0d7de"/>
<text x="${left}" y="${height - 5}">${esc(shownTime(entries[0].time))}</text>
<text x="${width - right}" y="${height - 5}" text-anchor="end">${
    esc(shownTime(entries[entries.length - 1].time))
  }</text>
${marks.join("\n")}
</svg><figcaption>${
    esc(summary)
  }. Green: allowed or ok; red: denied or failed; amber: asked or skipped.</figcaption></figure>`;
}

function callLink(e: AuditEntry): string {
  if (e.type !== "call" || typeof e.callId !== "string") return esc(nameOf(e));
  return `<a href="/audit/calls/${encodeURIComponent(String(e.session))}/${encodeURIComponent(e.callId)}">${
    esc(nameOf(e))
  }</a>`;
}

function subjectOf(e: AuditEntry): string {
  if (e.type === "decision") return String(e.subject ?? "");
  const args = e.arguments as Record<string, unknown> | undefined;
  const main = args?.command ?? args?.path ?? args?.pattern;
  return main === undefined ? JSON.stringify(args ?? {}) : String(main);
}

/** The filter form, the timeline and the table. */
export function auditHtml(all: readonly AuditEntry[], shown: readonly AuditEntry[], filter: AuditFilter): string {
  const tools = [...new Set(all.filter((e) => e.type === "call").map((e) => String(e.tool)))].sort();
  const outcomes = [...new Set(all.map(outcomeOf))].sort();
  const select = (name: string, label: string, values: string[], chosen?: string) =>
    `<p><label for="f-${name}">${label}</label> <select id="f-${name}" name="${name}"><option value="">any</option>${
      values.map((v) => `<option${v === chosen ? " selected" : ""}>${esc(v)}</option>`).join("")
    }</select></p>`;
  const rows = [...shown].reverse().map((e) =>
    `<tr><td>${esc(shownTime(e.time))}</td><td>${e.type}</td><td>${callLink(e)}</td><td><code>${
      esc(subjectOf(e).slice(0, 200))
    }</code></td><td class="o-${esc(outcomeOf(e))}">${esc(outcomeOf(e))}</td><td>${esc(e.answeredBy ?? "")}</td></tr>`
  );
  return `<form method="get" action="/audit" class="filters" aria-label="Filter the audit">
${select("tool", "Tool", tools, filter.tool)}${select("decision", "Decision or status", outcomes, filter.decision)}
<p><label for="f-from">From</label> <input id="f-from" name="from" type="datetime-local" step="1" value="${
    esc(filter.from ?? "")
  }"></p>
<p><label for="f-to">To</label> <input id="f-to" name="to" type="datetime-local" step="1" value="${
    esc(filter.to ?? "")
  }"></p>
<p><button type="submit">Filter</button></p></form>
${timelineSvg(shown)}
<div class="table"><table><caption>${shown.length} of ${all.length} records, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Record</th><th scope="col">Tool or kind</th><th scope="col">Subject</th><th scope="col">Outcome</th><th scope="col">Answered by</th></tr></thead>
<tbody>${rows.join("\n")}</tbody></table></div>`;
}

// The text a call's arguments say it wrote, as a diff: edit_file's old and new text, write_file's content.
function argumentsDiff(e: AuditEntry): string {
  const args = (e.arguments ?? {}) as Record<string, unknown>;
  const name = typeof args.path === "string" ? args.path : "file";
  if (typeof args.old_text === "string" && typeof args.new_text === "string") {
    return diffBlock(name, args.old_text, args.new_text, "The edit (from the call's arguments)");
  }
  if (typeof args.content === "string") {
    return diffBlock(name, undefined, args.content, "The text written (from the call's arguments)");
  }
  return "";
}

/** A call's detail: arguments, result, changes and the decisions made during it. */
export function callHtml(call: AuditEntry, decisions: readonly AuditEntry[]): string {
  const changes = Array.isArray(call.filesChanged) ? call.filesChanged as Record<string, unknown>[] : [];
  const changeRows = changes.map((c) =>
    `<tr><td><code>${esc(c.path)}</code></td><td>${esc(c.change)}${
      c.from ? ` from <code>${esc(c.from)}</code>` : ""
    }</td><td>${esc(JSON.stringify(c.before))}</td><td>${esc(JSON.stringify(c.after))}</td></tr>`
  );
  return `<dl class="call"><dt>Tool</dt><dd>${esc(call.tool)}</dd><dt>Call</dt><dd><code>${esc(call.callId)}</code></dd>
<dt>Time</dt><dd>${esc(shownTime(call.time))}</dd><dt>Status</dt><dd class="o-${esc(call.status)}">${esc(call.status)}${
    call.errorCode ? ` (${esc(call.errorCode)})` : ""
  }</dd><dt>Duration</dt><dd>${esc(call.durationMs)} ms</dd></dl>
<h2>Arguments</h2><pre>${esc(JSON.stringify(call.arguments, null, 2))}</pre>
<h2>Result</h2>${call.error ? `<p class="error">${esc(call.error)}</p>` : ""}<pre>${
    esc(call.output ?? "(no output)")
  }</pre>
<h2>Filesystem changes</h2>${
    changeRows.length
      ? `<div class="table"><table><thead><tr><th scope="col">Path</th><th scope="col">Change</th><th scope="col">Before</th><th scope="col">After</th></tr></thead><tbody>${
        changeRows.join("")
      }</tbody></table></div>`
      : "<p>None.</p>"
  }
${argumentsDiff(call)}
<h2>Decisions during the call</h2>${
    decisions.length
      ? `<ul>${
        decisions.map((d) =>
          `<li>${esc(shownTime(d.time))}: ${esc(d.kind)} <code>${esc(d.subject)}</code>: <strong>${
            esc(d.decision)
          }</strong> by ${esc(d.answeredBy)}${d.reason ? ` (${esc(d.reason)})` : ""}</li>`
        ).join("")
      }</ul>`
      : "<p>None.</p>"
  }`;
}
