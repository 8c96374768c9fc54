/**
 * Text from the model made safe to show a person: the characters a terminal or
 * a text view acts on instead of showing (C0 and C1 controls but the line feed
 * and the tab, DEL, the bidirectional and invisible format characters) are
 * written as `\u{1b}`. Before, a command line shown in a confirmation carried
 * them raw: `cat /secret #<ESC>[2K<CR>  ls -la` showed a person `  ls -la`.
 *
 * @module
 */

const HIDDEN =
  // deno-lint-ignore no-control-regex
  /[\0-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udd7f]/g;

/**
 * `text` with every character a terminal acts on, or a view hides or reorders,
 * written as its escape (`\u{1b}`, `\u{202e}`); the line feed and the tab stay.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { visibleText } from "@toolfence/policy";
 * visibleText("ls #\x1b[2K\r"); // "ls #\\u{1b}[2K\\u{d}"
 * ```
 */
export function visibleText(text: string): string {
  return text.replace(HIDDEN, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`);
}
