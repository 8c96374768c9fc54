// Cutting text for a message without splitting a surrogate pair: its first or last units.

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

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
