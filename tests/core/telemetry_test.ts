// OpenTelemetry spans of calls and batches, with the real SDK's in-memory
// exporter: names, attributes (the AI SDK's where they overlap), statuses,
// and batch spans as the parents of their calls.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { type Context, context, type ContextManager, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import { Session } from "../../policy/session.ts";

// The context manager applications get from @opentelemetry/context-async-hooks, on the same node API.
class AsyncLocalContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

const exporter = new InMemorySpanExporter();
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "toolfence-otel-"));
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalContextManager());
  trace.setGlobalTracerProvider(provider);
});

after(async () => {
  trace.disable();
  context.disable();
  await rm(dir, { recursive: true, force: true });
});

const box = new ToolBox().register(
  tool({ name: "ok", description: "Works.", input: v.object({}), readOnly: true, run: () => "fine" }),
  tool({
    name: "broken",
    description: "Fails.",
    input: v.object({}),
    readOnly: true,
    run: () => {
      throw new Error("boom");
    },
  }),
);

test(
  "each call is an ai.toolCall span with the AI SDK's and GenAI attributes and its status",
  { timeout: 60_000 },
  async () => {
    exporter.reset();
    const session = new Session({ workspace: dir });
    try {
      await box.call(session, "ok", {}, { callId: "call_1" });
      await box.call(session, "broken", {}, { callId: "call_2" });
      await box.call(session, "nope", {});
    } finally {
      await session.close();
    }
    const spans = exporter.getFinishedSpans();
    assert.deepEqual(spans.map((s) => s.name), ["ai.toolCall", "ai.toolCall", "ai.toolCall"]);
    const [ok, broken, unknown] = spans;
    assert.equal(ok.attributes["ai.toolCall.name"], "ok");
    assert.equal(ok.attributes["ai.toolCall.id"], "call_1");
    assert.equal(ok.attributes["operation.name"], "ai.toolCall");
    assert.equal(ok.attributes["gen_ai.operation.name"], "execute_tool");
    assert.equal(ok.attributes["gen_ai.tool.name"], "ok");
    assert.equal(ok.attributes["toolfence.status"], "success");
    assert.equal(ok.status.code, 1); // OK
    assert.equal(broken.attributes["toolfence.status"], "error");
    assert.equal(broken.attributes["toolfence.error_code"], "tool_error");
    assert.equal(broken.status.code, 2); // ERROR
    assert.equal(unknown.attributes["toolfence.error_code"], "unknown_tool");
    assert.ok(!JSON.stringify(spans.map((s) => s.attributes)).includes("fine"), "outputs are not recorded");
  },
);

test("a batch is a toolfence.batch span, the parent of its calls", { timeout: 60_000 }, async () => {
  exporter.reset();
  const session = new Session({ workspace: dir });
  try {
    await box.callMany(session, [{ name: "ok" }, { name: "ok" }, { name: "broken" }]);
  } finally {
    await session.close();
  }
  const spans = exporter.getFinishedSpans();
  const batch = spans.find((s) => s.name === "toolfence.batch")!;
  assert.equal(batch.attributes["toolfence.batch.size"], 3);
  const calls = spans.filter((s) => s.name === "ai.toolCall");
  assert.equal(calls.length, 3);
  for (const call of calls) {
    assert.equal(call.parentSpanContext?.spanId, batch.spanContext().spanId);
    assert.equal(call.spanContext().traceId, batch.spanContext().traceId);
  }
});
