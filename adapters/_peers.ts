// The optional peers of @toolfence/adapters, each with the range its deno.json imports at (a test keeps them equal)
// and the entry point that loads it: on npm a user installs the ones the entry points they import need.

import type { Peer } from "@toolfence/core";

export const AI_SDK: Peer = { name: "ai", range: "^7.0.0", neededBy: "@toolfence/adapters/ai-sdk" };
export const OPENAI_AGENTS: Peer = {
  name: "@openai/agents",
  range: "^0.20.0",
  neededBy: "@toolfence/adapters/openai-agents",
};
export const LANGCHAIN_CORE: Peer = {
  name: "@langchain/core",
  range: "^1.4.0",
  neededBy: "@toolfence/adapters/langchain and /langgraph",
};
export const LANGGRAPH: Peer = {
  name: "@langchain/langgraph",
  range: "^1.7.3",
  neededBy: "@toolfence/adapters/langgraph",
};
export const MASTRA: Peer = { name: "@mastra/core", range: "^1.71.0", neededBy: "@toolfence/adapters/mastra" };
export const GOOGLE_ADK: Peer = { name: "@google/adk", range: "^2.0.0", neededBy: "@toolfence/adapters/google-adk" };
export const CLAUDE_AGENT_SDK: Peer = {
  name: "@anthropic-ai/claude-agent-sdk",
  range: "^0.3.328",
  neededBy: "@toolfence/adapters/claude-agent",
};
export const ZOD: Peer = { name: "zod", range: "^4.2.0", neededBy: "@toolfence/adapters/claude-agent" };
export const MCP_SDK: Peer = {
  name: "@modelcontextprotocol/sdk",
  range: "^1.32.2",
  neededBy: "@toolfence/adapters/mcp (and toolfence/mcp, toolfence serve)",
};
export const JOSE: Peer = { name: "jose", range: "^6.2.18", neededBy: "@toolfence/adapters/mcp's HTTP server" };
export const POSTGRES: Peer = {
  name: "postgres",
  range: "^3.4.9",
  neededBy: "@toolfence/adapters/mcp's PostgreSQL store (serve --store postgres://...)",
};
export const HONO: Peer = {
  name: "hono",
  range: "^4.13.19",
  neededBy: "@toolfence/adapters/console (serve --console)",
};
