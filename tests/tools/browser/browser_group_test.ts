// The browser group in the library: `withDefaults()` registers it with the
// other seven, the screenshot tool is listed only for a model with vision, and
// listing the tools starts no browser.

import { test } from "node:test";
import assert from "node:assert/strict";
import { ToolBox } from "../../../core/toolbox.ts";
import { toolGroupNames } from "../../../core/groups.ts";
import "../../../tools/mod.ts";
import { BROWSER_MARKER } from "../../../tools/browser/_browser_session.ts";
import { descendantsWith } from "./_fixtures.ts";

test("withDefaults() registers all eight groups, the browser among them", () => {
  assert.deepEqual(
    toolGroupNames().filter((g) =>
      ["fs", "search", "patch", "cmd", "system", "framework", "diagnostic", "browser"].includes(g)
    )
      .length,
    8,
  );
  const box = new ToolBox().withDefaults();
  const names = box.list({ capabilities: ["vision"] }).map((t) => t.name);
  assert.ok(names.includes("browser_navigate") && names.includes("browser_screenshot"));
  assert.ok(!box.list().map((t) => t.name).includes("browser_screenshot"), "no vision, no screenshot tool");
  for (const tool of box.list({ capabilities: ["vision"] }).filter((t) => t.name.startsWith("browser_"))) {
    assert.match(tool.description, /--allow-run.*--allow-net/s, tool.name);
  }
  assert.deepEqual(descendantsWith(BROWSER_MARKER), [], "listing tools starts no browser");
});
