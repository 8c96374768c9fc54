// Every built-in tool declares what it touches once, in `needs`; the permissions, effects and
// readOnly flag follow from it, and a stated effect only ever narrows what the needs allow.

import { test } from "node:test";
import assert from "node:assert/strict";
import { BUILTIN_GROUPS, SUBAGENT_TOOLS } from "../../tools/groups.ts";
import { EFFECTS } from "../../core/effects.ts";
import type { AnyTool } from "../../core/tool.ts";
import { effectsOf, permissionsOf } from "../../core/_tool_declaration.ts";

const grouped: AnyTool[] = Object.values(BUILTIN_GROUPS).flatMap((group) => [...group()]);
const tools: AnyTool[] = [...grouped, ...SUBAGENT_TOOLS(() => undefined)];

test(
  "every built-in tool declares needs, and its permissions, effects and readOnly agree with them",
  { timeout: 60_000 },
  () => {
    assert.ok(tools.length >= 27, `${tools.length} tools`);
    for (const t of grouped) {
      assert.ok(t.needs, `${t.name} declares no needs (main.ts flags prints them)`);
      assert.deepEqual(t.permissions, permissionsOf(t.needs), `${t.name}: permissions are those of its needs`);
    }
    for (const t of tools) {
      assert.ok(Array.isArray(t.effects), `${t.name} declares no effects`);
      for (const e of t.effects!) assert.ok(EFFECTS.includes(e), `${t.name}: unknown effect ${e}`);
      assert.equal(new Set(t.effects).size, t.effects!.length, `${t.name} repeats an effect`);
      const world = t.effects!.filter((e) => e !== "reads");
      if (t.readOnly && t.name !== "check_types") {
        assert.deepEqual(world, [], `${t.name} is readOnly but declares ${world}`);
      }
      if (t.destructive) assert.ok(world.length > 0, `${t.name} is destructive but declares no effect on the world`);
      if (!t.needs || t.permissions!.includes("run")) continue;
      const allowed = effectsOf(t.needs);
      for (const e of world) assert.ok(allowed.includes(e), `${t.name}: ${e} is not allowed by its needs`);
    }
  },
);

test("the file tools that write the workspace say so", { timeout: 60_000 }, () => {
  for (const t of grouped) {
    if (t.needs?.write?.includes("workspace") && !t.name.startsWith("browser_") && !t.name.startsWith("bash")) {
      assert.ok(t.effects!.includes("writes_files"), `${t.name} writes but does not declare writes_files`);
    }
  }
});
