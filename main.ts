/**
 * The `toolfence` command line.
 *
 * ```
 * toolfence serve   [--workspace DIR] [--groups LIST] [--auto-confirm] [--sandbox MODE] [--temp-dir DIR] [--scratch]
 * toolfence call    NAME [JSON] [--workspace DIR] [--groups LIST] [--auto-confirm] [--sandbox MODE] [--temp-dir DIR]
 *                   [--history DIR [--checkpoint] [--restore ID]]
 * toolfence tools   [--dialect D] [--groups LIST]
 * toolfence policy  check|explain|list|add|remove|test|init|schema ... (see cli/policy.ts)
 * toolfence audit   [FILE] [--follow] [--tool T] [--status S] ...
 * toolfence grants  --store ADDRESS --tenant NAME [--revoke SUBJECT [--kind KIND]]
 * toolfence prune   --store ADDRESS --older-than AGE
 * toolfence --version
 * toolfence flags   [--workspace DIR] [--groups LIST] [--temp-dir DIR]
 * ```
 *
 * Bad usage prints the reason and exits with code 2.
 *
 * Requires, for `serve` and `call`, what the chosen tools need: `toolfence
 * flags` prints the narrowest `deno run` flags for a workspace and groups.
 *
 * @example
 * ```sh
 * deno run $(deno run main.ts flags --workspace .) main.ts serve --workspace .
 * ```
 *
 * @module
 */

import process from "node:process";
import { realpathSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { parseArgs, type ParseArgsConfig } from "node:util";
import {
  type AnyTool,
  dialectByName,
  jsonSchemaDialect,
  toModelText,
  toolGroup,
  type ToolNeeds,
} from "@toolfence/core";
import { AuditLog, Session } from "@toolfence/policy";
import { ToolBox } from "./toolbox.ts";
import { BUILTIN_GROUPS, publishTool } from "@toolfence/tools";
import { PROVIDER_DIALECTS } from "@toolfence/adapters";
import { createScratch, Workspace } from "@toolfence/policy";
import { terminalHost } from "@toolfence/policy";
import { denoFlagsForNeeds, MANAGED_POLICY_FILE, userPolicyFile } from "@toolfence/policy";
import type { SandboxMode } from "@toolfence/policy";
import { PolicyExampleError, PolicyFileError } from "@toolfence/policy";
import { POLICY_HELP, policyCommand } from "./cli/policy.ts";
import { CliUsageError } from "./cli/usage.ts";
import { loadMcpModule } from "./cli/mcp_module.ts";
import { VERSION } from "./cli/version.ts";
import {
  applyToolSettings,
  auditFileOf,
  auditFor,
  groupTools,
  sandboxFor,
  saveRuleFor,
  sessionPolicy,
  tenantOfHost,
} from "./cli/session_policy.ts";
import { AUDIT_HELP, auditCommand } from "./cli/audit.ts";
import { GRANTS_HELP, grantsCommand } from "./cli/grants.ts";
import { PRUNE_HELP, pruneCommand } from "./cli/prune.ts";

// The options of `serve --http`, parsed here so that no other command loads the MCP SDK.
const HTTP_SERVE_ARGS = {
  http: { type: "string" },
  stateless: { type: "boolean" },
  "token-file": { type: "string" },
  "oauth-issuer": { type: "string" },
  "oauth-jwks": { type: "string" },
  "resource-url": { type: "string" },
  "tenant-root": { type: "string" },
  "allowed-host": { type: "string", multiple: true },
  "allowed-origin": { type: "string", multiple: true },
  "no-auth": { type: "boolean" },
  "allow-unsandboxed-tenants": { type: "boolean" },
  "max-concurrent-calls": { type: "string" },
  "calls-per-minute": { type: "string" },
  "idle-minutes": { type: "string" },
  "max-connections": { type: "string" },
  "max-connections-per-address": { type: "string" },
  "max-connections-per-tenant": { type: "string" },
  "headers-timeout-seconds": { type: "string" },
  "body-timeout-seconds": { type: "string" },
  console: { type: "string" },
  "console-token-file": { type: "string" },
  store: { type: "string" },
} as const;

const HTTP_SERVE_HELP = `HTTP options (serve over MCP Streamable HTTP instead of stdio):
  --http HOST:PORT         listen there (HOST defaults to 127.0.0.1; PORT 0 picks one)
  --token-file FILE        bearer tokens: {"tokens":[{"sha256":HEX,"tenant":NAME,"scopes":[...],"workspace":DIR}]}
                           (read again when it changes or on SIGHUP)
  --oauth-issuer URL       accept JWT access tokens of this OAuth authorization server
  --oauth-jwks URL         its JWKS (default: URL/.well-known/jwks.json)
  --resource-url URL       this endpoint's public URL, the audience tokens must name
  --tenant-root DIR        one workspace folder per tenant, DIR/<tenant> (default: --workspace for all)
  --stateless              no sessions: a fresh server per request (no elicitation; no job, browser or artifact tools)
  --allowed-host NAME      also answer to this Host (repeatable; e.g. a reverse proxy's name)
  --allowed-origin ORIGIN  also allow this Origin (repeatable)
  --no-auth                serve without authentication (loopback addresses only)
  --allow-unsandboxed-tenants
                           run the commands of several tenants without a working OS sandbox, each able to
                           read and change the others' files (default: such a server refuses them)
  --max-concurrent-calls N calls one session may have in flight (default 16)
  --calls-per-minute N     calls one token may start a minute (default 600)
  --idle-minutes N         end sessions idle this long, killing their jobs (default 30)
  --max-connections N      connections held at once (default 1024); at the cap a new one closes the oldest
                           connection still waiting for a request head
  --max-connections-per-address N
                           connections one remote address (IPv6: its /64) may hold before a tenant's
                           request claims them (default 256)
  --max-connections-per-tenant N
                           connections one tenant may hold, those that carried its requests (default 256)
  --headers-timeout-seconds N
                           time a connection has to send a request's line and headers (default 10)
  --body-timeout-seconds N time a request has to send its body (default 60)
  --console HOST:PORT      also serve the web console there: a person answers the questions and reads the
                           audit (docs/console.md); questions wait there and in the client's elicitation
  --console-token-file F   the console's tokens, entries with "scopes":["console"] alone (default: --token-file)
  --store ADDRESS          keep sessions, calls and the audit in a store shared by replicas:
                           sqlite:PATH or postgres://USER@HOST:PORT/DB (see docs/fleet.md)
Scopes: tools:read (tools that only read), tools:write (tools that change files), tools:commands (run programs).`;

/** Bad usage: the message says what was wrong; the exit code is 2. */
class UsageProblem extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
  }
}

const SANDBOX_MODES: readonly SandboxMode[] = ["auto", "required", "off"];

const HELP: Record<string, string> = {
  main: `toolfence: permission-aware tools for LLM agents

Usage: toolfence <command> [options]

Commands:
  serve           serve the tools over MCP on stdin/stdout
  call NAME JSON  run one tool call and print its ToolResult as JSON
  tools           print the tools' schemas in a provider's dialect
  policy          check, explain, list, add, remove, test, init (the policy files)
  audit           read, follow and filter an audit log
  grants          list and revoke the grants a fleet's store keeps for a tenant
  prune           remove from a fleet's store the sessions that are over, with their calls and events
  flags           print the narrowest deno run flags for a workspace and groups

Run 'toolfence <command> --help' for a command's options.`,
  serve: `Usage: toolfence serve [options]

Serves the tools over MCP on stdin/stdout. Permission questions go to the
client's user through MCP elicitation when the client supports it; otherwise
anything that would ask is refused (or answered with its default under
--auto-confirm).

Options:
  --workspace DIR   the folder the tools work in (default: the current folder)
  --groups LIST     comma-separated tool groups (default: all)
  --auto-confirm    answer every question a rule may answer with its default
  --sandbox MODE    auto | required | off: bubblewrap for shell commands (default: auto)
  --temp-dir DIR    where the session temp dir is made (default: the system temp folder)
  --config FILE     a policy file, the command-line layer (see 'toolfence policy --help')
  --managed-config FILE
                    the managed layer (default /etc/toolfence/config.json)
  --read-only       serve only the tools that neither write nor run
  --audit FILE      write the audit log (JSON lines) to FILE, rotated by size
  --capabilities LIST
                    comma-separated model capabilities (default: vision, since MCP
                    clients take image content; 'none' for a client that drops
                    images: browser_screenshot and request_image are then not offered)
  --max-message-mib N
                    the largest message read, in MiB (default: 64); a larger one
                    is answered with a JSON-RPC error and the server goes on
  --scratch         work in a scratch copy of the workspace (in the temp dir) and
                    offer the publish tool, which applies the changes to the
                    workspace only after showing the diff; the digest is logged;
                    the sandbox is then required unless --sandbox says otherwise
  --publish-paths LIST
                    with --scratch: comma-separated paths publish may apply (default: all)
  --expect-digest HEX
                    with --scratch: the input digest approved; publish refuses another
  -h, --help        show this help

The server stops when stdin ends (calls still running get 10 seconds to
answer) or on SIGTERM, SIGINT or SIGHUP (calls in flight are cancelled and
answer as such); either way its background jobs are killed and its temp dir
removed.

${HTTP_SERVE_HELP}`,
  call: `Usage: toolfence call NAME [JSON] [options]
       toolfence call --history DIR --restore ID

Runs one call of the tool NAME with the JSON arguments (default {}) and prints
the ToolResult as JSON. Questions are asked on the terminal (stdin/stderr).
Exits 0 on success and 1 when the call did not succeed.

With --history, the file changes of the call are kept in DIR (a folder outside
the workspace) with the content they replaced; --checkpoint takes a checkpoint
first and prints its id on stderr ("toolfence: checkpoint cp-..."); --restore ID
first restores the workspace to that checkpoint (every file changed since back
to its exact bytes and mode, or nothing when a file was changed since by
something else) and prints what it restored; without NAME it only restores.

Options:
  --workspace DIR   the folder the tools work in (default: the current folder)
  --groups LIST     comma-separated tool groups (default: all)
  --auto-confirm    answer every question a rule may answer with its default
  --sandbox MODE    auto | required | off (default: auto)
  --temp-dir DIR    where the session temp dir is made (default: the system temp folder)
  --config FILE     a policy file, the command-line layer
  --managed-config FILE
                    the managed layer (default /etc/toolfence/config.json)
  --read-only       only the tools that neither write nor run
  --audit FILE      write the audit log (JSON lines) to FILE
  --history DIR     keep the file history (checkpoints, before-images) in DIR
  --checkpoint      take a checkpoint before the call (needs --history)
  --restore ID      restore the checkpoint ID first (needs --history)
  -h, --help        show this help`,
  tools: `Usage: toolfence tools [options]

Prints the tools array in a provider's exact wire format.

Options:
  --dialect D       json-schema | openai-chat | openai-responses | anthropic | gemini | mcp (default: json-schema)
  --groups LIST     comma-separated tool groups (default: all)
  -h, --help        show this help`,
  policy: POLICY_HELP,
  audit: AUDIT_HELP,
  grants: GRANTS_HELP,
  prune: PRUNE_HELP,
  flags: `Usage: toolfence flags [options]

Prints the 'deno run' flags under which every tool of the chosen groups works
on the workspace: exactly what the tools declare they need and use (never -A),
and --no-prompt, on one line.

Options:
  --workspace DIR   the folder the tools work in (default: the current folder)
  --groups LIST     comma-separated tool groups (default: all)
  --temp-dir DIR    where the session temp dir is made (default: the system temp folder)
  -h, --help        show this help`,
};

const COMMON = {
  help: { type: "boolean", short: "h" },
  workspace: { type: "string" },
  groups: { type: "string" },
  "temp-dir": { type: "string" },
} as const satisfies ParseArgsConfig["options"];

const SESSION = {
  ...COMMON,
  "auto-confirm": { type: "boolean" },
  sandbox: { type: "string" },
  config: { type: "string" },
  "managed-config": { type: "string" },
  "read-only": { type: "boolean" },
  audit: { type: "string" },
} as const satisfies ParseArgsConfig["options"];

// The file history of `call`: checkpoints kept on disk, restored by a later call.
const HISTORY = {
  history: { type: "string" },
  checkpoint: { type: "boolean" },
  restore: { type: "string" },
} as const satisfies ParseArgsConfig["options"];

function parse<O extends NonNullable<ParseArgsConfig["options"]>>(command: string, args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageProblem((error as Error).message, command);
  }
}

function selectedGroups(list: string | undefined, command: string): string[] {
  const known = Object.keys(BUILTIN_GROUPS);
  if (list === undefined) return known;
  const groups = list.split(",").map((g) => g.trim()).filter(Boolean);
  if (groups.length === 0) throw new UsageProblem("--groups needs at least one group", command);
  const unknown = groups.filter((g) => !known.includes(g));
  if (unknown.length > 0) {
    throw new UsageProblem(
      `Unknown tool group${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; known groups: ${
        known.join(", ") || "none"
      }`,
      command,
    );
  }
  return groups;
}

function workspaceDir(dir: string | undefined, command: string): string {
  const path = dir ?? process.cwd();
  try {
    return realpathSync(path);
  } catch (error) {
    throw new UsageProblem(`The workspace ${path} cannot be used: ${(error as Error).message}`, command);
  }
}

function sandboxMode(mode: string | undefined): SandboxMode | undefined {
  if (mode === undefined) return undefined;
  if (!SANDBOX_MODES.includes(mode as SandboxMode)) {
    throw new UsageProblem(`--sandbox must be one of ${SANDBOX_MODES.join(", ")}, not ${JSON.stringify(mode)}`);
  }
  return mode as SandboxMode;
}

function policyFiles(values: { config?: string; "managed-config"?: string }) {
  return {
    ...(values.config === undefined ? {} : { cli: values.config }),
    ...(values["managed-config"] === undefined ? {} : { managed: values["managed-config"] }),
  };
}

function sessionToolbox(
  list: string | undefined,
  command: string,
  settings: Awaited<ReturnType<typeof sessionPolicy>>["settings"],
  readOnly: boolean | undefined,
): ToolBox {
  const groups = selectedGroups(list ?? settings.groups?.join(","), command);
  return applyToolSettings(groupTools(groups, settings), settings, readOnly ?? false);
}

function toolboxFor(groups: string[]): ToolBox {
  return new ToolBox().withDefaults(...groups);
}

function noExtraPositionals(command: string, positionals: string[], expected: number): void {
  if (positionals.length > expected) {
    throw new UsageProblem(`Unexpected argument ${JSON.stringify(positionals[expected])}`, command);
  }
}

function maxMessageBytes(mib: string | undefined): number | undefined {
  if (mib === undefined) return undefined;
  const n = Number(mib);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(mib) || !(n >= 1) || n > 4096) {
    throw new UsageProblem(`--max-message-mib must be a number from 1 to 4096, not ${JSON.stringify(mib)}`, "serve");
  }
  return Math.floor(n * 1024 * 1024);
}

// `--capabilities LIST` of serve: undefined (the MCP default, vision) when not given; `none` is no capability.
function capabilitiesOf(list: string | undefined): string[] | undefined {
  if (list === undefined) return undefined;
  const names = list.split(",").map((name) => name.trim()).filter(Boolean);
  if (names.length === 1 && names[0] === "none") return [];
  const odd = names.find((name) => !/^[a-z][a-z0-9_-]*$/.test(name));
  if (names.length === 0 || odd !== undefined) {
    throw new UsageProblem(
      `--capabilities takes comma-separated names (e.g. vision) or none, not ${JSON.stringify(list)}`,
      "serve",
    );
  }
  return names;
}

async function serve(args: string[]): Promise<number> {
  const { values, positionals } = parse("serve", args, {
    ...SESSION,
    "max-message-mib": { type: "string" },
    capabilities: { type: "string" },
    ...HTTP_SERVE_ARGS,
    scratch: { type: "boolean" },
    "publish-paths": { type: "string" },
    "expect-digest": { type: "string" },
  });
  if (values.help) return help("serve");
  noExtraPositionals("serve", positionals, 0);
  const workdir = workspaceDir(values.workspace, "serve");
  const files = await sessionPolicy(workdir, policyFiles(values));
  const box = sessionToolbox(values.groups, "serve", files.settings, values["read-only"]);
  // With the console, each record names its tenant (the console shows each tenant its own).
  const audit = auditFor(box, values.audit, files.settings, values.console === undefined ? undefined : tenantOfHost);
  const auditFile = auditFileOf(values.audit, files.settings);
  // In a scratch copy, commands must not reach the real workspace: the sandbox is required unless chosen otherwise.
  const sandbox = sandboxFor(sandboxMode(values.sandbox) ?? (values.scratch ? "required" : undefined), files.settings);
  const maxBytes = maxMessageBytes(values["max-message-mib"]);
  const capabilities = capabilitiesOf(values.capabilities);
  if (values.http !== undefined && values.scratch) throw new UsageProblem("--scratch works with stdio only", "serve");
  if (values.console !== undefined && values.http === undefined) {
    throw new UsageProblem("--console works with --http (the console serves the HTTP sessions' questions)", "serve");
  }
  if (values.http !== undefined) {
    const { runHttpServe, HttpUsageError } = await loadMcpModule();
    try {
      return await runHttpServe(box, {
        http: values.http,
        workspace: workdir,
        tempDir: values["temp-dir"],
        autoConfirm: values["auto-confirm"] ?? false,
        sandbox,
        maxBodyBytes: maxBytes,
        stateless: values.stateless,
        tokenFile: values["token-file"],
        oauthIssuer: values["oauth-issuer"],
        oauthJwks: values["oauth-jwks"],
        resourceUrl: values["resource-url"],
        tenantRoot: values["tenant-root"],
        allowedHosts: values["allowed-host"],
        allowedOrigins: values["allowed-origin"],
        noAuth: values["no-auth"],
        allowUnsandboxedTenants: values["allow-unsandboxed-tenants"],
        maxConcurrentCalls: values["max-concurrent-calls"],
        callsPerMinute: values["calls-per-minute"],
        idleMinutes: values["idle-minutes"],
        maxConnections: values["max-connections"],
        maxConnectionsPerAddress: values["max-connections-per-address"],
        maxConnectionsPerTenant: values["max-connections-per-tenant"],
        headersTimeoutSeconds: values["headers-timeout-seconds"],
        bodyTimeoutSeconds: values["body-timeout-seconds"],
        console: values.console,
        consoleTokenFile: values["console-token-file"],
        auditFile,
        store: values.store ?? files.settings.store,
        policy: {
          ...(capabilities ? { capabilities } : {}),
          rules: files.rules,
          elicitationAnswers: files.settings.elicitation,
          ...(saveRuleFor(workdir, files.settings) ? { saveRule: saveRuleFor(workdir, files.settings) } : {}),
          ...(audit ? { onDecision: audit.decision.bind(audit) } : {}),
        },
      });
    } catch (error) {
      if (error instanceof HttpUsageError) throw new UsageProblem(error.message, "serve");
      throw error;
    }
  }
  // Loaded here so that no other command loads the MCP SDK.
  const { serveStdio } = await loadMcpModule();
  const workspace = new Workspace(workdir, { tempParent: values["temp-dir"] });
  // The sandbox state, once at start: stderr is the log of a stdio server.
  const { sandboxState } = await import("@toolfence/policy");
  console.error(`toolfence: ${(await sandboxState(sandbox ?? "auto")).summary}`);
  // A fault in one call must not take the server (and every other call) down: it is logged, and serving goes on.
  const report = (error: unknown) => process.stderr.write(`toolfence: ${(error as Error)?.stack ?? String(error)}\n`);
  process.on("uncaughtException", report);
  process.on("unhandledRejection", report);
  // The server works in its workspace: under narrow --allow-read flags that do
  // not cover where it was started, confined file writes could not pin their
  // folders otherwise (see policy/confined_fs.ts).
  process.chdir(workspace.workdir);
  // --scratch: the agent works in a copy; only the publish tool brings approved changes back.
  const digest = values["expect-digest"]?.toLowerCase();
  if (!values.scratch && (digest !== undefined || values["publish-paths"] !== undefined)) {
    throw new UsageProblem("--publish-paths and --expect-digest go with --scratch", "serve");
  }
  if (digest !== undefined && !/^[0-9a-f]{64}$/.test(digest)) {
    throw new UsageProblem(`--expect-digest must be 64 hex digits, not ${JSON.stringify(digest)}`, "serve");
  }
  // The audit log is denied to the agent it records: a command may neither read nor rewrite it.
  const rules = auditFile === undefined ? files.rules : files.rules.denyingFiles(AuditLog.filesOf(auditFile));
  // The copy is made under the policy's rules: another name (a hard link) of a hidden file is left out of it (its
  // copy would be a file no rule matches), and the publication refuses changes at denied and read-only paths.
  const scratch = values.scratch ? await createScratch(workspace, { session: { rules } }) : undefined;
  if (scratch) {
    const paths = values["publish-paths"]?.split(",").map((p) => p.trim()).filter(Boolean);
    // The publish tool writes the real workspace: the read-only tier and the files' disabled tools apply to it too.
    const built = publishTool(scratch, { digest: digest ?? scratch.digest, paths });
    const publish = applyToolSettings([built], files.settings, values["read-only"] ?? false).get(built.name);
    if (publish) box.register(publish);
    console.error(`toolfence: scratch copy ${scratch.root}, input digest ${scratch.digest}`);
  }
  try {
    const running = await serveStdio(box, {
      workspace: scratch?.workspace ?? workspace,
      autoConfirm: values["auto-confirm"] ?? false,
      sandbox,
      maxMessageBytes: maxBytes,
      ...(capabilities ? { capabilities } : {}),
      // In a scratch copy, its session's rules: absolute globs that name places in the workspace name them in the copy.
      rules: scratch?.session.policy.rules ?? rules,
      elicitationAnswers: files.settings.elicitation,
      ...(saveRuleFor(workdir, files.settings) ? { saveRule: saveRuleFor(workdir, files.settings) } : {}),
      ...(audit ? { onDecision: audit.decision.bind(audit) } : {}),
    });
    // The listeners stay until the process exits, so that a second signal during the cleanup below cannot end
    // the process before its temp dir is removed.
    const stop = (signal: string) => void running.shutdown(`the server received ${signal}`);
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, stop);
    await running.closed;
  } finally {
    audit?.close();
    await scratch?.dispose();
    await workspace.dispose();
  }
  return 0;
}

async function call(args: string[]): Promise<number> {
  const { values, positionals } = parse("call", args, { ...SESSION, ...HISTORY });
  if (values.help) return help("call");
  const [name, json] = positionals;
  if (name === undefined && values.restore === undefined) {
    throw new UsageProblem("call needs the name of a tool", "call");
  }
  if ((values.checkpoint || values.restore !== undefined) && values.history === undefined) {
    throw new UsageProblem("--checkpoint and --restore need --history DIR", "call");
  }
  noExtraPositionals("call", positionals, 2);
  const workdir = workspaceDir(values.workspace, "call");
  const files = await sessionPolicy(workdir, policyFiles(values));
  const box = sessionToolbox(values.groups, "call", files.settings, values["read-only"]);
  const audit = auditFor(box, values.audit, files.settings);
  const workspace = new Workspace(workdir, { tempParent: values["temp-dir"] });
  // As for serve: confined file writes pin their folders from here.
  process.chdir(workspace.workdir);
  let session: Session;
  try {
    session = new Session({
      workspace,
      host: terminalHost(),
      autoConfirm: values["auto-confirm"] ?? false,
      sandbox: sandboxFor(sandboxMode(values.sandbox), files.settings),
      ...(values.history !== undefined ? { history: { dir: values.history } } : {}),
      rules: files.rules,
      ...(saveRuleFor(workdir, files.settings) ? { saveRule: saveRuleFor(workdir, files.settings) } : {}),
      ...(audit ? { onDecision: audit.decision.bind(audit) } : {}),
    });
  } catch (error) {
    await workspace.dispose();
    throw new UsageProblem((error as Error).message, "call");
  }
  try {
    if (values.restore !== undefined) {
      try {
        const restored = await session.restoreCheckpoint(values.restore);
        process.stderr.write(`toolfence: restored checkpoint ${values.restore}\n`);
        if (name === undefined) process.stdout.write(JSON.stringify(restored, null, 2) + "\n");
      } catch (error) {
        process.stderr.write(`toolfence: ${(error as Error).message}\n`);
        return 1;
      }
    }
    if (name === undefined) return 0;
    if (values.checkpoint) process.stderr.write(`toolfence: checkpoint ${session.createCheckpoint(name).id}\n`);
    const result = await box.call(session, name, json ?? "{}", { callId: `cli-${randomUUID()}` });
    process.stdout.write(JSON.stringify(result, null, 2) + "\n");
    if (result.status !== "success") process.stderr.write(toModelText(result) + "\n");
    return result.status === "success" ? 0 : 1;
  } finally {
    await session.close();
    audit?.close();
    await workspace.dispose();
  }
}

function tools(args: string[]): number {
  const { values, positionals } = parse("tools", args, { ...COMMON, dialect: { type: "string" } });
  if (values.help) return help("tools");
  noExtraPositionals("tools", positionals, 0);
  const dialect = values.dialect ?? "json-schema";
  try {
    dialectByName({ [jsonSchemaDialect.name]: jsonSchemaDialect, ...PROVIDER_DIALECTS }, dialect);
  } catch (error) {
    throw new UsageProblem((error as Error).message, "tools");
  }
  const box = toolboxFor(selectedGroups(values.groups, "tools"));
  process.stdout.write(JSON.stringify(box.schemas(dialect), null, 2) + "\n");
  return 0;
}

function policy(args: string[]): Promise<number> {
  return policyCommand(args);
}

/**
 * Everything the tools need, what they cannot run without and what they use
 * when granted: every built-in tool declares its needs (a test holds them to it).
 */
function needsOf(list: readonly AnyTool[]): ToolNeeds[] {
  return list.flatMap((t) => [t.needs ?? {}, t.optionalNeeds ?? {}]);
}

function flags(args: string[]): number {
  const { values, positionals } = parse("flags", args, COMMON);
  if (values.help) return help("flags");
  noExtraPositionals("flags", positionals, 0);
  const groups = selectedGroups(values.groups, "flags");
  const list = groups.flatMap((g) => toolGroup(BUILTIN_GROUPS, g));
  // The server reads the managed policy file (and will not start when it may not look), and the user's file,
  // found through XDG_CONFIG_HOME or HOME: without both grants it would be skipped.
  const user = userPolicyFile();
  const policyFiles = { read: [MANAGED_POLICY_FILE, ...(user ? [user] : [])], env: ["XDG_CONFIG_HOME", "HOME"] };
  const needed = denoFlagsForNeeds([...needsOf(list), policyFiles], {
    workspace: workspaceDir(values.workspace, "flags"),
    tempParent: values["temp-dir"],
  });
  // Anything the fence did not foresee then fails at once instead of waiting for an answer on the terminal.
  process.stdout.write(["--no-prompt", ...needed].join(" ") + "\n");
  return 0;
}

function help(command: string): number {
  process.stdout.write(HELP[command] + "\n");
  return 0;
}

const COMMANDS: Record<string, (args: string[]) => number | Promise<number>> = {
  serve,
  call,
  tools,
  policy,
  audit: auditCommand,
  grants: grantsCommand,
  prune: pruneCommand,
  flags,
};

/**
 * Runs the command line with `args` (without the program name) and returns the
 * exit code: 0 success, 1 a failed call or a command that would ask, 2 bad usage.
 *
 * @example
 * ```ts
 * import { main } from "./main.ts";
 * Deno.exit(await main(["tools", "--dialect", "anthropic"]));
 * ```
 */
export async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  try {
    if (command === "--version" || command === "-V" || command === "version") {
      process.stdout.write(`toolfence ${VERSION}\n`);
      return 0;
    }
    if (command === undefined || command === "help" || command === "--help" || command === "-h") {
      if (command === "help" && rest[0] && HELP[rest[0]]) return help(rest[0]);
      return help("main");
    }
    const run = COMMANDS[command];
    if (!run) throw new UsageProblem(`Unknown command ${JSON.stringify(command)}`);
    return await run(rest);
  } catch (error) {
    if (error instanceof PolicyFileError || error instanceof PolicyExampleError) {
      process.stderr.write(`toolfence: the policy cannot be used:\n${error.message}\n`);
      return 1;
    }
    if (!(error instanceof UsageProblem || error instanceof CliUsageError)) throw error;
    process.stderr.write(
      `toolfence: ${error.message}\nRun 'toolfence ${error.command ? `${error.command} ` : ""}--help' for usage.\n`,
    );
    return 2;
  }
}

if (import.meta.main) {
  let code: number;
  try {
    code = await main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`toolfence: ${(error as Error).message}\n`);
    code = 1;
  }
  // Open handles (stdin of a terminal host, a server's transport) must not keep the process alive.
  process.exit(code);
}
