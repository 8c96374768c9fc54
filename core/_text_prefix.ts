// Cutting text for a message without splitting a surrogate pair.

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

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
