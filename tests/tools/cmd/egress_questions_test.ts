// How often a person is asked about destinations not on the allowlist, through the real proxy: a "no" holds for the
// host's every port for the session (also for the ports asked about at the same moment), and a command asks at most
// MAX_NETWORK_QUESTIONS questions; past them its destinations are refused without asking, with a reason that says so.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Session } from "../../../policy/session.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { findForwarder } from "../../../policy/egress/forwarder.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import { MAX_NETWORK_QUESTIONS } from "../../../tools/cmd/_egress.ts";
import { cmdBox, denyingNetworkHost, okOutput } from "./_helpers.ts";

const skip = (await bubblewrapStatus()).path === undefined
  ? "bubblewrap is unavailable here"
  : await findForwarder() === undefined
  ? "neither perl nor socat is installed"
  : false;
const box = cmdBox();

test("a loop over ports or subdomains asks a person a bounded number of times", { skip, timeout: 60_000 }, async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-questions-test-"));
  const asked: string[] = [];
  const file = { network: { allow: ["allowed.test"] } };
  const session = new Session({
    workspace: dir,
    host: denyingNetworkHost(asked),
    rules: PolicyRules.fromLayers([parsePolicyFile("p", JSON.stringify(file), "project")], dir),
  });
  const curl = (url: string) => `curl -s -m 5 -o /dev/null ${url}`;
  try {
    // Eight ports of one host, four of them at once: one question, the "no" answers the rest.
    const ports = okOutput<BashResult>(
      await box.call(session, "bash", {
        command: `for p in 1 2 3 4; do ${curl("http://ports.test:$p/")} & done; wait; ` +
          `for p in 5 6 7 8; do ${curl("http://ports.test:$p/")}; done; ${curl("https://ports.test/")}; true`,
      }),
    );
    assert.equal(asked.length, 1, asked.join("\n"));
    assert.equal(ports.network_refused?.length, 9);
    // A later command is not asked about that host again.
    await box.call(session, "bash", { command: curl("http://ports.test:9/") });
    assert.equal(asked.length, 1);
    // Subdomains are new hosts: each asks, up to the command's budget, and the rest are refused unasked.
    const names = "a b c d e f g h".split(" ");
    const subs = okOutput<BashResult>(
      await box.call(session, "bash", {
        command: `for s in ${names.join(" ")}; do ${curl("http://$s.sub.test/")}; done`,
      }),
    );
    assert.equal(asked.length, 1 + MAX_NETWORK_QUESTIONS);
    assert.equal(subs.network_refused?.length, names.length);
    const unasked = subs.network_refused!.filter((line) => /already asked \d+ questions.*no more are asked/.test(line));
    assert.equal(unasked.length, names.length - MAX_NETWORK_QUESTIONS, subs.network_refused!.join("\n"));
  } finally {
    await session.close();
    await rm(dir, { recursive: true, force: true });
  }
});
