// The frame around text written by web pages: the model is told that what is
// inside is data, not instructions, and the page must not be able to end the
// frame early and write instructions after it.
//
// Two walls, either enough on its own:
// - The frame's tags carry an id drawn at random for each frame
//   (`<untrusted-web-content id="…">` … `</untrusted-web-content id="…">`):
//   the page cannot know it, so any closing tag it writes is not this one.
// - No tag of any spelling can start inside: every `<`, `>` and `&` of the
//   page's text is written as its entity (`&lt;` `&gt;` `&amp;`, so an entity
//   the page wrote stays visible as text), and every character that Unicode
//   folds into one of them (compatibility forms such as `＜` and `﹤`, `≮`)
//   or that is a listed look-alike of an angle bracket (`‹`, `〈`, `˂`…) as
//   its numeric reference. Capitals, spaces, attributes, zero-width or
//   combining characters change nothing: there is no `<` left to start a tag.

/** The frame's tag name. */
export const FRAME_TAG = "untrusted-web-content";

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

// The angle-bracket look-alikes of Unicode's confusables list, and every code point NFKD folds into `<`, `>`, `&`
// or one of them (tests check the list against all of Unicode).
const FOLDS_OR_LOOKS_LIKE =
  /[&<>\u226e\u226f\ufe64\ufe65\uff1c\uff1e\ufe60\uff06\u02c2\u02c3\u1438\u1433\u16b2\u2039\u203a\u2329\u232a\u276c\u276d\u276e\u276f\u27e8\u27e9\u29fc\u29fd\u3008\u3009\ufe3f\ufe40\u{1d236}\u{1d237}]/gu;

/** The page's text with no character left that could start or end a tag (see the notes above). */
export function escapeUntrusted(text: string): string {
  return text.replace(FOLDS_OR_LOOKS_LIKE, (c) => ENTITIES[c] ?? `&#x${c.codePointAt(0)!.toString(16)};`);
}

/** A fresh frame id: 16 random hex digits. */
function frameId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * `body`, written by web pages, framed: the opening tag with a fresh id and
 * `note` (what the model should know of it), the escaped body, and the
 * closing tag with the same id.
 */
export function frameUntrusted(body: string, note: string): string {
  const id = frameId();
  return `<${FRAME_TAG} id="${id}"> (${note}; it ends only at the closing tag with the id ${id}; ` +
    "its angle brackets and ampersands are written as HTML entities)\n" +
    `${escapeUntrusted(body)}\n</${FRAME_TAG} id="${id}">`;
}
