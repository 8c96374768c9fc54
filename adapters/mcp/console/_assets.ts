// The console's script and style sheet, served as files so that the pages'
// Content-Security-Policy allows no inline script or style.

/** /app.js: live updates of the questions list (Server-Sent Events), keeping the keyboard focus. */
export const APP_JS = `"use strict";
(() => {
  const list = document.getElementById("questions");
  if (!list || !("EventSource" in window)) return;
  const status = document.getElementById("live-status");
  const events = new EventSource("/events");
  events.addEventListener("questions", (event) => {
    const data = JSON.parse(event.data);
    const focused = document.activeElement && list.contains(document.activeElement) ? document.activeElement.id : "";
    const before = list.querySelectorAll("article.question").length;
    list.innerHTML = data.html;
    const after = list.querySelectorAll("article.question").length;
    if (focused) {
      const again = document.getElementById(focused);
      if (again) again.focus();
      else if (list.querySelector("button")) list.querySelector("button").focus();
    }
    list.setAttribute("aria-busy", "false");
    if (status && after !== before) status.textContent = after + (after === 1 ? " question is" : " questions are") + " waiting.";
  });
  events.addEventListener("error", () => {
    if (status) status.textContent = "Live updates paused; reconnecting.";
  });
})();
`;

/** /app.css: readable from a phone's width up. */
export const APP_CSS = `
:root { color-scheme: light; font-family: system-ui, sans-serif; line-height: 1.4; }
body { margin: 0; color: #1f2328; background: #f6f8fa; }
header { background: #24292f; color: #fff; padding: .5rem 1rem; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; }
header a, header .brand { color: #fff; }
header .brand { font-weight: 700; margin: 0; }
nav { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; }
nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
nav a[aria-current] { font-weight: 700; text-decoration-thickness: 3px; }
nav .who { margin: 0; }
main { padding: 1rem; max-width: 60rem; margin: 0 auto; }
ol.questions { list-style: none; padding: 0; }
article.question { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: 1rem; margin-bottom: 1rem; overflow-wrap: anywhere; }
article.question h2 { margin-top: 0; font-size: 1.2rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dd { margin: 0; }
fieldset { border: 0; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .5rem; }
legend { font-weight: 600; margin-bottom: .25rem; }
button { font: inherit; padding: .5rem .9rem; border-radius: 6px; border: 1px solid #8c959f; background: #fff; cursor: pointer; }
button.allow { border-color: #1a7f37; }
button.deny { border-color: #cf222e; }
:focus-visible { outline: 3px solid #0969da; outline-offset: 2px; }
.diff pre, pre { background: #fff; border: 1px solid #d0d7de; padding: .5rem; overflow-x: auto; white-space: pre-wrap; }
.diff .add { background: #dafbe1; } .diff .del { background: #ffebe9; } .diff .hunk { color: #8250df; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; }
.filters p { margin: 0; }
.timeline svg { width: 100%; height: auto; background: #fff; border: 1px solid #d0d7de; font-size: 12px; }
.table { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left; vertical-align: top; }
.o-ok, .o-allow { color: #1a7f37; } .o-error, .o-deny { color: #cf222e; }
.notice { background: #ddf4ff; border: 1px solid #54aeff; padding: .5rem; border-radius: 6px; }
.error { color: #cf222e; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
@media (max-width: 30rem) { dl { grid-template-columns: 1fr; } main { padding: .5rem; } }
`;
