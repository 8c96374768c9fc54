/**
 * The core of toolfence: defining tools, the toolbox, sessions, the call
 * pipeline, results and artifacts. It knows nothing of MCP or any provider.
 *
 * @module
 */

export * from "./errors.ts";
export * from "./host.ts";
export * from "./result.ts";
export * from "./schema.ts";
export * from "./validation.ts";
export * from "./tool.ts";
export * from "./context.ts";
export * from "./hooks.ts";
export * from "./artifacts.ts";
export * from "./images.ts";
export * from "./session.ts";
export * from "./groups.ts";
export * from "./dialects.ts";
export * from "./executor.ts";
export * from "./toolbox.ts";
