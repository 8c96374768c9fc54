// Several `serve --http` replicas (real processes of main.ts) on one store: a private PostgreSQL cluster, or a
// SQLite file when PostgreSQL is not installed. A session opened on one continues on another, never for
// another tenant; a replica killed mid-call leaves the client an answer that says so (through a load
// balancer, resumed with Last-Event-ID by the official client); `toolfence audit --store` reads every
// replica's records.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { callUri, openStore } from "@toolfence/adapters/mcp";
import type { PendingQuestion } from "@toolfence/adapters/console";
import { type Balancer, type Replica, replicaArgs, startBalancer, startReplica, stopReplica } from "./_fleet.ts";
import { connect, leaveAtHeaders, raw, textOf, writeTokens } from "./_http_harness.ts";
import { type PostgresCluster, postgresMissing, startPostgres } from "../_postgres.ts";
import { IS_DENO } from "../_runtime.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ACME = "acme-token-0123456789";
const EVIL = "evil-token-0123456789";
const ACME_PERSON = "acme-person-0123456789";
const EVIL_PERSON = "evil-person-0123456789";

describe("a fleet of serve --http replicas on one store", {
  timeout: 240_000,
  skip: !IS_DENO && "runs main.ts under Deno",
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "toolfence-fleet-"));
  let cluster: PostgresCluster | undefined;
  let store = "";
  let replicas: Replica[] = [];
  let balancer: Balancer | undefined;

  before(async () => {
    mkdirSync(join(dir, "tenants"));
    mkdirSync(join(dir, "tmp"));
    await writeTokens(join(dir, "tokens.json"), [{ token: ACME, tenant: "acme" }, { token: EVIL, tenant: "evil" }]);
    await writeTokens(join(dir, "console-tokens.json"), [
      { token: ACME_PERSON, tenant: "acme", scopes: ["console"] },
      { token: EVIL_PERSON, tenant: "evil", scopes: ["console"] },
    ]);
    if (!postgresMissing()) cluster = await startPostgres();
    store = cluster?.url ?? `sqlite:${join(dir, "store.db")}`;
    // Each replica serves the console too: questions wait there for a person.
    const args = replicaArgs(
      dir,
      store,
      "--console",
      "127.0.0.1:0",
      "--console-token-file",
      join(dir, "console-tokens.json"),
    );
    replicas = await Promise.all([startReplica(args), startReplica(args)]);
    balancer = await startBalancer(replicas, "failover");
  }, { timeout: 120_000 });

  after(async () => {
    await balancer?.close();
    await Promise.all(replicas.map((replica) => stopReplica(replica, "SIGKILL")));
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, { timeout: 60_000 });

  it("continues a session on another replica, and never for another tenant", { timeout: 60_000 }, async () => {
    const [a, b] = replicas;
    const client = await connect(a.url, ACME);
    await client.callTool({ name: "write_file", arguments: { path: "fleet.txt", content: "written on A" } });
    const sessionId = (client.transport as unknown as { sessionId: string }).sessionId;
    const call = (token: string, id: number) =>
      raw(b.url, {
        headers: {
          authorization: `Bearer ${token}`,
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "read_file", arguments: { path: "fleet.txt" } },
        }),
      });
    const stranger = await call(EVIL, 40);
    assert.equal(stranger.status, 404, stranger.text);
    const onB = await call(ACME, 41);
    assert.equal(onB.status, 200, onB.text);
    const data = /^data: (.*)$/m.exec(onB.text.split("\n").filter((l) => l.includes('"id":41')).join("\n"));
    assert.match(textOf(JSON.parse(data![1]).result), /written on A/);
    // The session stays one: A, which opened it, still answers it too.
    assert.match(textOf(await client.callTool({ name: "read_file", arguments: { path: "fleet.txt" } })), /written/);
    await client.close();
  });

  it("shows a question on every replica's console, takes the answer given on another, withdraws it everywhere", {
    timeout: 60_000,
  }, async () => {
    const [a, b] = replicas;
    const client = await connect(a.url, ACME);
    const [acmeOnB, evilOnB, acmeOnA] = await Promise.all([
      signIn(b.console!, ACME_PERSON),
      signIn(b.console!, EVIL_PERSON),
      signIn(a.console!, ACME_PERSON),
    ]);
    // A call on A waits for a person; B's console shows it to acme's person, never to evil's.
    const asked = client.callTool({ name: "bash", arguments: { command: "touch asked.txt" } });
    const question = await acmeOnB.waitFor((questions) =>
      questions.find((q) => q.about?.command === "touch asked.txt")
    );
    assert.deepEqual(await evilOnB.questions(), []);
    // A yes/no question: no saved rule to offer "allow from now on" here.
    assert.deepEqual(question.options.map((option) => option.value), ["yes", "no"]);
    assert.equal(await evilOnB.answer(question.id, "yes"), "gone");
    assert.equal(await acmeOnB.answer(question.id, "yes"), "answered");
    assert.equal((await asked).isError, undefined, textOf(await asked));
    assert.equal(await acmeOnA.answer(question.id, "no"), "gone", "the first answer won");
    // A call cancelled while its question waits: the question leaves both consoles.
    const cancel = new AbortController();
    const cancelled = client.callTool({ name: "bash", arguments: { command: "touch withdrawn.txt" } }, undefined, {
      signal: cancel.signal,
    }).catch((error: Error) => error);
    await acmeOnB.waitFor((questions) => questions.find((q) => q.about?.command === "touch withdrawn.txt"));
    cancel.abort(new Error("the user stopped it"));
    assert.match(String(await cancelled), /stopped it/);
    await acmeOnB.waitFor((questions) => questions.length === 0 || undefined);
    await acmeOnA.waitFor((questions) => questions.length === 0 || undefined);
    await client.close();
  });

  it(
    "applies a grant saved in the store on every replica at once, and none once it is revoked",
    { timeout: 60_000 },
    async () => {
      const [a, b] = replicas;
      const onA = await connect(a.url, ACME);
      const onB = await connect(b.url, ACME);
      // Not allowed yet: the command asks, and acme's person denies it in A's console.
      const person = await signIn(a.console!, ACME_PERSON);
      const asking = onB.callTool({ name: "bash", arguments: { command: "sleep 0" } });
      const question = await person.waitFor((questions) => questions.find((q) => q.about?.command === "sleep 0"));
      assert.equal(await person.answer(question.id, "no"), "answered");
      const refused = await asking;
      assert.equal(refused.isError, true, textOf(refused));
      const shared = await openStore(store, { poolSize: 1 });
      const grant = { tenant: "acme", kind: "command" as const, subject: "sleep", data: {}, savedAt: Date.now() };
      await shared.saveGrant(grant);
      for (const client of [onA, onB]) {
        const allowed = await client.callTool({ name: "bash", arguments: { command: "sleep 0" } });
        assert.equal(allowed.isError, undefined, textOf(allowed));
      }
      // `toolfence grants` lists it for acme only, and revokes it in the store: it stops applying to the sessions
      // that had applied it, and A's call asks again.
      const listed = toolfence("grants", "--store", store, "--tenant", "acme");
      assert.equal(listed.status, 0, listed.stderr);
      assert.deepEqual(listed.stdout.trim().split("\n").map((line) => JSON.parse(line).subject), ["sleep"]);
      assert.equal(toolfence("grants", "--store", store, "--tenant", "evil").stdout, "");
      const revoked = toolfence("grants", "--store", store, "--tenant", "acme", "--revoke", "sleep");
      assert.equal(revoked.status, 0, revoked.stderr);
      const gone = toolfence("grants", "--store", store, "--tenant", "acme", "--revoke", "sleep");
      assert.equal(gone.status, 1);
      assert.match(gone.stderr, /acme has no command grant "sleep"/);
      const askingAgain = onA.callTool({ name: "bash", arguments: { command: "sleep 0" } });
      const again = await person.waitFor((questions) => questions.find((q) => q.about?.command === "sleep 0"));
      assert.equal(await person.answer(again.id, "no"), "answered");
      assert.equal((await askingAgain).isError, true);
      // Saved again (the killed-replica test below runs `sleep` without asking).
      await shared.saveGrant(grant);
      await shared.close();
      const allowedAgain = await onA.callTool({ name: "bash", arguments: { command: "sleep 0" } });
      assert.equal(allowedAgain.isError, undefined, textOf(allowedAgain));
      // Another tenant's grant it is not: evil's call asks evil's person, who denies it.
      const stranger = await connect(b.url, EVIL);
      const evilPerson = await signIn(b.console!, EVIL_PERSON);
      const strangerCall = stranger.callTool({ name: "bash", arguments: { command: "sleep 0" } });
      const evilQuestion = await evilPerson.waitFor((questions) => questions[0]);
      assert.equal(await evilPerson.answer(evilQuestion.id, "no"), "answered");
      assert.equal((await strangerCall).isError, true);
      await Promise.all([onA.close(), onB.close(), stranger.close()]);
    },
  );

  it("answers a call whose replica was killed from another, with reconciliationRequired", {
    timeout: 90_000,
  }, async () => {
    const [a] = replicas;
    const client = await connect(balancer!.url, ACME);
    const pending = client.callTool({ name: "bash", arguments: { command: "sleep 60" } }, undefined, {
      timeout: 80_000,
    });
    // The call is running on A once its decision is audited; then A dies.
    const shared = await openStore(store, { poolSize: 1 });
    const deadline = Date.now() + 30_000;
    while (!(await shared.audit()).some((item) => item.record.subject === "sleep 60")) {
      assert.ok(Date.now() < deadline, "the call started");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Another call of the session on A, whose client leaves at the answer's headers, before its stream's first
    // event: it holds no event id to resume from.
    const sessionId = (client.transport as unknown as { sessionId: string }).sessionId;
    const left = await leaveAtHeaders(
      a.url,
      {
        authorization: `Bearer ${ACME}`,
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-11-25",
      },
      JSON.stringify({
        jsonrpc: "2.0",
        id: 9001,
        method: "tools/call",
        params: { name: "bash", arguments: { command: "sleep 61" } },
      }),
    );
    assert.equal(left, 200);
    while ((await shared.call("acme", sessionId, "9001"))?.state !== "running") {
      assert.ok(Date.now() < deadline, "the second call started");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await shared.close();
    balancer!.remove(a);
    await stopReplica(a, "SIGKILL");
    const result = await pending as { isError?: boolean; _meta?: Record<string, Record<string, unknown>> };
    assert.equal(result.isError, true);
    const meta = result._meta!["toolfence/result"];
    assert.equal(meta.errorCode, "replica_lost");
    assert.equal(meta.reconciliationRequired, true);
    // The session goes on on B.
    const next = await client.callTool({ name: "read_file", arguments: { path: "fleet.txt" } });
    assert.match(textOf(next), /written on A/);
    // The call whose client left is read by its request id, from B: lost with its replica.
    const [content] = (await client.readResource({ uri: callUri(9001) })).contents as { text: string }[];
    const outcome = JSON.parse(content.text);
    assert.equal(outcome.state, "interrupted");
    const lost = outcome.answer.result._meta["toolfence/result"];
    assert.deepEqual([lost.errorCode, lost.reconciliationRequired], ["replica_lost", true]);
    await client.close();
    const calls = auditLines().map((line) => JSON.parse(line)).filter((record) => record.type === "call");
    assert.ok(calls.some((record) => record.errorCode === "replica_lost" && record.tool === "bash"));
    // Both replicas' calls are in the one log.
    assert.equal(new Set(calls.map((record) => record.replica)).size, 2);
  });

  /** A person signed in to a replica's console (over plain HTTP, as its forms do). */
  async function signIn(console: URL, token: string) {
    const origin = console.origin;
    const form = (fields: Record<string, string>) => new URLSearchParams(fields);
    const login = await fetch(new URL("/login", console), {
      method: "POST",
      body: form({ token }),
      headers: { origin },
      redirect: "manual",
    });
    await login.body?.cancel();
    assert.equal(login.status, 303);
    const cookie = login.headers.get("set-cookie")!.split(";")[0];
    const { csrf } = await (await fetch(new URL("/api/session", console), { headers: { cookie } })).json();
    const questions = async (): Promise<PendingQuestion[]> =>
      (await (await fetch(new URL("/api/questions", console), { headers: { cookie } })).json()).questions;
    return {
      questions,
      /** Polls the console's questions until `pick` finds what it waits for. */
      async waitFor<T>(pick: (questions: PendingQuestion[]) => T | undefined): Promise<T> {
        const deadline = Date.now() + 20_000;
        for (;;) {
          const found = pick(await questions());
          if (found !== undefined) return found;
          assert.ok(Date.now() < deadline, "the console showed it");
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
      async answer(id: string, choice: string): Promise<"answered" | "gone"> {
        const response = await fetch(new URL(`/questions/${id}`, console), {
          method: "POST",
          body: form({ csrf, choice }),
          headers: { origin, cookie },
          redirect: "manual",
        });
        await response.body?.cancel();
        assert.equal(response.status, 303);
        return response.headers.get("location")!.includes("answered=1") ? "answered" : "gone";
      },
    };
  }

  /** A run of the command line, to its end. */
  function toolfence(...args: string[]) {
    return spawnSync(process.execPath, ["run", "-A", join(ROOT, "main.ts"), ...args], { encoding: "utf8" });
  }

  function auditLines(): string[] {
    const read = toolfence("audit", "--store", store);
    assert.equal(read.status, 0, read.stderr);
    return read.stdout.split("\n").filter((line) => line !== "");
  }
});
