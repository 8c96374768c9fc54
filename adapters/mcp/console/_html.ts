// HTML of the console's pages, written as text with every value escaped. The
// pages work without script (forms post and redirect); /app.js only swaps in
// the questions list when the server says it changed.

import { createTwoFilesPatch } from "diff";
import { visibleText } from "@toolfence/policy";

/**
 * Escapes text for HTML content and attribute values, with every character a view hides or reorders written as its
 * escape (`\u{202e}`): the command, path, reasons and diff of a question, and the audit's records, come from the
 * agent, and a bidirectional override in them showed a person text in another order than the one that runs or is
 * written (the terminal's questions were shown so already; the console's were not).
 */
export function esc(value: unknown): string {
  return visibleText(String(value ?? "")).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A whole page. */
export function page(title: string, body: string, nav?: { tenant: string; csrf: string; current: string }): string {
  const links = nav
    ? `<nav aria-label="Console"><ul>
<li><a href="/"${nav.current === "questions" ? ' aria-current="page"' : ""}>Questions</a></li>
<li><a href="/audit"${nav.current === "audit" ? ' aria-current="page"' : ""}>Audit</a></li>
</ul>
<p class="who">Tenant <strong>${esc(nav.tenant)}</strong></p>
<form method="post" action="/logout"><input type="hidden" name="csrf" value="${esc(nav.csrf)}">
<button type="submit">Sign out</button></form></nav>`
    : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} - toolfence console</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head><body>
<header><p class="brand">toolfence console</p>${links}</header>
<main id="main"><h1>${esc(title)}</h1>
${body}
</main></body></html>`;
}

/** A unified diff of `before` and `after`, each line marked for its colour. */
export function diffBlock(name: string, before: string | undefined, after: string, label: string): string {
  const patch = createTwoFilesPatch(
    before === undefined ? "/dev/null" : name,
    name,
    before ?? "",
    after,
    undefined,
    undefined,
    { context: 3 },
  );
  const lines = patch.split("\n").filter((line) =>
    line !== "" && !line.startsWith("\\") && !line.startsWith("====") && !line.startsWith("Index: ")
  );
  const shown = lines.map((line) => {
    const kind = line.startsWith("+") && !line.startsWith("+++")
      ? "add"
      : line.startsWith("-") && !line.startsWith("---")
      ? "del"
      : line.startsWith("@@")
      ? "hunk"
      : "ctx";
    return `<span class="${kind}">${esc(line)}</span>`;
  });
  return `<figure class="diff"><figcaption>${esc(label)}</figcaption><pre>${shown.join("\n")}</pre></figure>`;
}

/** The time a person reads: `2026-12-02 03:04:05 UTC`. */
export function shownTime(iso: string): string {
  return iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC");
}
