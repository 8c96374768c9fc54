// A loopback Messages API for the real `@anthropic-ai/sdk`: it refuses a
// request as Anthropic's API does by the rule a test gives (400,
// invalid_request_error, the rule's message) and answers any other with one
// text block, "seen".

import http from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";

/** The error message the API would refuse `sent` with, or undefined where it takes it. */
export type AnthropicRule = (sent: Anthropic.MessageCreateParams) => string | undefined;

/**
 * Runs `body` with a client of a loopback API that applies `rule`, and the
 * list of the messages it refused requests with.
 */
export async function withLoopbackAnthropic(
  rule: AnthropicRule,
  body: (client: Anthropic, refused: string[]) => Promise<void>,
): Promise<void> {
  const refused: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const error = rule(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Anthropic.MessageCreateParams);
      if (error !== undefined) {
        refused.push(error);
        response.writeHead(400, { "content-type": "application/json" });
        response.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: error } }));
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({
        id: "msg_2",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [{ type: "text", text: "seen" }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      }));
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await body(new Anthropic({ apiKey: "test", baseURL: url, maxRetries: 0, timeout: 60_000 }), refused);
  } finally {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  }
}
