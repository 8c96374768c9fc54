// A scripted Anthropic Messages API on loopback, for driving the real Claude
// Code binary (under the Claude Agent SDK) without a real model: each request
// whose tools include the toolfence server's is answered with the next
// scripted turn (tool_use blocks, or a final text), streamed as server-sent
// events; any other request (a title, a summary) gets a short text. Every
// request body is kept, so a test reads what the model was shown.

import http from "node:http";
import type { AddressInfo } from "node:net";
import type { BatchCall } from "../../core/executor.ts";

export interface FakeAnthropic {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The bodies of the scripted requests, in order. */
  requests: { messages: { role: string; content: unknown }[]; tools?: { name: string }[] }[];
  /** Every path asked for, in order. */
  paths: string[];
  close(): Promise<void>;
}

function sse(events: Record<string, unknown>[]): string {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("");
}

function message(blocks: Record<string, unknown>[], stopReason: string): string {
  const events: Record<string, unknown>[] = [{
    type: "message_start",
    message: {
      id: `msg_${Math.random().toString(36).slice(2)}`,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  }];
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
    } else {
      events.push({
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      events.push({
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
      });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({
    type: "message_delta",
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 1 },
  });
  events.push({ type: "message_stop" });
  return sse(events);
}

/** Starts the fake; `serverName` is the MCP server whose tools mark the agent's own requests. */
export async function fakeAnthropic(turns: (BatchCall[] | string)[], serverName = "toolfence"): Promise<FakeAnthropic> {
  const requests: FakeAnthropic["requests"] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.startsWith("/v1/messages") || req.url.includes("count_tokens")) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: "not here" } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const ours = (body.tools ?? []).some((t: { name?: string }) => t.name?.startsWith(`mcp__${serverName}__`));
      let payload: string;
      if (!ours) {
        payload = message([{ type: "text", text: "ok" }], "end_turn");
      } else {
        requests.push(body);
        const turn = turns.shift() ?? "done";
        payload = typeof turn === "string" ? message([{ type: "text", text: turn }], "end_turn") : message(
          turn.map((call) => ({
            type: "tool_use",
            id: call.callId,
            name: `mcp__${serverName}__${call.name}`,
            input: call.args,
          })),
          "tool_use",
        );
      }
      if (body.stream) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.end(payload);
      } else {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: "this fake only streams" } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The tool results of a request, by tool_use id: what the model read. */
export function toolResultsIn(request: FakeAnthropic["requests"][number]): Map<string, Record<string, unknown>> {
  const seen = new Map<string, Record<string, unknown>>();
  for (const m of request.messages) {
    if (!Array.isArray(m.content)) continue;
    for (const block of m.content as Record<string, unknown>[]) {
      if (block.type === "tool_result") seen.set(block.tool_use_id as string, block);
    }
  }
  return seen;
}
