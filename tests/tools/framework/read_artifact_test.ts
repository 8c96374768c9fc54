import { describe, test } from "node:test";
import { artifactUri } from "../../../adapters/mcp/server.ts";
import assert from "node:assert/strict";
import { ToolBox } from "../../../toolbox.ts";
import { frameworkTools } from "../../../tools/framework/mod.ts";
import { withSession } from "../../core/_helpers.ts";

const box = new ToolBox().register(...frameworkTools());

describe("read_artifact", () => {
  test("pages through a text artifact", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const { id } = await session.artifacts.put("0123456789".repeat(5));
      const first = await box.call(session, "read_artifact", { id, limit: 20 });
      assert.deepEqual(first.output, {
        id,
        content: "01234567890123456789",
        offset: 0,
        totalChars: 50,
        nextOffset: 20,
      });
      const last = await box.call(session, "read_artifact", { id, offset: 40, limit: 20 });
      assert.deepEqual(last.output, { id, content: "0123456789", offset: 40, totalChars: 50 });
    });
  });

  test("reads the artifact:// URI that MCP clients are shown, as its id", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const ref = await session.artifacts.put("0123456789");
      const uri = artifactUri(ref);
      assert.equal(uri, `artifact://sha256/${ref.sha256}`);
      const r = await box.call(session, "read_artifact", { id: uri, offset: 2, limit: 3 });
      assert.deepEqual(r.output, { id: ref.id, content: "234", offset: 2, totalChars: 10, nextOffset: 5 });
      for (
        const bad of [
          `artifact://sha256/${ref.sha256.toUpperCase()}`,
          `artifact://sha256/${ref.sha256}/`,
          `artifact://sha256/${ref.sha256.slice(1)}`,
          `artifact://sha512/${ref.sha256}`,
          `file:///sha256/${ref.sha256}`,
          ` artifact://sha256/${ref.sha256}`,
          `artifact://sha256/../${ref.sha256}`,
          ref.sha256,
        ]
      ) {
        const refused = await box.call(session, "read_artifact", { id: bad });
        assert.equal(refused.errorCode, "invalid_artifact_id", bad);
        assert.match(refused.error!, /artifact:\/\/sha256\/<64 hex digits>/);
      }
    });
  });

  test("unknown and malformed ids, and oversized windows, are clear errors", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const unknown = await box.call(session, "read_artifact", { id: `sha256:${"0".repeat(64)}` });
      assert.equal(unknown.errorCode, "unknown_artifact");
      const malformed = await box.call(session, "read_artifact", { id: "nope" });
      assert.equal(malformed.errorCode, "invalid_artifact_id");
      const { id } = await session.artifacts.put("x");
      assert.equal((await box.call(session, "read_artifact", { id, limit: 30_001 })).errorCode, "invalid_arguments");
      assert.equal((await box.call(session, "read_artifact", { id, offset: -1 })).errorCode, "invalid_arguments");
    });
  });
});
