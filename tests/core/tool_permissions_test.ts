// A tool's `permissions` list is checked when the tool is made and when it is
// registered: a misspelled entry is refused, naming it and the valid ones.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { ToolBox } from "../../core/toolbox.ts";
import { type AnyTool, tool } from "../../core/tool.ts";

describe("a tool's permissions", () => {
  test("a misspelled entry is refused, naming it and the valid ones", { timeout: 10_000 }, () => {
    assert.throws(
      () =>
        tool({
          name: "typo",
          description: "d",
          input: v.object({}),
          run: () => 1,
          permissions: ["read", "wirte"] as never,
        }),
      (error: Error) =>
        /"wirte"/.test(error.message) &&
        ["read", "write", "run", "net", "env", "sys"].every((name) => error.message.includes(`"${name}"`)),
    );
    // A class tool from plain JavaScript, where nothing checks the list's type.
    const classTool = (permissions: unknown) =>
      ({
        name: "typo",
        description: "d",
        inputSchema: { type: "object", properties: {} },
        permissions,
        execute: () => 1,
      }) as unknown as AnyTool;
    assert.throws(() => new ToolBox().register(classTool(["exec"])), /"exec"/);
    assert.throws(() => new ToolBox().register(classTool("read")), /must be an array/);
    assert.doesNotThrow(() => new ToolBox().register(classTool(["read", "net"])));
  });
});
