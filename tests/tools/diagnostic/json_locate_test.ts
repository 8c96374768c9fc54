import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { locateJsonError } from "../../../tools/diagnostic/_json_locate.ts";

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

test("locateJsonError agrees with JSON.parse on what is valid", { timeout: 60_000 }, () => {
  const pieces = fc.constantFrom(
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    '"',
    '"a"',
    "1",
    "-",
    "0",
    "01",
    "1.5",
    "1e3",
    "1.",
    "true",
    "tru",
    "null",
    " ",
    "\n",
    "\\",
    "\\u00e9",
    "\\x",
    "\t",
    "\u0001",
  );
  fc.assert(
    fc.property(fc.array(pieces, { maxLength: 12 }), (parts) => {
      const text = parts.join("");
      assert.equal(locateJsonError(text) === undefined, parses(text), JSON.stringify(text));
    }),
    { numRuns: 5000 },
  );
  fc.assert(
    fc.property(fc.jsonValue(), fc.constantFrom(0, 2), (value, indent) => {
      assert.equal(locateJsonError(JSON.stringify(value, null, indent)), undefined);
    }),
  );
});
