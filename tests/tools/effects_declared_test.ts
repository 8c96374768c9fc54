// Every built-in tool declares its effects, consistently with what else it says about itself.

import { test } from "node:test";
import assert from "node:assert/strict";
import { BUILTIN_GROUPS, SUBAGENT_TOOLS } from "../../tools/groups.ts";
import { EFFECTS } from "../../core/effects.ts";
import type { AnyTool } from "../../core/tool.ts";

const tools: AnyTool[] = [
  ...Object.values(BUILTIN_GROUPS).flatMap((group) => [...group()]),
  ...SUBAGENT_TOOLS(() => undefined),
];

test(
  "every built-in tool declares effects, and they agree with readOnly and its permissions",
  { timeout: 60_000 },
  () => {
    assert.ok(tools.length >= 27, `${tools.length} tools`);
    for (const t of tools) {
      assert.ok(Array.isArray(t.effects), `${t.name} declares no effects`);
      for (const e of t.effects!) assert.ok(EFFECTS.includes(e), `${t.name}: unknown effect ${e}`);
      assert.equal(new Set(t.effects).size, t.effects!.length, `${t.name} repeats an effect`);
      const world = t.effects!.filter((e) => e !== "reads");
      if (t.readOnly && t.name !== "check_types") {
        assert.deepEqual(world, [], `${t.name} is readOnly but declares ${world}`);
      }
      if (t.destructive) assert.ok(world.length > 0, `${t.name} is destructive but declares no effect on the world`);
      if (t.permissions?.includes("run") && t.readOnly !== true && !t.effects!.includes("runs_processes")) {
        assert.fail(`${t.name} runs programs but does not declare runs_processes`);
      }
      // The file tools that write the workspace say so (the browser's writes go to its own temp profile).
      if (t.permissions?.includes("write") && !t.name.startsWith("browser_") && !t.effects!.includes("writes_files")) {
        assert.fail(`${t.name} writes but does not declare writes_files`);
      }
    }
  },
);
