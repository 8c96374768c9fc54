// sandbox.network in the policy files: validated, defaulted from network.allow, the higher layer wins.

import { test } from "node:test";
import assert from "node:assert/strict";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { policySettings } from "../../../policy/config/settings.ts";

const settingsOf = (...files: [string, object][]) =>
  policySettings(
    PolicyRules.fromLayers(
      files.map(([layer, config]) => parsePolicyFile(layer, JSON.stringify(config), layer as "project")),
      "/w",
    ),
  );

test("sandbox.network: none by default, proxy when network.allow names a host, a managed none wins", {
  timeout: 60_000,
}, () => {
  assert.equal(settingsOf().sandboxNetwork, "none");
  assert.equal(settingsOf(["project", { network: { deny: ["a.test"] } }]).sandboxNetwork, "none");
  assert.equal(settingsOf(["project", { network: { allow: ["a.test"] } }]).sandboxNetwork, "proxy");
  assert.equal(settingsOf(["project", { sandbox: { network: "proxy" } }]).sandboxNetwork, "proxy");
  assert.equal(
    settingsOf(["managed", { sandbox: { network: "none" } }], ["project", { network: { allow: ["a.test"] } }])
      .sandboxNetwork,
    "none",
  );
  for (const bad of ["open", true, 1, ""]) {
    assert.throws(
      () => parsePolicyFile("p", JSON.stringify({ sandbox: { network: bad } }), "project"),
      /sandbox\.network/,
      String(bad),
    );
  }
});
