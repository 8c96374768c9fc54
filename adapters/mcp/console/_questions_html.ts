// The questions list of the console's first page (also what the live updates send).

import type { PendingQuestion } from "./question_queue.ts";
import { diffBlock, esc, shownTime } from "./_html.ts";

function detail(label: string, value: string | undefined): string {
  return value === undefined ? "" : `<dt>${esc(label)}</dt><dd><code>${esc(value)}</code></dd>`;
}

function questionHtml(question: PendingQuestion, csrf: string): string {
  const about = question.about ?? {};
  const id = `q-${question.id}`;
  const reasons = about.reasons?.filter(Boolean) ?? [];
  const diff = about.after !== undefined
    ? diffBlock(
      about.path ?? "file",
      about.before,
      about.after,
      about.before === undefined ? "The new file" : "The change",
    )
    : "";
  const buttons = question.options.map((option) =>
    `<button type="submit" name="choice" value="${esc(option.value)}" id="${id}-${esc(option.value)}"` +
    ` class="${option.value === "deny" || option.value === "no" ? "deny" : "allow"}">${esc(option.label)}</button>`
  ).join("");
  return `<li><article class="question" id="${id}" aria-labelledby="${id}-title">
<h2 id="${id}-title">${esc(question.title)}</h2>
<p class="message">${esc(question.message)}</p>
<dl>${detail("Tool", about.tool)}${detail("Call", about.callId)}${detail("Command", about.command)}${
    detail("Path", about.path)
  }${detail("Rule", about.rule)}</dl>
${
    reasons.length
      ? `<p>Why it asks:</p><ul class="reasons">${reasons.map((r) => `<li>${esc(r)}</li>`).join("")}</ul>`
      : ""
  }
${diff}
<p class="when">Asked ${esc(shownTime(question.asked))}${
    question.expires ? `; refused if unanswered by ${esc(shownTime(question.expires))}` : ""
  }</p>
<form method="post" action="/questions/${esc(question.id)}" class="answers">
<input type="hidden" name="csrf" value="${esc(csrf)}">
<fieldset><legend>Answer</legend>${buttons}</fieldset>
</form></article></li>`;
}

/** The list of `pending` questions, or a line saying there are none. */
export function questionsHtml(pending: readonly PendingQuestion[], csrf: string): string {
  if (pending.length === 0) return `<p class="empty">No question is waiting.</p>`;
  return `<ol class="questions">${pending.map((q) => questionHtml(q, csrf)).join("\n")}</ol>`;
}
