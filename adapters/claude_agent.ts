/**
 * The Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`): the toolbox's tools
 * as an in-process MCP server (`createSdkMcpServer`), with the permission
 * callback that goes with it, as options to spread into `query()`.
 *
 * - The model is given the tool's JSON Schema, and the server's own
 *   validation accepts any object (a loose zod object that describes itself
 *   with the tool's JSON Schema), so a bad call's result is toolfence's
 *   message with the fix, unknown arguments included;
 * - results are MCP tool results: `toModelText(result)` as text, `isError`
 *   for anything but success, the call's deferred images as image content, and
 *   the lossless `ToolResult` in `_meta` under `CLAUDE_AGENT_RESULT_META`;
 * - calls go through the session's call gate: concurrency-safe tools
 *   together, any other alone, first come first served;
 * - approval is Claude Code's permission callback: the returned `canUseTool`
 *   allows the calls that need no approval, and hands a call of a tool with
 *   `needsApproval` (on the validated arguments) to your own `canUseTool` when
 *   you give one, and otherwise asks the session's host. An approved call
 *   runs without the session being asked again; a declined one never reaches
 *   the server, and the model reads toolfence's `not_approved` message. The
 *   policy's own questions go to the session's host.
 *
 * Its own entry point, `@toolfence/adapters/claude-agent`;
 * `@anthropic-ai/claude-agent-sdk` and `zod` (its peer) are optional peer
 * dependencies that nothing else of toolfence loads. Importing it needs
 * `--allow-env --allow-sys=homedir` (the SDK reads them on load); running
 * `query()` starts the Claude Code binary the SDK ships (`--allow-run`).
 *
 * @module
 */

import type { CanUseTool, McpSdkServerConfigWithInstance, PermissionResult } from "@anthropic-ai/claude-agent-sdk";
import { type AnyTool, type ChoiceOutcome, toModelText } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import { mcpAnnotations } from "./mcp/dialect.ts";
import {
  frameworkApproval,
  type FrameworkToolsOptions,
  freshCallId,
  gatedCall,
  listedTools,
  needsApprovalOf,
  textAndImages,
} from "./_framework.ts";

import { type AnthropicTool, anthropicTools } from "./anthropic.ts";

// Optional peers on npm, imported statically: a top-level await here would make the module graph impossible to
// require() (ERR_REQUIRE_ASYNC_MODULE), and the tools are built synchronously from their values. Without it, importing
// this entry point fails with the runtime's ERR_MODULE_NOT_FOUND naming it.
import { createSdkMcpServer, tool as sdkTool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

export type { FrameworkToolsOptions } from "./_framework.ts";

/** Options of {@linkcode claudeAgentOptions}. */
export interface ClaudeAgentOptionsOptions<T = unknown> extends FrameworkToolsOptions<T> {
  /**
   * The MCP server's name (letters, digits, `_` and `-`); the tools are
   * `mcp__<name>__<tool>`, which the Anthropic API takes up to 64 characters
   * long. Default `toolfence` (tool names of up to 48 characters).
   */
  serverName?: string;
  /**
   * Decides the calls that need approval (and any other tool's, if you spread
   * the result over options that use Claude Code's built-in tools). Without it,
   * toolfence's tools ask the session's host and other tools are denied.
   */
  canUseTool?: CanUseTool;
}

/** What to spread into the options of `query()`. */
export interface ClaudeAgentToolOptions {
  /** The in-process server, under its name. */
  mcpServers: Record<string, McpSdkServerConfigWithInstance>;
  /** Allows the server's calls that need no approval and asks about the others. */
  canUseTool: CanUseTool;
}

/** Where a call's lossless `ToolResult` is in its MCP result's `_meta`. */
export const CLAUDE_AGENT_RESULT_META = "toolfence/result";
const RESULT_META = CLAUDE_AGENT_RESULT_META;

/**
 * The longest tool name the Anthropic Messages API takes. Claude Code sends an
 * MCP tool as `mcp__<server>__<tool>`, unshortened, and the API then refuses
 * the whole request ("tools.N.custom.name: String should have at most 64
 * characters").
 */
const ANTHROPIC_TOOL_NAME_MAX = 64;

/** How long an approval given in `canUseTool` waits for its call; Claude Code makes the call right after. */
const APPROVAL_TTL_MS = 60_000;

/** The key an approval is remembered by until its call arrives: the tool and its arguments. */
function approvalKey(name: string, args: unknown): string {
  return `${name}\u0000${stableJson(args)}`;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value).sort().map((key) =>
      `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`
    );
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The `_meta` key under which Claude Code sends the model's `tool_use` id with each MCP call. */
const TOOL_USE_ID_META = "claudecode/toolUseId";

/**
 * The model's `tool_use` id of a call, so that the result's `callId` is the id the model gave, as in every
 * other adapter (it was one of toolfence's own, which nothing in the transcript names); a call without it
 * (another client of the server) gets a fresh one.
 */
function toolUseIdOf(extra: unknown): string | undefined {
  const id = (extra as { _meta?: Record<string, unknown> } | undefined)?._meta?.[TOOL_USE_ID_META];
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** A zod schema that accepts any object and lists itself as `schema` (a tool's `input_schema` in the Anthropic dialect). */
function looseSchema(schema: AnthropicTool["input_schema"]) {
  // Claude sends it on to the Anthropic API, which takes JSON Schema 2020-12 only (a draft-07 tuple failed the request);
  // said so in `$schema`, which would otherwise be the MCP SDK's draft-07.
  return z.looseObject({}).meta(
    { ...schema, $schema: "https://json-schema.org/draft/2020-12/schema" } as Record<string, unknown>,
  );
}

/**
 * The toolbox's listed tools (by the session's capabilities and fence, as
 * `toolbox.list` decides) as options for `query()`: the in-process MCP server
 * and `canUseTool`. Throws a `RangeError` naming the tool when a tool's
 * name as Claude sees it, `mcp__<serverName>__<tool>`, is longer than the 64
 * characters the Anthropic API takes, and for a `serverName` with a character
 * other than a letter, a digit, `_` or `-` (Claude Code renames such a
 * server's tools, and `canUseTool` would not know them); throws a
 * `SchemaDialectError` for a tool whose input schema the Anthropic API
 * refuses (not one object schema, or `anyOf`/`oneOf`/`allOf` at its root).
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { claudeAgentOptions } from "@toolfence/adapters/claude-agent";
 * const session = new Session({ workspace: Deno.cwd() });
 * const options = claudeAgentOptions(new ToolBox().withDefaults("fs"), session);
 * // for await (const message of query({ prompt: "...", options: { ...options, tools: [] } })) ...
 * console.log(Object.keys(options.mcpServers)); // ["toolfence"]
 * await session.close();
 * ```
 */
export function claudeAgentOptions<T = unknown>(
  toolbox: ToolBox,
  session: Session,
  options: ClaudeAgentOptionsOptions<T> = {},
): ClaudeAgentToolOptions {
  const serverName = options.serverName ?? "toolfence";
  // Claude Code names the tools of a server whose name has another character with "_" in its place
  // (`tool fence` gives `mcp__tool_fence__read_file`), so canUseTool would know none of them and refuse every call.
  if (!/^[A-Za-z0-9_-]+$/.test(serverName)) {
    throw new RangeError(
      `claudeAgentOptions' serverName ${JSON.stringify(serverName)} has a character Claude Code replaces in the ` +
        `names of the server's tools, so none of their calls would be let through; use letters, digits, _ and - only`,
    );
  }
  const prefix = `mcp__${serverName}__`;
  const listed = listedTools(toolbox, session, options);
  for (const t of listed) {
    const full = `${prefix}${t.name}`;
    if (full.length > ANTHROPIC_TOOL_NAME_MAX) {
      throw new RangeError(
        `Tool "${t.name}" would reach Claude as "${full}" (${full.length} characters); the Anthropic API refuses ` +
          `tool names longer than ${ANTHROPIC_TOOL_NAME_MAX}, so every request of the session would fail. ` +
          `Give the tool a name of at most ${ANTHROPIC_TOOL_NAME_MAX - prefix.length} characters, ` +
          `or claudeAgentOptions a shorter serverName`,
      );
    }
  }
  // Claude Code hands each tool's schema to the Anthropic API as it is listed, and the API refuses every request of
  // the session over one it does not take ("tools.N.custom.input_schema: input_schema does not support oneOf, allOf,
  // or anyOf at the top level"; a root that is not an object): the Anthropic dialect's own checks and 2020-12 form.
  const schemas = new Map(anthropicTools(listed).map((t) => [t.name, t.input_schema]));
  const byName = new Map(listed.map((t) => [t.name, t]));
  // Approvals given in canUseTool, by tool and arguments: when each was given; each is taken by one call.
  const approved = new Map<string, number[]>();

  const takeApproval = async (t: AnyTool, args: unknown): Promise<ChoiceOutcome<boolean> | undefined> => {
    if (!(await needsApprovalOf(t, args))) return undefined;
    const key = approvalKey(t.name, args);
    const now = Date.now();
    const fresh = (approved.get(key) ?? []).filter((at) => now - at <= APPROVAL_TTL_MS);
    const taken = fresh.shift();
    if (fresh.length > 0) approved.set(key, fresh);
    else approved.delete(key);
    // Not approved through Claude Code (bypassPermissions, a call nobody asked about, an approval gone
    // stale): the session asks.
    return taken === undefined ? undefined : frameworkApproval(true);
  };

  const server = createSdkMcpServer({
    name: serverName,
    tools: listed.map((t) =>
      sdkTool(
        t.name,
        t.description,
        // A full schema where the SDK's type names a raw shape: the SDK passes it on to the MCP server as it is.
        looseSchema(schemas.get(t.name)!) as unknown as Record<string, never>,
        async (args: unknown, extra: unknown) => {
          const signal = (extra as { signal?: AbortSignal } | undefined)?.signal;
          const { result, images } = await gatedCall(toolbox, session, t, args, {
            callId: toolUseIdOf(extra) ?? freshCallId("claude-agent"),
            signal,
            approval: await takeApproval(t, args),
          }, options);
          return {
            content: textAndImages<
              { type: "text"; text: string } | { type: "image"; data: string; mimeType: string }
            >(
              toModelText(result),
              images,
              (text) => ({ type: "text", text }),
              (image) => ({ type: "image", data: image.data, mimeType: image.mediaType }),
            ),
            _meta: { [RESULT_META]: result },
            ...(result.status === "success" ? {} : { isError: true }),
          };
        },
        // Claude Code may run the calls of read-only tools together; the call gate orders the rest.
        { annotations: mcpAnnotations(t) },
      )
    ),
  });

  const canUseTool: CanUseTool = async (toolName, input, context) => {
    const t = toolName.startsWith(prefix) ? byName.get(toolName.slice(prefix.length)) : undefined;
    if (!t) {
      if (options.canUseTool) return await options.canUseTool(toolName, input, context);
      return { behavior: "deny", message: `${toolName} is not allowed in this session.` };
    }
    if (!(await needsApprovalOf(t, input))) return { behavior: "allow", updatedInput: input };
    let decision: PermissionResult;
    if (options.canUseTool) {
      // No decision is no approval.
      decision = (await options.canUseTool(toolName, input, context)) ?? { behavior: "deny", message: "" };
    } else {
      const answer = await session.confirmOutcome({
        title: "Approve tool call",
        message: `Allow ${t.name} with ${JSON.stringify(input)}?`,
        defaultChoice: true,
      }, context.signal);
      decision = answer.choice ? { behavior: "allow", updatedInput: input } : { behavior: "deny", message: "" };
    }
    if (decision.behavior === "allow") {
      const args = decision.updatedInput ?? input;
      const key = approvalKey(t.name, args);
      approved.set(key, [...(approved.get(key) ?? []), Date.now()]);
      return { ...decision, updatedInput: args };
    }
    // The model reads what toolfence says of a declined call.
    const refused = await toolbox.call(session, t.name, input, { approval: frameworkApproval(false) });
    return { ...decision, message: toModelText(refused) };
  };

  return {
    mcpServers: { [serverName]: server },
    canUseTool,
  };
}

// The types the names above reference, type-only, so this entry's docs are complete (written by deno task surface):
export type {
  AfterBatchHook,
  AfterCallHook,
  AgentModel,
  AnyTool,
  ArtifactInfo,
  ArtifactRef,
  ArtifactStore,
  AttemptId,
  AuthorizeOptions,
  BatchCall,
  BatchClosure,
  BatchOptions,
  BatchResult,
  BeforeCallDecision,
  BeforeCallEvent,
  BeforeCallHook,
  BoundedOutput,
  CallGate,
  CallOptions,
  CallPolicy,
  ChildSessionOptions,
  ChoiceOption,
  ChoiceOutcome,
  ChoiceRequest,
  ChoiceSource,
  ConfirmRequest,
  CopiedCounts,
  DeferredImage,
  DeferredImageMessage,
  Dialect,
  Dialects,
  Effect,
  EffectState,
  ErrorKind,
  Fence,
  FenceAnswer,
  FencePermission,
  FileChange,
  FileChangeEvent,
  FileDoor,
  FileSnapshot,
  FileState,
  FileTarget,
  HookSet,
  Host,
  ImageMediaType,
  JsonSchema,
  JsonSchemaToolSpec,
  LateResult,
  LateResults,
  LateResultsOptions,
  Launcher,
  LauncherRequest,
  ListOptions,
  ModelMessage,
  ModelRequest,
  ModelToolCall,
  ModelTurn,
  MovedPath,
  ObjectInputSchema,
  OnFailureHook,
  PathResolver,
  ProcessDoor,
  ProcessExit,
  ProcessRequest,
  ProgramRequest,
  ProgressEvent,
  Provenance,
  QuestionSubject,
  RequestCommon,
  ResourceLimitHit,
  RetryDisposition,
  RetryPolicy,
  RunningProcess,
  SandboxSetting,
  SessionBase,
  ShellRequest,
  StandardSchema,
  StandardSchemaResult,
  StartedProcess,
  SubagentToolsFactory,
  TargetOptions,
  Tool,
  ToolBox,
  ToolBoxOptions,
  ToolContext,
  ToolDefinition,
  ToolFailureEvent,
  ToolGroupFactory,
  ToolGroups,
  ToolMetadata,
  ToolNeeds,
  ToolPermission,
  ToolPlace,
  ToolResult,
  ToolStatus,
  WriteKind,
} from "@toolfence/core";
