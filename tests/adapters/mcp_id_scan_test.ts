// The id scanner that names an oversized request in its error reply: it must
// find the top-level id wherever it stands, split across any chunks, and never
// take an "id" nested deeper or inside a string for it.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { IdScanner } from "../../adapters/mcp/_id_scan.ts";

const encoder = new TextEncoder();

function scan(text: string, cuts: number[] = []): string | number | undefined {
  const bytes = encoder.encode(text);
  const scanner = new IdScanner();
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    const to = Math.min(bytes.length, cut);
    scanner.push(bytes.subarray(at, to));
    at = Math.max(at, to);
  }
  scanner.push(bytes.subarray(at));
  return scanner.id;
}

const id = fc.oneof(fc.string({ maxLength: 40 }), fc.integer({ min: -(2 ** 40), max: 2 ** 40 }));
// Other members, with decoys: nested objects holding their own "id", strings that spell one.
const member = fc.oneof(
  fc.tuple(fc.string({ maxLength: 8 }).filter((k) => k !== "id"), fc.jsonValue({ maxDepth: 3 })),
  fc.tuple(fc.constant("params"), fc.record({ id: fc.jsonValue({ maxDepth: 2 }), text: fc.constant('"id": 7') })),
);

describe("the id of an oversized message is read from its bytes", () => {
  test("the top-level id, wherever it stands and however the bytes are cut", { timeout: 60_000 }, () => {
    fc.assert(
      fc.property(
        id,
        fc.array(member, { maxLength: 5 }),
        fc.nat(5),
        fc.array(fc.nat(400), { maxLength: 6 }),
        (value, members, position, cuts) => {
          const entries = members.filter(([k], i) => members.findIndex(([j]) => j === k) === i);
          entries.splice(Math.min(position, entries.length), 0, ["id", value]);
          const text = JSON.stringify(Object.fromEntries(entries), null, position % 2 === 0 ? undefined : 1);
          assert.equal(scan(text, cuts), value, text);
        },
      ),
      { numRuns: 1000 },
    );
  });

  test("no id, an unusable id, or an id only deeper down: unknown", { timeout: 60_000 }, () => {
    for (
      const text of [
        '{"jsonrpc":"2.0","method":"x","params":{"id":5}}',
        '{"params":{"id":"deep"},"text":"\\"id\\":3"}',
        '{"id":null,"method":"x"}',
        '{"id":1.5,"method":"x"}',
        '{"id":{"a":1},"method":"x"}',
        '{"id":[1],"method":"x"}',
        `{"id":${"9".repeat(30)}}`,
        '["id", 5]',
        "not json at all",
      ]
    ) {
      assert.equal(scan(text), undefined, text);
    }
  });

  test("a message cut right after its numeric id still names it", { timeout: 60_000 }, () => {
    assert.equal(scan('{"method":"x","id":42'), 42);
    assert.equal(scan('{"id":"a\\"b\\\\c","method":"x"'), 'a"b\\c');
  });
});
