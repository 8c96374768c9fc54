// A Gemini API on the loopback for the AI SDK's real Google provider
// (`@ai-sdk/google`): each generateContent request is kept as sent and
// answered with the next scripted turn (function calls, or a final text). What
// Gemini would be sent after a turn's tool calls is read from the requests.

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createGoogleGenerativeAI } from "@ai-sdk/google";

/** A part of a Gemini content, as sent. */
export interface GeminiWirePart {
  text?: string;
  functionCall?: { id?: string; name: string; args: unknown };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
  inlineData?: { mimeType: string; data: string };
}

/** One generateContent request body, as the provider sent it. */
export interface GeminiWireRequest {
  contents: { role: string; parts: GeminiWirePart[] }[];
}

/** A scripted turn: the calls to make (name and arguments), or a final text. */
export type GeminiTurn = { name: string; args: Record<string, unknown> }[] | string;

/**
 * Runs `body` with an AI SDK Google model (`gemini-2.5-flash`) whose API is a
 * loopback server answering `turns` in order ("done" once they run out).
 */
export async function withGeminiServer(
  turns: GeminiTurn[],
  body: (
    model: ReturnType<ReturnType<typeof createGoogleGenerativeAI>>,
    requests: GeminiWireRequest[],
  ) => Promise<void>,
): Promise<void> {
  const requests: GeminiWireRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      const turn = turns.shift() ?? "done";
      const parts = typeof turn === "string" ? [{ text: turn }] : turn.map((call) => ({ functionCall: call }));
      const reply = {
        candidates: [{ content: { role: "model", parts }, finishReason: "STOP" }],
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
      };
      const streamed = (request.url ?? "").includes("streamGenerateContent");
      response.writeHead(200, { "content-type": streamed ? "text/event-stream" : "application/json" });
      response.end(streamed ? `data: ${JSON.stringify(reply)}\n\n` : JSON.stringify(reply));
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const { port } = server.address() as AddressInfo;
  try {
    const google = createGoogleGenerativeAI({ apiKey: "test", baseURL: `http://127.0.0.1:${port}/v1beta` });
    await body(google("gemini-2.5-flash"), requests);
  } finally {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  }
}

/** How many parts of each kind the content answering the calls has: Gemini wants one function response per call. */
export function answerCounts(request: GeminiWireRequest): { calls: number; responses: number; images: number } {
  const calls = request.contents.findLast((c) => c.parts.some((p) => p.functionCall));
  const answer = request.contents.at(-1);
  return {
    calls: calls?.parts.filter((p) => p.functionCall).length ?? 0,
    responses: answer?.parts.filter((p) => p.functionResponse).length ?? 0,
    images: answer?.parts.filter((p) => p.inlineData).length ?? 0,
  };
}
