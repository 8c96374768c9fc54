/**
 * The settings of the policy files (sandbox, timeouts, output caps, tools,
 * network, who may answer, the audit log), merged over the layers: a value
 * of a higher layer wins; lists of things refused (disabled tools, tools
 * that need approval, denied hosts, names to redact) add up; the read-only
 * tier holds when any layer asks for it.
 *
 * @module
 */
import path from "node:path";
import type { PolicyRules } from "./rules.ts";
import type { ResourceLimitsInput } from "./schema.ts";

/** What an answer that comes through MCP elicitation (the client's, not provably a person's) may do. */
export type ElicitationAnswers = "refuse" | "once" | "grant";

/** The merged settings of a policy. */
export interface PolicySettings {
  /** The sandbox mode, when a layer sets it. */
  sandbox?: "auto" | "required" | "off";
  /** The longest a shell command may run, in seconds. */
  timeoutSeconds?: number;
  /** The output cap of a call's result, in characters. */
  maxOutputChars?: number;
  /** The resource limits the layers set, key by key (see `policy/limits.ts` for the defaults). */
  limits: ResourceLimitsInput;
  /** Whether every tool that can write or run is unregistered. */
  readOnly: boolean;
  /** The tool groups to serve, when a layer names them. */
  groups?: string[];
  /** Tool names or patterns that are unregistered. */
  disabledTools: string[];
  /** Tool names or patterns that always need a person's approval. */
  approveTools: string[];
  /** Network destinations. */
  network: { allow: string[]; deny: string[] };
  /**
   * The network of sandboxed commands: `proxy` (the egress proxy, the only
   * way out of their network namespace) when a layer says so or, unless one
   * says `none`, when `network.allow` names a host; else `none`.
   */
  sandboxNetwork: "none" | "proxy";
  /** What the client's elicitation answers may do (default `once`). */
  elicitation: ElicitationAnswers;
  /** Where a person's "allow and grant" of a command is saved. */
  save: "never" | "project" | "user";
  /** The audit log. */
  audit: { file?: string; maxBytes?: number; redact: string[] };
  /** The store `serve --http` replicas share, from the highest layer that names one. */
  store?: string;
  /**
   * Host folders the OS sandbox shows read-only besides the system folders,
   * the workspace and the temp dir: every layer's `sandbox.read` and
   * `paths.roots` (absolute paths only; a root's `write` access is not served
   * inside the sandbox, where it is read-only too).
   */
  sandboxRead: string[];
}

const LIMIT_KEYS = [
  "memory",
  "cpuSeconds",
  "fileSize",
  "processes",
  "openFiles",
  "tmpSize",
] as const satisfies readonly (keyof ResourceLimitsInput)[];

/**
 * The settings of `rules`' layers, merged.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { policySettings, PolicyRules } from "@toolfence/policy";
 * const rules = PolicyRules.fromLayers([
 *   { name: "managed", config: { sandbox: { mode: "required" } } },
 *   { name: "project", config: { sandbox: { mode: "off" }, tools: { disable: ["bash"] } } },
 * ], "/w");
 * console.log(policySettings(rules).sandbox); // "required"
 * ```
 */
export function policySettings(rules: PolicyRules): PolicySettings {
  const top = rules.layers; // highest first
  const first = <T>(pick: (layer: typeof top[number]) => T | undefined): T | undefined => {
    for (const layer of top) {
      const value = pick(layer);
      if (value !== undefined) return value;
    }
    return undefined;
  };
  // Disabled tools bottom-up: a layer's `enable` takes back what the layers below disabled.
  let disabled: string[] = [];
  for (const layer of [...top].reverse()) {
    const enable = layer.config.tools?.enable ?? [];
    disabled = disabled.filter((name) => !enable.includes(name));
    for (const name of layer.config.tools?.disable ?? []) if (!disabled.includes(name)) disabled.push(name);
  }
  const union = (pick: (layer: typeof top[number]) => string[] | undefined) => [
    ...new Set(top.flatMap((layer) => pick(layer) ?? [])),
  ];
  const auditLayer = top.find((layer) => layer.config.audit?.file !== undefined);
  const auditFile = auditLayer?.config.audit?.file;
  const sandbox = first((layer) => layer.config.sandbox?.mode);
  const timeoutSeconds = first((layer) => layer.config.sandbox?.timeoutSeconds);
  const maxOutputChars = first((layer) => layer.config.sandbox?.maxOutputChars);
  const groups = first((layer) => layer.config.tools?.groups);
  const limits: ResourceLimitsInput = {};
  for (const key of LIMIT_KEYS) {
    const value = first((layer) => layer.config.sandbox?.limits?.[key]);
    if (value !== undefined) Object.assign(limits, { [key]: value });
  }
  const maxBytes = first((layer) => layer.config.audit?.maxBytes);
  const allow = first((layer) => layer.config.network?.allow) ?? [];
  const store = first((layer) => layer.config.store);
  return {
    ...(store ? { store } : {}),
    ...(sandbox ? { sandbox } : {}),
    ...(timeoutSeconds ? { timeoutSeconds } : {}),
    ...(maxOutputChars ? { maxOutputChars } : {}),
    ...(groups ? { groups } : {}),
    limits,
    readOnly: top.some((layer) => layer.config.readOnly === true),
    disabledTools: disabled,
    approveTools: union((layer) => layer.config.tools?.approve),
    network: { allow, deny: union((layer) => layer.config.network?.deny) },
    sandboxNetwork: first((layer) => layer.config.sandbox?.network) ?? (allow.length > 0 ? "proxy" : "none"),
    elicitation: first((layer) => layer.config.answers?.elicitation) ?? "once",
    save: first((layer) => layer.config.answers?.save) ?? "never",
    audit: {
      ...(auditFile
        ? { file: auditLayer?.file ? path.resolve(path.dirname(auditLayer.file), auditFile) : path.resolve(auditFile) }
        : {}),
      ...(maxBytes ? { maxBytes } : {}),
      redact: union((layer) => layer.config.audit?.redact),
    },
    sandboxRead: union((layer) => [
      ...(layer.config.sandbox?.read ?? []),
      ...(layer.config.paths?.roots ?? []).map((root) => root.path),
    ]).filter((p) => path.isAbsolute(p)).map((p) => path.normalize(p)),
  };
}
