// Type-level tests: `deno check` fails when inference regresses.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { tool } from "../../core/tool.ts";
import type { ToolContext } from "../../core/context.ts";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function expectType<T extends true>(_: T): void {}

test("run's arguments are inferred from the valibot schema", () => {
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
