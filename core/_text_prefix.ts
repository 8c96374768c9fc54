// Cutting text for a message without splitting a surrogate pair: its first or last units, or its middle; and text made
// well-formed.

/**
 * The first `max` UTF-16 units of `text`, one fewer when the cut would fall inside a surrogate pair: a cut text
 * (a quoted command, a value in a message) never ends in a lone surrogate.
 *
 * @example
 * ```ts
 * import { textPrefix } from "@toolfence/core";
 * console.log(textPrefix("a\u{1F600}", 2)); // "a"
 * ```
 */
export function textPrefix(text: string, max: number): string {
  const end = Math.max(0, Math.min(max, text.length));
  return text.slice(0, end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) ? end - 1 : end);
}

/**
 * The last `max` UTF-16 units of `text`, one fewer when the cut would fall inside a surrogate pair: a cut text never
 * starts with a lone surrogate.
 */
export function textSuffix(text: string, max: number): string {
  const length = Math.max(0, Math.min(max, text.length));
  if (length === 0) return "";
  const start = text.length - length;
  return text.slice(start > 0 && isLowSurrogate(text.charCodeAt(start)) ? start + 1 : start);
}

/**
 * The head and tail of `text` (one over `cap` characters) within `cap`, with `markerFor(omitted)` between them naming
 * how much was cut. Never a cut between the halves of a surrogate pair: a lone surrogate is not well-formed
 * text (a Python client's UTF-8 encode raises on it, and an API that parses the request strictly refuses it as invalid
 * JSON).
 */
export function cutMiddle(
  text: string,
  cap: number,
  markerFor: (omitted: number) => string,
): { text: string; omitted: number } {
  const room = Math.max(0, cap - markerFor(text.length).length);
  const head = Math.ceil(room / 2);
  const start = textPrefix(text, head);
  const end = textSuffix(text, room - head);
  const omitted = text.length - start.length - end.length;
  return { text: start + markerFor(omitted) + end, omitted };
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

// String.prototype.isWellFormed and toWellFormed (ES2024; in every engine the packages support, Node 22 and Deno 2, but
// outside the npm build's ES2022 library types).

/** Whether `text` holds no lone surrogate: false when a high surrogate is not followed by a low one or a low one stands alone. */
export const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * `text` with each lone surrogate replaced by U+FFFD, as a UTF-8 encoder writes it: text every client and API can
 * carry. Strict JSON parsers refuse a lone surrogate ("\ud800"), Anthropic's API among them ("The request body is not
 * valid JSON: no low surrogate in string"), and Python's UTF-8 encode raises on one.
 *
 * @example
 * ```ts
 * import { wellFormed } from "@toolfence/core";
 * console.log(wellFormed("a\ud800b")); // "a\ufffdb"
 * ```
 */
export function wellFormed(text: string): string {
  return isWellFormed(text) ? text : (text as unknown as { toWellFormed(): string }).toWellFormed();
}
