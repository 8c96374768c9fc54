import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { authorizeCommand } from "../../../policy/shell/authorize_command.ts";
import { autoHost, callbackHost, denyAllHost } from "../../../policy/hosts.ts";
import { PolicyState } from "../../../policy/state.ts";
import { ToolError } from "../../../core/errors.ts";
import type { ConfirmRequest } from "../../../core/host.ts";
import { withSession } from "../../core/_helpers.ts";

function recordingHost(answer: boolean) {
  const asked: ConfirmRequest[] = [];
  const host = callbackHost({
    choose: () => {
      throw new Error("choose is not used for commands");
    },
    confirm: (request) => {
      asked.push(request);
      return answer;
    },
  });
  return { host, asked };
}

async function deniedError(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ToolError, `expected a ToolError, got ${error}`);
    assert.equal(error.code, "permission_denied");
    assert.equal(error.kind, "policy");
    assert.equal(error.status, "skipped");
    return error;
  }
  assert.fail("the command was authorized");
}

describe("authorizeCommand", () => {
  test("an allowlisted command runs without asking", { timeout: 60_000 }, async () => {
    const { host, asked } = recordingHost(false);
    const result = await authorizeCommand({ state: new PolicyState(), asker: host }, "git status 2>&1 | head -5");
    assert.equal(result.via, "allowlist");
    assert.equal(result.check.verdict, "allow");
    assert.equal(asked.length, 0);
  });

  test(
    "a dangerous command asks under Dangerous Command Confirmation with no as default",
    { timeout: 60_000 },
    async () => {
      const { host, asked } = recordingHost(true);
      const result = await authorizeCommand({ state: new PolicyState(), asker: host }, "rm -rf build");
      assert.equal(result.via, "confirmed");
      assert.equal(result.source, "user");
      assert.equal(asked.length, 1);
      assert.equal(asked[0].title, "Dangerous Command Confirmation");
      assert.equal(asked[0].defaultChoice, false);
      assert.match(asked[0].message, /rm -rf build/);
    },
  );

  test("an unknown command asks with yes as default, so autoConfirm runs it", { timeout: 60_000 }, async () => {
    const { host, asked } = recordingHost(false);
    await assert.rejects(authorizeCommand({ state: new PolicyState(), asker: host }, "make build"));
    assert.equal(asked[0].title, "Command Confirmation");
    assert.equal(asked[0].defaultChoice, true);
    const auto = await authorizeCommand({ state: new PolicyState(), asker: autoHost() }, "make build");
    assert.equal(auto.via, "confirmed");
    assert.equal(auto.source, "auto");
  });

  test("a refusal carries the reasons in the message and the details", { timeout: 60_000 }, async () => {
    const { host } = recordingHost(false);
    const error = await deniedError(
      authorizeCommand({ state: new PolicyState({ commandAllowlist: ["ls"] }), asker: host }, "ls && rm -rf x"),
    );
    assert.match(error.message, /the user declined it/);
    assert.match(error.message, /rm -rf x/);
    const details = error.details as { reasons: string[]; assessment: { kind: string }; command: string };
    assert.equal(details.command, "ls && rm -rf x");
    assert.ok(details.reasons.some((r) => r.includes("rm -rf x")), JSON.stringify(details.reasons));
    assert.equal(details.assessment.kind, "destroy_data");
  });

  test("a reason the assessment quotes is said once", { timeout: 60_000 }, async () => {
    const { host } = recordingHost(false);
    const error = await deniedError(authorizeCommand({ state: new PolicyState(), asker: host }, 'echo "unbalanced'));
    const said = error.message.split("syntax error at").length - 1;
    assert.equal(said, 1, error.message);
  });

  test("autoConfirm takes no for a dangerous command", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const error = await deniedError(session.policy.authorizeCommand("rm -rf build"));
      assert.match(error.message, /declined automatically/);
    }, { autoConfirm: true, host: autoHost() });
  });

  test("the always-ask kinds need a person even with autoConfirm", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const error = await deniedError(session.policy.authorizeCommand("apt-get install -y cowsay"));
      assert.match(error.message, /not run: it needs a person's answer and this session answers automatically/);
      const details = error.details as { prompt: ConfirmRequest; hostRefusal: string };
      assert.equal(details.prompt.requirePerson, true);
      assert.match(details.hostRefusal, /person/);
    }, { autoConfirm: true, host: autoHost() });
    const { host, asked } = recordingHost(true);
    const allowed = await authorizeCommand({ state: new PolicyState(), asker: host }, "sudo reboot");
    assert.equal(allowed.source, "user");
    assert.equal(asked[0].requirePerson, true);
  });

  test("a host with nobody to ask refuses, with the reasons", { timeout: 60_000 }, async () => {
    const error = await deniedError(
      authorizeCommand({ state: new PolicyState(), asker: denyAllHost() }, "make build"),
    );
    assert.match(error.message, /make build/);
  });

  test("sessionCanAsk: false refuses without asking", { timeout: 60_000 }, async () => {
    const { host, asked } = recordingHost(true);
    await deniedError(authorizeCommand({ state: new PolicyState(), asker: host, sessionCanAsk: false }, "make"));
    assert.equal(asked.length, 0);
  });

  test("the allowlist of the state is used", { timeout: 60_000 }, async () => {
    const state = new PolicyState({ commandAllowlist: ["make build"] });
    const result = await authorizeCommand({ state, asker: denyAllHost() }, "make build");
    assert.equal(result.via, "allowlist");
  });

  test("an aborted signal stops before anything is judged", { timeout: 60_000 }, async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await assert.rejects(
      authorizeCommand({ state: new PolicyState(), asker: autoHost() }, "ls", controller.signal),
      /stop/,
    );
  });
});

test("a session's own risk assessor decides for commands off the allowlist", { timeout: 60_000 }, async () => {
  const seen: string[] = [];
  await withSession(async (session) => {
    const allowed = await session.policy.authorizeCommand("make build");
    assert.equal(allowed.via, "assessor");
    await assert.rejects(session.policy.authorizeCommand("make clean"), (e) => e instanceof ToolError);
    assert.deepEqual(seen, ["make build", "make clean"]);
  }, {
    assessor: {
      assess: (command) => {
        seen.push(command);
        return Promise.resolve(
          command.endsWith("build")
            ? { decision: "allow", reason: "builds are fine here", kind: "build" }
            : { decision: "reject", reason: "cleans delete outputs", kind: "delete_files" },
        );
      },
    },
  });
});
