import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { ToolError } from "../../core/errors.ts";
import { toModelText } from "../../core/result.ts";
import type { ToolContext } from "../../core/context.ts";
import { withSession } from "./_helpers.ts";

const listDir = tool({
  name: "list_dir",
  description: "List a directory.",
  input: v.object({ path: v.string(), details: v.optional(v.boolean(), false) }),
  readOnly: true,
  run: (args) => args,
});

describe("toolbox.call outcomes", () => {
  test("success returns the output with exact bookkeeping", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(listDir);
      const r = await box.call(session, "list_dir", { path: "." }, { callId: "call_1" });
      assert.equal(r.status, "success");
      assert.deepEqual(r.output, { path: ".", details: false });
      assert.equal(r.callId, "call_1");
      assert.equal(r.toolName, "list_dir");
      assert.equal(r.attempts, 1);
      assert.ok(r.latencyMs >= 0);
    });
  });

  test("an unknown tool lists the closest names; a disabled one says it is disabled", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(
        listDir,
        tool({ name: "read_file", description: "d", input: v.object({}), run: () => 1 }),
      );
      const r = await box.call(session, "list_dirs", {});
      assert.equal(r.status, "error");
      assert.equal(r.errorKind, "semantic");
      assert.equal(r.errorCode, "unknown_tool");
      assert.match(r.error!, /did you mean "list_dir"/);
      assert.equal(r.attempts, 0);
      box.disable("read_file");
      const disabled = await box.call(session, "read_file", {});
      assert.equal(disabled.status, "error");
      assert.equal(disabled.errorCode, "tool_disabled");
      assert.equal(disabled.error, 'Tool "read_file" is disabled in this toolbox');
      assert.doesNotMatch(disabled.error!, /did you mean/);
      assert.equal(disabled.attempts, 0);
      box.enable("read_file");
      assert.equal((await box.call(session, "read_file", {})).status, "success");
    });
  });

  test("arguments: JSON text, empty string as {}, bad JSON and non-objects", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(
        listDir,
        tool({ name: "noargs", description: "d", input: v.object({}), run: () => "ran" }),
      );
      assert.deepEqual((await box.call(session, "list_dir", '{"path":"x"}')).output, { path: "x", details: false });
      assert.equal((await box.call(session, "noargs", "")).output, "ran");
      assert.equal((await box.call(session, "noargs")).output, "ran");
      for (const bad of ["{not json", "[1,2]", "3", '"str"']) {
        const r = await box.call(session, "list_dir", bad);
        assert.equal(r.errorCode, "invalid_arguments", bad);
        assert.equal(r.attempts, 0);
      }
      assert.equal((await box.call(session, "list_dir", [1])).errorCode, "invalid_arguments");
    });
  });

  test("invalid arguments name the tool, path, expected and received", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(listDir);
      const r = await box.call(session, "list_dir", { path: ".", details: "yes", extra: 1 });
      assert.equal(r.status, "error");
      assert.equal(r.errorKind, "semantic");
      assert.equal(r.errorCode, "invalid_arguments");
      assert.equal(r.recoverable, true);
      assert.equal(
        r.error,
        'Invalid arguments for list_dir: details: expected boolean, received "yes"; extra: unexpected argument',
      );
      assert.deepEqual((r.details!.issues as unknown[]).length, 2);
    });
  });

  test("a thrown error becomes tool_error with the message and developer details", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(
        tool({
          name: "boom",
          description: "d",
          input: v.object({}),
          run: () => {
            throw new RangeError("kaboom");
          },
        }),
        tool({
          name: "throws_string",
          description: "d",
          input: v.object({}),
          run: () => {
            throw "plain string";
          },
        }),
      );
      const r = await box.call(session, "boom", {});
      assert.equal(r.status, "error");
      assert.equal(r.errorKind, "execution");
      assert.equal(r.errorCode, "tool_error");
      assert.equal(r.error, "kaboom");
      assert.equal(r.details!.errorName, "RangeError");
      assert.doesNotMatch(toModelText(r), /RangeError|stack/);
      assert.equal((await box.call(session, "throws_string", {})).error, "plain string");
    });
  });

  test("a ToolError keeps its status, kind and code", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(
        tool({
          name: "deny",
          description: "d",
          input: v.object({}),
          run: () => {
            throw new ToolError("Write to x was denied", {
              code: "permission_denied",
              kind: "policy",
              status: "skipped",
            });
          },
        }),
      );
      const r = await box.call(session, "deny", {});
      assert.equal(r.status, "skipped");
      assert.equal(r.errorKind, "policy");
      assert.equal(r.errorCode, "permission_denied");
    });
  });

  test("sync and async tools; strings, objects, arrays, undefined", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const cases: [unknown, unknown][] = [
        ["text", "text"],
        [{ a: [1, { b: null }] }, { a: [1, { b: null }] }],
        [
          [1, "2"],
          [1, "2"],
        ],
        [undefined, null],
        [0, 0],
        [false, false],
        [new Date(0), "1970-01-01T00:00:00.000Z"],
      ];
      for (const [value, expected] of cases) {
        const box = new ToolBox().register(
          tool({ name: "sync", description: "d", input: v.object({}), run: () => value }),
          tool({ name: "async", description: "d", input: v.object({}), run: async () => await Promise.resolve(value) }),
        );
        for (const name of ["sync", "async"]) {
          const r = await box.call(session, name, {});
          assert.equal(r.status, "success");
          assert.deepEqual(r.output, expected);
        }
      }
    });
  });

  test("values that cannot be serialised losslessly are refused", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const cases: [unknown, RegExp][] = [
        [new Uint8Array([1, 2]), /binary data \(Uint8Array\) at \(root\)/],
        [{ data: new ArrayBuffer(2) }, /binary data \(ArrayBuffer\) at data/],
        [{ m: new Map() }, /a Map/],
        [[1, () => 1], /a function at \[1\]/],
        [{ n: NaN }, /NaN \(not finite\) at n/],
        [{ big: 1n }, /bigint/],
        [cyclic, /circular reference at self/],
        // JSON.stringify writes these as {} (their state is in internal slots): the message, the pattern, the
        // value the tool forgot to await would reach the model as an empty object.
        [new Error("disk full"), /an error \(Error\) at \(root\).*error\.message/],
        [{ failures: [new TypeError("bad path")] }, /an error \(TypeError\) at failures\[0\]/],
        [{ pending: Promise.resolve(1) }, /a Promise at pending.*await it/],
        [{ pattern: /a+/g }, /a RegExp at pattern/],
        [{ cache: new WeakMap() }, /a WeakMap at cache/],
      ];
      for (const [value, pattern] of cases) {
        const box = new ToolBox().register(
          tool({ name: "bad", description: "d", input: v.object({}), run: () => value }),
        );
        const r = await box.call(session, "bad", {});
        assert.equal(r.status, "error");
        assert.equal(r.errorCode, "not_serializable");
        assert.match(r.error!, pattern);
      }
      const wrapped = new ToolBox().register(
        tool({ name: "ok", description: "d", input: v.object({}), run: () => ({ base64: btoa("\x01\x02") }) }),
      );
      assert.equal((await wrapped.call(session, "ok", {})).status, "success");
    });
  });

  test("the context carries session, names, value, signal, workspace and policy", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      let seen: ToolContext<{ user: string }> | undefined;
      const box = new ToolBox().register(
        tool({
          name: "ctx",
          description: "d",
          input: v.object({}),
          run: (_args, ctx: ToolContext<{ user: string }>) => {
            seen = ctx;
            return ctx.value.user;
          },
        }),
      );
      const r = await box.call(session, "ctx", {}, { context: { user: "ada" }, callId: "c9" });
      assert.equal(r.output, "ada");
      assert.equal(seen!.session, session);
      assert.equal(seen!.toolName, "ctx");
      assert.equal(seen!.callId, "c9");
      assert.equal(seen!.attempt, 1);
      assert.ok(seen!.signal instanceof AbortSignal);
      assert.equal(seen!.workspace, session.workspace);
      assert.equal(seen!.policy, session.policy);
      const ref = await seen!.artifacts.put("kept by the session");
      assert.equal(session.artifacts.ref(ref.id), ref, "ctx.artifacts stores into the session's store");
    });
  });

  test("class tools are validated against their JSON Schema before they run", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      let runs = 0;
      class Echo {
        name = "echo";
        description = "Echo the text.";
        inputSchema = {
          type: "object",
          properties: { text: { type: "string" }, times: { type: "integer", default: 1 } },
          required: ["text"],
        };
        execute(args: { text: string; times: number }) {
          runs++;
          return args.text.repeat(args.times);
        }
      }
      const box = new ToolBox().register(new Echo());
      assert.equal((await box.call(session, "echo", { text: "ab" })).output, "ab");
      const bad = await box.call(session, "echo", { text: 5, loud: true });
      assert.equal(bad.errorCode, "invalid_arguments");
      assert.match(bad.error!, /text: expected string, received 5/);
      assert.match(bad.error!, /loud: unexpected argument/);
      assert.equal(runs, 1);
    });
  });
});

describe("a closed session", () => {
  test("runs no further call: session_closed, and the tool never starts", { timeout: 60_000 }, async () => {
    // The catalogue's session_closed says no further calls run, yet a call after close() ran: files were
    // written and commands started after the session's cleanups, which would never clean them up.
    const ran: string[] = [];
    const note = tool({
      name: "note",
      description: "Note.",
      input: v.object({ text: v.string() }),
      run: ({ text }) => void ran.push(text),
    });
    const box = new ToolBox().register(note);
    await withSession(async (session) => {
      assert.equal((await box.call(session, "note", { text: "open" })).status, "success");
      await session.close();
      const result = await box.call(session, "note", { text: "closed" });
      assert.equal(result.status, "error");
      assert.equal(result.errorCode, "session_closed");
      assert.match(toModelText(result), /The session is closed; note was not run/);
      const { results } = await box.callMany(session, [
        { name: "note", args: { text: "batch" } },
        { name: "missing", args: {} },
      ]);
      assert.deepEqual(results.map((r) => r.errorCode), ["session_closed", "session_closed"]);
      assert.deepEqual(ran, ["open"]);
    });
  });
});

describe("a tool's thrown or returned value that throws when read", () => {
  test("every such value ends the call in a result, with or without a deadline, and callMany keeps the others", {
    timeout: 60_000,
  }, async () => {
    // Before: box.call threw ("Cannot convert object to primitive value", a getter's own error, "Cannot perform 'get'
    // on a proxy that has been revoked"), though it never throws for a tool's failure: an agent loop lost the turn.
    const hostile = () => {
      const revoked = Proxy.revocable({}, {});
      revoked.revoke();
      return {
        getters: {
          get name(): string {
            throw new Error("name getter");
          },
          get message(): string {
            throw new Error("message getter");
          },
        },
        nullProto: Object.create(null) as object,
        revoked: revoked.proxy,
      };
    };
    const box = new ToolBox();
    const names: string[] = [];
    for (const key of Object.keys(hostile()) as (keyof ReturnType<typeof hostile>)[]) {
      for (const how of ["throws", "rejects", "returns"] as const) {
        const name = `${how}_${key}`;
        names.push(name);
        box.register(tool({
          name,
          description: "Hostile.",
          input: v.object({}),
          readOnly: true,
          run: () => {
            const value = hostile()[key];
            if (how === "throws") throw value;
            if (how === "rejects") return Promise.reject(value);
            return value as never;
          },
        }));
      }
    }
    await withSession(async (session) => {
      for (const options of [{}, { signal: new AbortController().signal, timeoutMs: 10_000 }]) {
        for (const name of names) {
          const r = await box.call(session, name, {}, options);
          // An object without a prototype is plain data when returned ({}), and readable when thrown.
          if (name === "returns_nullProto") {
            assert.equal(r.status, "success", name);
            continue;
          }
          assert.equal(r.status, "error", name);
          // A returned value unread is refused as output; one whose `then` cannot be read, under a deadline, is taken
          // for a promise that failed.
          if (name.startsWith("returns")) assert.ok(["not_serializable", "tool_error"].includes(r.errorCode!), name);
          else assert.equal(r.errorCode, "tool_error", name);
          assert.equal(typeof toModelText(r), "string");
        }
      }
      const { results } = await box.callMany(session, [
        { name: "throws_revoked", args: {} },
        { name: "returns_getters", args: {} },
      ]);
      assert.deepEqual(results.map((r) => r.status), ["error", "error"]);
      assert.equal(results[1].errorCode, "not_serializable");
      assert.match(results[1].error!, /throws when read \(name getter\) at name/);
    });
  });
});

describe("lone surrogates in arguments, generated", () => {
  // JSON.stringify escapes exactly the lone surrogates (well-formed JSON.stringify, ES2019) and writes pairs as they
  // are: an oracle independent of the pipeline's own check.
  const holdsLone = (value: unknown) => /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/.test(JSON.stringify(value));
  const UNITS = ["a", "\ud83d", "\ude00", "\ud83d\ude00", "\ud800", "\udfff", "é", ""];
  const any = tool({
    name: "any",
    description: "Takes anything.",
    input: v.looseObject({}),
    readOnly: true,
    run: () => "ran",
  });

  test("refused exactly when some key or string at any depth holds a lone surrogate", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(any);
      let seed = 20261206;
      const next = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16) % n;
      const text = () => Array.from({ length: next(4) }, () => UNITS[next(UNITS.length)]).join("");
      const value = (depth: number): unknown => {
        const kind = depth > 3 ? next(2) : next(4);
        if (kind === 0) return text();
        if (kind === 1) return next(100);
        if (kind === 2) return Array.from({ length: next(4) }, () => value(depth + 1));
        return Object.fromEntries(Array.from({ length: next(4) }, () => [text(), value(depth + 1)]));
      };
      let refused = 0;
      for (let i = 0; i < 2_000; i++) {
        const args = Object.fromEntries(Array.from({ length: 1 + next(3) }, () => [text(), value(1)]));
        const r = await box.call(session, "any", args);
        const expected = holdsLone(args);
        assert.equal(r.status === "error" && r.errorCode === "invalid_text", expected, JSON.stringify(args));
        if (expected) {
          refused++;
          assert.equal(typeof (r.details as { path?: unknown }).path, "string");
        } else assert.equal(r.status, "success", JSON.stringify(args));
      }
      assert.ok(refused > 200 && refused < 1_800, `${refused} of 2,000 refused: the generator must make both kinds`);
    });
  });
});
