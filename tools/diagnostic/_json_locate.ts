/**
 * Finds where strict JSON (RFC 8259) goes wrong. `JSON.parse` decides whether
 * a text is valid, but V8's messages no longer say where it failed.
 *
 * @module
 */

/** The offset of the first error in `text` and what was expected there; undefined when it is valid JSON. */
export function locateJsonError(text: string): { offset: number; message: string } | undefined {
  let i = 0;
  const fail = (message: string): never => {
    throw { offset: i, message };
  };
  const shown = () => i >= text.length ? "end of input" : JSON.stringify(text[i]);
  const space = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(`Unexpected ${shown()} (expected a value)`);
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) fail("Unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) return void i++;
      if (c < 0x20) fail("Control character in string (escape it)");
      if (c === 0x5c) {
        i++;
        if (text[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail("Invalid \\u escape");
          i += 5;
        } else if (i < text.length && '"\\/bfnrt'.includes(text[i])) i++;
        else fail(`Invalid escape \\${text[i] ?? ""}`);
      } else i++;
    }
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match || match[0] === "-") fail(`Unexpected ${shown()} (expected a number)`);
    i += match![0].length;
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === "{") {
      i++;
      space();
      if (text[i] === "}") return void i++;
      for (;;) {
        space();
        if (text[i] !== '"') fail(`Unexpected ${shown()} (expected a property name in double quotes)`);
        string();
        space();
        if (text[i] !== ":") fail(`Unexpected ${shown()} (expected ':')`);
        i++;
        value();
        space();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") return void i++;
        fail(`Unexpected ${shown()} (expected ',' or '}')`);
      }
    }
    if (c === "[") {
      i++;
      space();
      if (text[i] === "]") return void i++;
      for (;;) {
        value();
        space();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") return void i++;
        fail(`Unexpected ${shown()} (expected ',' or ']')`);
      }
    }
    if (c === '"') return string();
    if (c === "t") return literal("true");
    if (c === "f") return literal("false");
    if (c === "n") return literal("null");
    if (c === "-" || (c >= "0" && c <= "9")) return number();
    fail(`Unexpected ${shown()} (expected a value)`);
  };
  try {
    value();
    space();
    if (i < text.length) fail(`Unexpected ${shown()} after the end of the JSON value`);
    return undefined;
  } catch (error) {
    if (typeof (error as { offset?: unknown }).offset === "number") return error as { offset: number; message: string };
    throw error;
  }
}
