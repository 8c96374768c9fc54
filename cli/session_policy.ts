/**
 * The policy files of a `serve` or `call` session: the layers read and
 * checked (a broken file or a failing example stops the command, never a
 * fallback to the defaults), their settings applied to the toolbox (tools
 * disabled, tools that need approval, the read-only tier) and the session
 * options.
 *
 * @module
 */
import { type AnyTool, toolGroup } from "@toolfence/core";
import { browserTools, BUILTIN_GROUPS } from "@toolfence/tools";
import {
  loadPolicy,
  type PolicyFileLocations,
  type PolicyRules,
  type PolicySettings,
  policySettings,
  type SandboxMode,
  unreadablePolicyFiles,
} from "@toolfence/policy";
import { addRuleToFile, AuditLog, PROJECT_POLICY_FILE, Redactor, userPolicyFile } from "@toolfence/policy";
import fs from "node:fs";
import process from "node:process";
import path from "node:path";
import { ToolBox } from "../toolbox.ts";

/** The policy of a session started from the command line. */
export interface SessionPolicy {
  /** The merged rules. */
  rules: PolicyRules;
  /** The merged settings. */
  settings: PolicySettings;
}

/**
 * Reads the layers for the workspace `workdir`: the managed file (or
 * `managed`), `--config`, the project's `toolfence.json`, the user file.
 *
 * Requires `--allow-read` for the files.
 *
 * @example
 * ```ts
 * import { sessionPolicy } from "./session_policy.ts";
 * const { settings } = await sessionPolicy(Deno.cwd(), { managed: "/nonexistent" });
 * console.log(settings.readOnly);
 * ```
 */
export async function sessionPolicy(workdir: string, files: PolicyFileLocations = {}): Promise<SessionPolicy> {
  const rules = await loadPolicy(workdir, files);
  for (const file of unreadablePolicyFiles()) {
    process.stderr.write(`toolfence: ${file} is not applied: the runtime flags do not allow reading it\n`);
  }
  return { rules, settings: policySettings(rules) };
}

/**
 * The tools of the built-in `groups`; the browser group's destinations are
 * judged by the files' `network.allow` (URLs that match run without asking;
 * others ask, as the browser tools do) and `network.deny` (refused, whatever
 * the allowlist says).
 *
 * @example
 * ```ts
 * import { groupTools } from "./session_policy.ts";
 * import { policySettings, PolicyRules } from "@toolfence/policy";
 * console.log(groupTools(["system"], policySettings(PolicyRules.empty("/w"))).map((t) => t.name));
 * ```
 */
export function groupTools(groups: readonly string[], settings: PolicySettings): AnyTool[] {
  const { allow, deny } = settings.network;
  return groups.flatMap((group) =>
    group === "browser" && (allow.length > 0 || deny.length > 0)
      ? browserTools({ allow, deny })
      : toolGroup(BUILTIN_GROUPS, group)
  );
}

/**
 * Whether a tool can write or run something: the read-only tier leaves only
 * the others. A tool counts as writing unless it says it is read-only and
 * declares no write, run or network permission.
 */
export function canWriteOrRun(tool: AnyTool): boolean {
  const permissions: readonly string[] = tool.permissions ?? [];
  return tool.readOnly !== true || permissions.some((p) => p === "write" || p === "run" || p === "net");
}

function namePattern(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*").replaceAll("?", ".");
  return new RegExp(`^${body}$`);
}

/**
 * The toolbox a session serves: the tools of `tools` that `settings` keep.
 * The read-only tier (`--read-only` or `readOnly` in a file) registers only
 * the tools that neither write nor run, so the others do not exist for the
 * client at all; disabled tools (names or fnmatch patterns) are not
 * registered either; tools that need approval get `needsApproval`; tools
 * that run programs get `sandbox.timeoutSeconds` as their deadline; the
 * toolbox's output cap is `sandbox.maxOutputChars`.
 *
 * @example
 * ```ts
 * import { applyToolSettings } from "./session_policy.ts";
 * import { policySettings, PolicyRules } from "@toolfence/policy";
 * import { toolGroup } from "@toolfence/core";
 * import { BUILTIN_GROUPS } from "@toolfence/tools";
 * const settings = policySettings(PolicyRules.empty("/w"));
 * const box = applyToolSettings(toolGroup(BUILTIN_GROUPS, "fs"), settings, true);
 * console.log(box.list().map((tool) => tool.name));
 * ```
 */
export function applyToolSettings(tools: readonly AnyTool[], settings: PolicySettings, readOnly = false): ToolBox {
  const disabled = settings.disabledTools.map(namePattern);
  const approve = settings.approveTools.map(namePattern);
  const box = new ToolBox(settings.maxOutputChars ? { maxOutputChars: settings.maxOutputChars } : {});
  const limitMs = settings.timeoutSeconds === undefined ? undefined : settings.timeoutSeconds * 1000;
  for (const tool of tools) {
    if ((readOnly || settings.readOnly) && canWriteOrRun(tool)) continue;
    if (disabled.some((pattern) => pattern.test(tool.name))) continue;
    const changes: PropertyDescriptorMap = {};
    if (approve.some((pattern) => pattern.test(tool.name))) changes.needsApproval = { value: true, enumerable: true };
    // A tool that runs programs gets the files' time limit as its deadline, unless its own is shorter.
    const runs = (tool.permissions ?? []).includes("run");
    if (limitMs !== undefined && runs && !(tool.timeoutMs !== undefined && tool.timeoutMs <= limitMs)) {
      changes.timeoutMs = { value: limitMs, enumerable: true };
    }
    // A tool object is shared; these are properties of this toolbox's view of it.
    box.register(Object.keys(changes).length > 0 ? Object.create(tool, changes) : tool);
  }
  return box;
}

/**
 * The audit log of a session: `--audit FILE`, else the files' `audit.file`;
 * hooked into the toolbox, redacting the start environment's values, token
 * shapes and the files' `audit.redact` names. Undefined when neither names a file.
 *
 * Requires `--allow-write` for the log's folder.
 */
export function auditFor(
  box: ToolBox,
  flag: string | undefined,
  settings: PolicySettings,
  tenantOf?: (session: object) => string | undefined,
): AuditLog | undefined {
  const file = auditFileOf(flag, settings);
  if (file === undefined) return undefined;
  const audit = new AuditLog({
    file,
    ...(tenantOf ? { tenantOf } : {}),
    ...(settings.audit.maxBytes ? { maxBytes: settings.audit.maxBytes } : {}),
    redactor: new Redactor({ names: settings.audit.redact }),
  });
  return audit.attach(box);
}

/** The audit log's file, absolute: `--audit FILE`, else the files' `audit.file`; undefined when neither names one. */
export function auditFileOf(flag: string | undefined, settings: PolicySettings): string | undefined {
  const file = flag ?? settings.audit.file;
  return file === undefined ? undefined : path.resolve(file);
}

/** The tenant of a session whose host serves one tenant (the web console's host), for the audit. */
export function tenantOfHost(session: object): string | undefined {
  const tenant = (session as { host?: { tenant?: unknown } }).host?.tenant;
  return typeof tenant === "string" ? tenant : undefined;
}

/**
 * Where a person's "allow from now on" of a command goes, as the files'
 * `answers.save` says: an allow rule added to the project's `toolfence.json`
 * or to the user file, keeping its comments. Undefined for `never` (the default).
 *
 * Requires `--allow-read` and `--allow-write` for the file.
 */
export function saveRuleFor(
  workdir: string,
  settings: PolicySettings,
): { where: string; save(pattern: string): Promise<void> } | undefined {
  const user = settings.save === "user" ? userPolicyFile() : undefined;
  // The project's file lies in the workspace, where a command may have made it a link: it is edited as it is there,
  // never through a link (the edit refuses one). The user's own file may be a link of theirs (a dotfile manager's).
  const file = settings.save === "project"
    ? path.join(workdir, PROJECT_POLICY_FILE)
    : user !== undefined
    ? userFileResolved(user)
    : undefined;
  if (file === undefined) return undefined;
  return {
    where: file,
    save: async (pattern) => void await addRuleToFile(file, { section: "commands", list: "allow" }, pattern),
  };
}

/** The sandbox mode: a higher layer of the files wins over the flag only when it is stricter. */
export function sandboxFor(flag: SandboxMode | undefined, settings: PolicySettings): SandboxMode | undefined {
  const order: SandboxMode[] = ["off", "auto", "required"];
  if (settings.sandbox === undefined) return flag;
  if (flag === undefined) return settings.sandbox;
  return order.indexOf(flag) >= order.indexOf(settings.sandbox) ? flag : settings.sandbox;
}

/**
 * The user's policy file `file` with a link of theirs at its name followed (a
 * dotfile manager's): the edit never follows one, and would refuse it.
 */
export function userFileResolved(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}
