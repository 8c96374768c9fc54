// Type-level tests: `deno check` fails when inference regresses.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { tool } from "../../core/tool.ts";
import type { ToolContext } from "../../core/context.ts";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function expectType<T extends true>(_: T): void {}

test("run's arguments are inferred from the valibot schema", { timeout: 60_000 }, () => {
  const t = tool({
    name: "typed",
    description: "d",
    input: v.object({
      path: v.string(),
      limit: v.optional(v.number(), 10),
      tags: v.optional(v.array(v.string())),
      mode: v.picklist(["a", "b"]),
      note: v.nullable(v.string()),
    }),
    run(args, ctx: ToolContext<{ user: string }>) {
      expectType<Equal<typeof args.path, string>>(true);
      expectType<Equal<typeof args.limit, number>>(true);
      expectType<Equal<typeof args.tags, string[] | undefined>>(true);
      expectType<Equal<typeof args.mode, "a" | "b">>(true);
      expectType<Equal<typeof args.note, string | null>>(true);
      expectType<Equal<typeof ctx.value, { user: string }>>(true);
      // @ts-expect-error: not in the schema
      args.missing;
      return args.path;
    },
  });
  assert.equal(t.name, "typed");
});

test("session.confirm resolves to the answer itself, so `if (await session.confirm(...))` means yes", {
  timeout: 60_000,
}, async () => {
  const { Session } = await import("../../policy/session.ts");
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { callbackHost } = await import("../../policy/hosts.ts");
  const dir = await mkdtemp(join(tmpdir(), "toolfence-types-"));
  try {
    for (const answer of [true, false]) {
      const session = new Session({
        workspace: dir,
        host: callbackHost({ choose: (r) => r.defaultChoice, confirm: () => answer }),
      });
      const asked = session.confirm({ title: "t", message: "m", defaultChoice: !answer });
      expectType<Equal<typeof asked, Promise<boolean>>>(true);
      let taken = false;
      // The mistake ChoiceOutcome allowed (an object is always truthy) is here the right code.
      if (await session.confirm({ title: "t", message: "m", defaultChoice: !answer })) taken = true;
      assert.equal(taken, answer);
      const outcome = await session.confirmOutcome({ title: "t", message: "m", defaultChoice: !answer });
      assert.deepEqual(outcome, { choice: answer, source: "user" });
      await session.close();
    }
    const auto = new Session({ workspace: dir, autoConfirm: true });
    assert.equal(await auto.confirm({ title: "t", message: "m", defaultChoice: false }), false);
    assert.deepEqual(await auto.confirmOutcome({ title: "t", message: "m", defaultChoice: true }), {
      choice: true,
      source: "auto",
    });
    await auto.close();
    // A host that answers a yes/no question with anything but a boolean is refused, never read as truthy.
    const odd = new Session({
      workspace: dir,
      host: {
        choose: () => Promise.reject(new Error("unused")),
        confirm: () => Promise.resolve({ choice: "yes" as unknown as boolean, source: "user" }),
      },
    });
    await assert.rejects(odd.confirm({ title: "t", message: "m", defaultChoice: false }), TypeError);
    await odd.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
