// The LangChain and LangGraph adapters under the real packages: LangChain's own
// tool loop (a chat model bound to the tools, the turn's calls invoked
// together), and a LangGraph graph with the prebuilt ToolNode and a
// checkpointer, whose approval interrupts are resumed with Command. The model
// is a minimal BaseChatModel that answers with scripted tool calls.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { StructuredTool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { langChainTools } from "../../adapters/langchain.ts";
import { type LangGraphApprovalRequest, langGraphTools } from "../../adapters/langgraph.ts";
import type { ToolResult } from "../../core/result.ts";
import type { BatchCall } from "../../core/executor.ts";
import * as v from "valibot";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import { CHAIN, FIXED, GOOD_AND_BAD, PROBES, snapshotTool, withFixture } from "./_frameworks.ts";
import { declinedCallText } from "../../adapters/declined_call.ts";
import { withSession } from "../core/_helpers.ts";

/** A chat model that answers each request with the next scripted turn: tool calls, or a final text. */
class ScriptedChatModel extends BaseChatModel {
  readonly seen: BaseMessage[][] = [];
  boundTools: unknown[] = [];
  #turns: (BatchCall[] | string)[];
  constructor(turns: (BatchCall[] | string)[]) {
    super({});
    this.#turns = turns;
  }
  _llmType(): string {
    return "scripted";
  }
  override bindTools(tools: StructuredTool[]) {
    this.boundTools = tools.map((t) => convertToOpenAITool(t));
    return this;
  }
  _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.seen.push(messages);
    const turn = this.#turns.shift() ?? "done";
    const message = typeof turn === "string" ? new AIMessage(turn) : new AIMessage({
      content: "",
      tool_calls: turn.map((call) => ({
        type: "tool_call" as const,
        id: call.callId!,
        name: call.name,
        args: call.args as Record<string, unknown>,
      })),
    });
    return Promise.resolve({ generations: [{ text: typeof turn === "string" ? turn : "", message }] });
  }
}

/** LangChain's tool loop: the model's calls of a turn run together, until it answers with text. */
async function toolLoop(model: ScriptedChatModel, tools: StructuredTool[], prompt: string): Promise<BaseMessage[]> {
  const bound = model.bindTools(tools);
  const messages: BaseMessage[] = [new HumanMessage(prompt)];
  for (;;) {
    const ai = await bound.invoke(messages) as AIMessage;
    messages.push(ai);
    if (!ai.tool_calls?.length) return messages;
    const byName = new Map(tools.map((t) => [t.name, t]));
    const outputs = await Promise.all(ai.tool_calls.map((call) => byName.get(call.name)!.invoke(call)));
    messages.push(...outputs as ToolMessage[]);
  }
}

function toolMessages(messages: BaseMessage[]): Map<string, ToolMessage> {
  return new Map(
    messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => [m.tool_call_id, m]),
  );
}

function graphOf(model: ScriptedChatModel, tools: StructuredTool[]) {
  const bound = model.bindTools(tools);
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await bound.invoke(state.messages)] }))
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
}

describe("langChainTools in LangChain's tool loop", () => {
  test("a good call, a bad call whose fix the model reads (no ToolInputParsingException), lossless artifacts", {
    timeout: 60_000,
  }, async () => {
    await withFixture(async ({ session, box, expectedTexts }) => {
      const expected = await expectedTexts([...GOOD_AND_BAD, FIXED]);
      const model = new ScriptedChatModel([GOOD_AND_BAD, [FIXED], "done"]);
      const tools = langChainTools(box, session);
      const messages = await toolLoop(model, tools, "Read notes.txt");
      assert.equal(messages.at(-1)!.content, "done");

      const sent = model.boundTools.find((t) => (t as { function: { name: string } }).function.name === "read_file");
      assert.deepEqual(
        (sent as { function: { parameters: unknown } }).function.parameters,
        box.get("read_file")!.inputSchema,
      );

      const seen = toolMessages(model.seen[1]);
      assert.equal(seen.get("good")!.content, expected[0]);
      assert.equal(seen.get("good")!.status, "success");
      assert.equal(seen.get("bad")!.content, expected[1]);
      assert.equal(seen.get("bad")!.status, "error");
      assert.match(String(seen.get("bad")!.content), /^Error \[invalid_arguments\]: .*path: expected string/);
      assert.equal(toolMessages(messages).get("fixed")!.content, expected[2]);
      const artifacts = [...toolMessages(messages).values()].map((m) => m.artifact as ToolResult);
      assert.deepEqual(artifacts.map((r) => [r.callId, r.status, r.errorCode]), [
        ["good", "success", undefined],
        ["bad", "error", "invalid_arguments"],
        ["fixed", "success", undefined],
      ]);
    });
  });

  test(
    "a string where the schema says integer is toolfence's to judge, not LangChain's",
    { timeout: 60_000 },
    async () => {
      await withFixture(async ({ session, box }) => {
        const call = { name: "read_file", callId: "r", args: { path: "notes.txt" } };
        const expected = await box.call(session, call.name, call.args);
        const tools = langChainTools(box, session);
        const message = await tools.find((t) => t.name === "read_file")!.invoke({
          type: "tool_call",
          id: "r",
          name: "read_file",
          args: { path: "notes.txt", offset: "1" },
        }) as ToolMessage;
        // Whatever toolfence decides about a string offset, LangChain did not decide it.
        const direct = await box.call(session, "read_file", { path: "notes.txt", offset: "1" });
        assert.equal(message.content, (await import("../../core/result.ts")).toModelText(direct));
        assert.equal(expected.status, "success");
      });
    },
  );

  test("8 parallel edits of one file all succeed, in the order the model made them", { timeout: 60_000 }, async () => {
    await withFixture(async ({ dir, session, box }) => {
      const model = new ScriptedChatModel([CHAIN, "done"]);
      const messages = await toolLoop(model, langChainTools(box, session), "Edit chain.txt");
      assert.equal(await fsp.readFile(path.join(dir, "chain.txt"), "utf8"), "step 8\n");
      const seen = toolMessages(messages);
      assert.deepEqual(CHAIN.map((c) => seen.get(c.callId)?.status), Array(8).fill("success"));
    });
  });

  test("a deferred image follows the call's text as an image content block", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box }) => {
      const model = new ScriptedChatModel([[{ name: "snapshot", callId: "s1", args: {} }], "done"]);
      const messages = await toolLoop(model, langChainTools(box, session), "Look");
      const content = toolMessages(messages).get("s1")!.content as Record<string, unknown>[];
      assert.deepEqual(content.map((block) => block.type), ["text", "image"]);
      assert.equal(content[0].text, "taken\nImage from snapshot: the screen");
      assert.equal(content[1].mimeType, "image/png");
      assert.match(String(content[1].data), /^iVBOR/);
    });
  });

  test("without LangGraph, approval is asked of the session's host", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box, asked, deployed }) => {
      const model = new ScriptedChatModel([[{ name: "deploy", callId: "d", args: { service: "web" } }], "done"]);
      const messages = await toolLoop(model, langChainTools(box, session), "Deploy");
      assert.deepEqual(asked, ["Approve tool call"]);
      assert.deepEqual(deployed, ["web"]);
      assert.equal(toolMessages(messages).get("d")!.content, "deployed web");
    });
  });
});

describe("LangChain's strict flag", () => {
  /** Where a schema breaks OpenAI's strict rules: an object not closed, or a property not in `required`. */
  function notStrict(schema: Record<string, unknown>, at = ""): string[] {
    const broken: string[] = [];
    const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
    if (properties) {
      if (schema.additionalProperties !== false) broken.push(`${at}: not closed`);
      const required = new Set(schema.required as string[] ?? []);
      for (const [key, sub] of Object.entries(properties)) {
        if (!required.has(key)) broken.push(`${at}/${key}: not required`);
        broken.push(...notStrict(sub, `${at}/${key}`));
      }
    }
    if (schema.items && typeof schema.items === "object") {
      broken.push(...notStrict(schema.items as Record<string, unknown>, `${at}[]`));
    }
    for (const member of (schema.anyOf ?? []) as Record<string, unknown>[]) broken.push(...notStrict(member, at));
    return broken;
  }

  test("with strict: true the tools send OpenAI's strict schema, and the model's nulls mean absent", {
    timeout: 60_000,
  }, async () => {
    // Before: convertToOpenAITool(tool, { strict: true }) (what ChatOpenAI's bindTools(tools, { strict: true }) does)
    // only set the flag; read_file went out with required ["path"] beside offset, limit and line_numbers, which
    // OpenAI refuses ("'required' is required to be supplied and to be an array including every key in
    // properties"), and langChainTools had no way to send a strict schema.
    await withFixture(async ({ session, box }) => {
      for (
        const tools of [langChainTools(box, session, { strict: true }), langGraphTools(box, session, { strict: true })]
      ) {
        for (const t of tools) {
          const sent = convertToOpenAITool(t, { strict: true }).function;
          assert.equal((sent as { strict?: boolean }).strict, true);
          assert.deepEqual(notStrict(sent.parameters as Record<string, unknown>), [], t.name);
        }
        const read = tools.find((t) => t.name === "read_file")!;
        const message = await read.invoke({
          type: "tool_call",
          id: "s1",
          name: "read_file",
          args: { path: "notes.txt", offset: 1, limit: null, line_numbers: null },
        }) as ToolMessage;
        assert.equal(message.status, "success", String(message.content));
        assert.equal(JSON.parse(String(message.content)).content, "beta");
      }
      // Without the option the schema is the tool's own, as other providers take it.
      const plain = langChainTools(box, session).find((t) => t.name === "read_file")!;
      assert.deepEqual(convertToOpenAITool(plain).function.parameters, box.get("read_file")!.inputSchema);
      // What strict mode cannot send is refused while the tools are built, naming the tool.
      const wordy = new ToolBox().register(
        tool({ name: "wordy", description: "w".repeat(1025), input: v.object({}), readOnly: true, run: () => "" }),
      );
      assert.throws(() => langChainTools(wordy, session, { strict: true }), /"wordy".*at most 1024/);
      assert.equal(langChainTools(wordy, session)[0].description.length, 1025);
    });
  });
});

describe("langGraphTools in a LangGraph graph with ToolNode", () => {
  test(
    "a good call, a bad call whose fix the model reads, and 8 parallel edits in order",
    { timeout: 60_000 },
    async () => {
      await withFixture(async ({ dir, session, box, expectedTexts }) => {
        const expected = await expectedTexts(GOOD_AND_BAD);
        const model = new ScriptedChatModel([GOOD_AND_BAD, CHAIN, "done"]);
        const graph = graphOf(model, langGraphTools(box, session));
        const state = await graph.invoke({ messages: [new HumanMessage("go")] }, { configurable: { thread_id: "t" } });
        const seen = toolMessages(state.messages);
        assert.equal(seen.get("good")!.content, expected[0]);
        assert.equal(seen.get("bad")!.content, expected[1]);
        assert.equal(seen.get("bad")!.status, "error");
        assert.deepEqual(CHAIN.map((c) => seen.get(c.callId)?.status), Array(8).fill("success"));
        assert.equal(await fsp.readFile(path.join(dir, "chain.txt"), "utf8"), "step 8\n");
      });
    },
  );

  test(
    "ToolNode runs a turn's calls in parallel: concurrency-safe ones overlap, the others never",
    { timeout: 60_000 },
    async () => {
      await withFixture(async ({ session, box, overlap }) => {
        const graph = graphOf(new ScriptedChatModel([PROBES, "done"]), langGraphTools(box, session));
        await graph.invoke({ messages: [new HumanMessage("wait")] }, { configurable: { thread_id: "p" } });
        console.log(`langgraph: at most ${overlap.safe.most} safe and ${overlap.unsafe.most} unsafe calls at once`);
        assert.ok(overlap.safe.most > 1, "ToolNode ran the safe calls one at a time: nothing was tested");
        assert.equal(overlap.unsafe.most, 1);
      });
    },
  );

  test("an approval answer reaches the call it was asked for, even when a later call's check finishes first", {
    timeout: 60_000,
  }, async () => {
    await withFixture(async ({ session }) => {
      const ran: string[] = [];
      // The first call's approval check is slow, the second's immediate: unordered, the second would ask first.
      const slowCheck = tool({
        name: "launch",
        description: "Launch a rocket.",
        input: v.object({ rocket: v.string() }),
        needsApproval: async ({ rocket }) => {
          if (rocket === "slow") await new Promise((done) => setTimeout(done, 30));
          return true;
        },
        run: ({ rocket }) => {
          ran.push(rocket);
          return `launched ${rocket}`;
        },
      });
      const box = new ToolBox().register(slowCheck);
      const model = new ScriptedChatModel([
        [
          { name: "launch", callId: "l-slow", args: { rocket: "slow" } },
          { name: "launch", callId: "l-fast", args: { rocket: "fast" } },
        ],
        "done",
      ]);
      const graph = graphOf(model, langGraphTools(box, session));
      const config = { configurable: { thread_id: "order" } };
      let state = await graph.invoke({ messages: [new HumanMessage("go")] }, config);
      const asked = () => (state as { __interrupt__?: { value: LangGraphApprovalRequest }[] }).__interrupt__?.[0].value;
      assert.equal(asked()?.callId, "l-slow");
      state = await graph.invoke(new Command({ resume: true }), config);
      assert.equal(asked()?.callId, "l-fast");
      state = await graph.invoke(new Command({ resume: false }), config);
      assert.deepEqual(ran, ["slow"], "the yes went to the call it was asked about, the no to the other");
      const seen = toolMessages(state.messages);
      assert.equal(seen.get("l-slow")!.content, "launched slow");
      assert.equal(seen.get("l-fast")!.status, "error");
    });
  });

  test("approvals are interrupts: one granted runs once, one declined never runs, siblings do not run twice", {
    timeout: 60_000,
  }, async () => {
    await withFixture(async ({ dir, session, box, asked, deployed }) => {
      const model = new ScriptedChatModel([
        [
          { name: "edit_file", callId: "e", args: { path: "chain.txt", old_text: "step 0\n", new_text: "step 1\n" } },
          { name: "deploy", callId: "d-web", args: { service: "web" } },
          { name: "deploy", callId: "d-db", args: { service: "db" } },
        ],
        "done",
      ]);
      const graph = graphOf(model, langGraphTools(box, session));
      const config = { configurable: { thread_id: "approvals" } };
      let state = await graph.invoke({ messages: [new HumanMessage("go")] }, config);
      const first = (state as { __interrupt__?: { value: LangGraphApprovalRequest }[] }).__interrupt__;
      assert.equal(first?.[0].value.callId, "d-web");
      assert.equal(first?.[0].value.type, "toolfence_approval");
      assert.deepEqual(deployed, []);

      state = await graph.invoke(new Command({ resume: true }), config);
      const second = (state as { __interrupt__?: { value: LangGraphApprovalRequest }[] }).__interrupt__;
      assert.equal(second?.[0].value.callId, "d-db");

      state = await graph.invoke(new Command({ resume: false }), config);
      assert.equal(state.messages.at(-1)!.content, "done");
      assert.deepEqual(deployed, ["web"], "the approved call ran once, the declined one never");
      const seen = toolMessages(state.messages);
      assert.equal(seen.get("e")!.status, "success", "the edit ran once although the node ran three times");
      assert.equal(await fsp.readFile(path.join(dir, "chain.txt"), "utf8"), "step 1\n");
      assert.equal(seen.get("d-web")!.content, "deployed web");
      assert.equal((seen.get("d-web")!.artifact as ToolResult).metadata.approval, "user");
      assert.equal(seen.get("d-db")!.status, "error");
      assert.equal(String(seen.get("d-db")!.content), declinedCallText("deploy"));
      assert.ok(!asked.includes("Approve tool call"), "approval went through interrupts, not the session's host");
    });
  });
});

describe("a tool call id seen again is a new call", () => {
  // Servers that number the calls of each response from 0 (vLLM, llama.cpp, ...) give a later turn's call an id
  // an earlier one had; the same call may also be invoked again. Each invocation runs: the model never reads an
  // earlier call's result for a call that did not run.
  const noteTool = (ran: string[]) =>
    tool({
      name: "note",
      description: "Append a note.",
      input: v.object({ text: v.string() }),
      needsApproval: ({ text }) => text === "approve me",
      run: ({ text }) => {
        ran.push(text);
        return `noted ${text} (${ran.length} notes)`;
      },
    });
  const call = (text: string) => ({ type: "tool_call" as const, id: "call_0", name: "note", args: { text } });

  test("langChainTools: tool.invoke and ToolNode outside a graph", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const ran: string[] = [];
      const [note] = langChainTools(new ToolBox().register(noteTool(ran)), session);
      const first = await note.invoke(call("first")) as ToolMessage;
      const second = await note.invoke(call("second")) as ToolMessage;
      assert.equal(first.content, "noted first (1 notes)");
      assert.equal(second.content, "noted second (2 notes)");
      const node = new ToolNode([note]);
      const third = await node.invoke({ messages: [new AIMessage({ content: "", tool_calls: [call("third")] })] });
      assert.equal(third.messages[0].content, "noted third (3 notes)");
      assert.deepEqual(ran, ["first", "second", "third"]);
    });
  });

  test("langGraphTools: a later turn of the graph runs its call; a resumed node does not run a finished one twice", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session) => {
      const ran: string[] = [];
      const tools = langGraphTools(new ToolBox().register(noteTool(ran)), session);
      const byName = new Map(tools.map((t) => [t.name, t]));
      const turns = [[call("first"), { ...call("approve me"), id: "call_1" }], [call("second")]];
      // A tools node of one's own (the prebuilt ToolNode skips a call whose id already has a ToolMessage).
      const graph = new StateGraph(MessagesAnnotation)
        .addNode("agent", () => {
          const turn = turns.shift();
          return { messages: [turn ? new AIMessage({ content: "", tool_calls: turn }) : new AIMessage("done")] };
        })
        .addNode("tools", async (state) => {
          const last = state.messages.at(-1) as AIMessage;
          return { messages: await Promise.all(last.tool_calls!.map((c) => byName.get(c.name)!.invoke(c))) };
        })
        .addEdge(START, "agent")
        .addConditionalEdges("agent", toolsCondition, ["tools", END])
        .addEdge("tools", "agent")
        .compile({ checkpointer: new MemorySaver() });
      const config = { configurable: { thread_id: "ids" } };
      let state = await graph.invoke({ messages: [new HumanMessage("go")] }, config);
      assert.ok("__interrupt__" in state, "the approval stopped the graph");
      state = await graph.invoke(new Command({ resume: true }), config);
      assert.equal(state.messages.at(-1)!.content, "done");
      assert.deepEqual(ran, ["first", "approve me", "second"]);
      const texts = state.messages.filter((m) => ToolMessage.isInstance(m)).map((m) => m.content);
      assert.deepEqual(texts, ["noted first (1 notes)", "noted approve me (2 notes)", "noted second (3 notes)"]);
    });
  });

  test(
    "langGraphTools: a node that invokes a call again with other arguments runs it",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const ran: string[] = [];
        const [note] = langGraphTools(new ToolBox().register(noteTool(ran)), session);
        const graph = new StateGraph(MessagesAnnotation)
          .addNode("tools", async () => {
            const first = await note.invoke(call("draft")) as ToolMessage;
            // The node's own retry of the call, corrected: the same id, other arguments.
            const second = await note.invoke(call("final")) as ToolMessage;
            return { messages: [first, second] };
          })
          .addEdge(START, "tools")
          .addEdge("tools", END)
          .compile({ checkpointer: new MemorySaver() });
        const state = await graph.invoke({ messages: [] }, { configurable: { thread_id: "retry" } });
        assert.deepEqual(ran, ["draft", "final"]);
        assert.deepEqual(state.messages.map((m) => m.content), ["noted draft (1 notes)", "noted final (2 notes)"]);
      });
    },
  );
});

// A streamed ChatAnthropic answer that stopped at max_tokens inside write_file's content: the chunks as
// @langchain/anthropic yields them (the tool_use block's partial JSON as tool_call_chunks, the stop reason from
// message_delta in additional_kwargs), concatenated by @langchain/core, whose partial-JSON parse turns the cut
// arguments into a whole-looking call.
function cutAnswer(stopReason: string, after?: string): AIMessageChunk {
  const chunks = [
    new AIMessageChunk({
      content: [{ index: 0, type: "tool_use", id: "toolu_w", name: "write_file", input: "" }],
      tool_call_chunks: [{ index: 0, id: "toolu_w", name: "write_file", args: "" }],
    }),
    new AIMessageChunk({
      content: [{ index: 0, type: "input_json_delta", input: CUT_WRITE }],
      tool_call_chunks: [{ index: 0, args: CUT_WRITE }],
    }),
    ...(after === undefined ? [] : [new AIMessageChunk({ content: [{ index: 1, type: "text", text: after }] })]),
    new AIMessageChunk({ content: "", additional_kwargs: { stop_reason: stopReason, stop_sequence: null } }),
  ];
  return chunks.reduce((all, chunk) => all.concat(chunk));
}
const CUT_WRITE = '{"path": "app.py", "content": "def main():\\n    print(\\"hel';

describe("a call cut off at the output limit (a streamed ChatAnthropic answer at max_tokens)", () => {
  test("ToolNode: the cut write_file does not run, the model reads why", { timeout: 60_000 }, async () => {
    await withFixture(async ({ dir, session, box }) => {
      const answer = cutAnswer("max_tokens");
      // What LangChain made of the cut input: a call that looks whole.
      assert.deepEqual(answer.tool_calls?.[0].args, { path: "app.py", content: 'def main():\n    print("hel' });
      for (const tools of [langChainTools(box, session), langGraphTools(box, session)]) {
        const state = await new ToolNode(tools).invoke({ messages: [new HumanMessage("Write app.py"), answer] });
        const [message] = state.messages as ToolMessage[];
        assert.equal(message.status, "error");
        assert.match(String(message.content), /cut off before its arguments were complete.*stop_reason "max_tokens"/);
        assert.equal((message.artifact as ToolResult).errorCode, "invalid_arguments");
        await assert.rejects(fsp.stat(path.join(dir, "app.py")), { code: "ENOENT" });
      }
    });
  });

  test("an OpenAI-style finish_reason length cuts the last call; a complete answer and text after the call run", {
    timeout: 60_000,
  }, async () => {
    await withFixture(async ({ dir, session, box }) => {
      const tools = langChainTools(box, session);
      const calls = [
        { id: "c1", name: "write_file", args: { path: "a.txt", content: "a" } },
        { id: "c2", name: "write_file", args: { path: "b.txt", content: "b, cut" } },
      ];
      const cut = new AIMessage({ content: "", tool_calls: calls, response_metadata: { finish_reason: "length" } });
      const state = await new ToolNode(tools).invoke({ messages: [cut] });
      assert.deepEqual((state.messages as ToolMessage[]).map((m) => m.status), ["success", "error"]);
      assert.equal(await fsp.readFile(path.join(dir, "a.txt"), "utf8"), "a");
      await assert.rejects(fsp.stat(path.join(dir, "b.txt")), { code: "ENOENT" });
      // A tool loop of your own that gives the tools the AI message as ToolNode does (docs/adapters.md).
      const own = await tools.find((t) => t.name === "write_file")!.invoke(
        { ...cut.tool_calls![1], type: "tool_call" },
        {
          state: { messages: [cut] },
        } as never,
      ) as ToolMessage;
      assert.equal(own.status, "error");
      assert.match(String(own.content), /cut off before its arguments were complete.*finish_reason "length"/);
      await assert.rejects(fsp.stat(path.join(dir, "b.txt")), { code: "ENOENT" });
      // The same call ended by tool_use, and one followed by text before max_tokens, are whole: they run.
      for (const [name, answer] of [["x.py", cutAnswer("tool_use")], ["y.py", cutAnswer("max_tokens", "and then")]]) {
        const whole = answer as AIMessageChunk;
        whole.tool_calls![0].args = { path: name, content: "print(1)\n" };
        const ran = await new ToolNode(tools).invoke({ messages: [whole] });
        assert.equal((ran.messages as ToolMessage[])[0].status, "success", JSON.stringify(ran.messages));
        assert.equal(await fsp.readFile(path.join(dir, name as string), "utf8"), "print(1)\n");
      }
      // Gemini's function calls arrive whole: a MAX_TOKENS finish cuts none (as in the gemini dialect).
      const gemini = new AIMessage({
        content: "",
        tool_calls: [{ id: "g1", name: "write_file", args: { path: "g.txt", content: "g" } }],
        response_metadata: { finish_reason: "MAX_TOKENS", finishReason: "MAX_TOKENS" },
      });
      const ranGemini = await new ToolNode(tools).invoke({ messages: [gemini] });
      assert.equal((ranGemini.messages as ToolMessage[])[0].status, "success");
    });
  });
});

// The fields of Gemini's `Schema` (generativelanguage v1beta): a request whose function parameters hold any other
// keyword, a list for `items` or a list of types, is refused whole with 400 "Invalid JSON payload received. Unknown
// name ...".
const GEMINI_SCHEMA_FIELDS = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "propertyOrdering",
  "default",
  "items",
  "minimum",
  "maximum",
]);

/** What `@langchain/google-genai` sends as a tool's `parameters`: its schema without additionalProperties and $schema. */
function asChatGoogleSends(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(asChatGoogleSends);
  if (typeof schema !== "object" || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema).filter(([key]) => key !== "additionalProperties" && key !== "$schema").map((
      [key, value],
    ) => [key, asChatGoogleSends(value)]),
  );
}

/** The places where `schema` leaves Gemini's Schema. */
function outsideGemini(schema: unknown, at: string): string[] {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return [`${at}: not a schema object`];
  const found: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (!GEMINI_SCHEMA_FIELDS.has(key)) found.push(`${at}/${key}`);
    else if (key === "type" && typeof value !== "string") found.push(`${at}/type is ${JSON.stringify(value)}`);
    else if (key === "properties") {
      for (const [name, sub] of Object.entries(value as object)) found.push(...outsideGemini(sub, `${at}/${name}`));
    } else if (key === "items") found.push(...outsideGemini(value, `${at}/items`));
    else if (key === "anyOf") {
      (value as unknown[]).forEach((sub, i) => found.push(...outsideGemini(sub, `${at}/anyOf/${i}`)));
    }
  }
  return found;
}

describe("LangChain tools for a Gemini chat model ({ gemini: true })", () => {
  const settings = tool({
    name: "settings",
    description: "Apply settings.",
    input: v.object({
      mode: v.literal("apply"),
      labels: v.record(v.string(), v.number()),
      note: v.nullable(v.string()),
      level: v.optional(v.union([v.string(), v.number()])),
      rows: v.array(v.object({ key: v.string(), on: v.boolean() })),
    }),
    run: (args) => JSON.stringify(args),
  });

  test("every tool's schema, as ChatGoogleGenerativeAI sends it, is inside Gemini's Schema", {
    timeout: 60_000,
  }, async () => {
    await withFixture(({ session }) => {
      const box = new ToolBox().withDefaults().register(settings);
      // The plain schemas are not: the bash tool's env map and a literal.
      const plain = langChainTools(box, session).flatMap((t) => outsideGemini(asChatGoogleSends(t.schema), t.name));
      assert.ok(plain.includes("bash/env/propertyNames") && plain.includes("settings/mode/const"), plain.join("\n"));
      const tools = langChainTools(box, session, { gemini: true });
      assert.equal(tools.length, box.list(session).length);
      const outside = tools.flatMap((t) => {
        const sent = asChatGoogleSends(t.schema) as { properties?: object };
        // LangChain leaves out the parameters of a tool without properties.
        return Object.keys(sent.properties ?? {}).length === 0 ? [] : outsideGemini(sent, t.name);
      });
      assert.deepEqual(outside, []);
      assert.throws(() => langChainTools(box, session, { gemini: true, strict: true }), RangeError);
      return Promise.resolve();
    });
  });

  test("a call as Gemini makes it (a map as {key, value} entries) runs with the tool's own arguments", {
    timeout: 60_000,
  }, async () => {
    await withFixture(async ({ session }) => {
      const [fenced] = langGraphTools(new ToolBox().register(settings), session, { gemini: true });
      const args = { mode: "apply", labels: [{ key: "a", value: 1 }], note: null, rows: [{ key: "x", on: true }] };
      const message = await fenced.invoke({ type: "tool_call", id: "g1", name: "settings", args }) as ToolMessage;
      assert.equal(message.status, "success", String(message.content));
      assert.deepEqual(JSON.parse(String(message.content)), {
        mode: "apply",
        labels: { a: 1 },
        note: null,
        rows: [{ key: "x", on: true }],
      });
      const tuple = tool({
        name: "pair",
        description: "Pair.",
        input: v.object({ p: v.tuple([v.number()]) }),
        run: () => "",
      });
      assert.throws(() => langChainTools(new ToolBox().register(tuple), session, { gemini: true }), /gemini/);
    });
  });
});

describe("LangChain tools for a Gemini chat model: deferred images", () => {
  test("{ gemini: true } names a call's images as not shown (ChatGoogleGenerativeAI sends image blocks as text)", {
    timeout: 60_000,
  }, async () => {
    await withFixture(async ({ session }) => {
      const box = new ToolBox().register(snapshotTool);
      const call = { type: "tool_call" as const, id: "s1", name: "snapshot", args: {} };
      const [shown] = langChainTools(box, session, { gemini: true, images: true });
      const sent = (await shown.invoke(call) as ToolMessage).content as { type: string }[];
      assert.deepEqual(sent.map((block) => block.type), ["text", "image"]);
      for (
        const tools of [langChainTools(box, session, { gemini: true }), langGraphTools(box, session, { gemini: true })]
      ) {
        const message = await tools[0].invoke({ ...call, id: `s-${tools.length}-${Math.random()}` }) as ToolMessage;
        assert.equal(
          message.content,
          "taken\nImage from snapshot: the screen (not shown: this model takes no images in tool results)",
        );
      }
    });
  });
});
