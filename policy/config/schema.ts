/**
 * The shape of a toolfence policy file (`toolfence.json`, the user's
 * `config.json`, the managed `/etc/toolfence/config.json`, `--config FILE`):
 * a valibot schema, strict like the tools' arguments (unknown keys are
 * refused at every level), from which the published JSON Schema is made.
 *
 * @module
 */
import * as v from "valibot";
import { SIZE_PATTERN, sizeBytes } from "../_size.ts";

const RULE_PATTERN = v.pipe(
  v.string(),
  v.trim(),
  v.nonEmpty("a rule needs a pattern"),
  v.check((s) => !s.includes("\0"), "a pattern cannot hold a NUL character"),
  v.description(
    "A command prefix (`git push` matches `git push origin` but not `git pushx`) or, with `*`, `?` or `[...]`, " +
      "a glob over the command's words joined by single spaces (`npm run test:*`).",
  ),
);

const PATH_PATTERN = v.pipe(
  v.string(),
  v.trim(),
  v.nonEmpty("a path rule needs a glob"),
  v.check((s) => !s.includes("\0"), "a glob cannot hold a NUL character"),
  v.check((s) => !s.split("/").includes(".."), "a glob cannot hold `..`"),
  v.description("A glob relative to the workspace root (`**/.env`, `secrets/**`), or an absolute one."),
);

const RULE_FLAGS = {
  enforce: v.pipe(
    v.optional(v.boolean()),
    v.description("false: shadow mode, the rule's would-be decision is recorded (audit, explain) but not applied."),
  ),
  override: v.pipe(
    v.optional(v.boolean()),
    v.description("true: where this rule matches, the rules of lower layers are not considered."),
  ),
  reason: v.pipe(v.optional(v.string()), v.description("Shown to the model and in explanations.")),
};

/** A rule written as an object: its pattern and flags. */
export interface RuleSpec {
  /** The pattern. */
  pattern: string;
  /** false: shadow mode. */
  enforce?: boolean;
  /** true: where it matches, the rules of lower layers are not considered. */
  override?: boolean;
  /** Shown to the model and in explanations. */
  reason?: string;
}

/** A command rule as written. */
export type CommandRuleInput = string | RuleSpec;
/** A path rule as written. */
export type PathRuleInput = string | RuleSpec;

/** A size as written: bytes, or a whole number with a binary unit (`512MiB`, `2GiB`). */
export type SizeInput = number | string;

/** The resource limits of the processes the tools start, as written (`sandbox.limits`). */
export interface ResourceLimitsInput {
  /** Memory of the command (per process, and of its whole tree where a cgroup applies). */
  memory?: SizeInput;
  /** CPU seconds of each process. */
  cpuSeconds?: number;
  /** The largest file a process may write. */
  fileSize?: SizeInput;
  /** Processes (and threads) of the command. */
  processes?: number;
  /** Open files of each process. */
  openFiles?: number;
  /** The size of the sandbox's private /tmp. */
  tmpSize?: SizeInput;
}

/** An example of a policy file: a command or a path, and the decision the rules must give. */
export interface PolicyExample {
  /** Named in the error when the example fails. */
  name?: string;
  /** A command line. */
  command?: string;
  /** A path relative to the workspace. */
  path?: string;
  /** allow, ask or deny for a command; allow, deny or read-only for a path. */
  expect: "allow" | "ask" | "deny" | "read-only";
}

/** A parsed policy file (see the README's "Configuring the policy"). */
export interface PolicyFile {
  /** The JSON Schema, for editors. */
  $schema?: string;
  /** false: the whole file is in shadow mode. */
  enforce?: boolean;
  /** true: every rule of this file overrides the rules of lower layers where it matches. */
  override?: boolean;
  /** true: every tool that can write or run is unregistered. */
  readOnly?: boolean;
  /** Command rules. */
  commands?: { allow?: CommandRuleInput[]; ask?: CommandRuleInput[]; deny?: CommandRuleInput[] };
  /** Path rules and extra roots. */
  paths?: {
    deny?: PathRuleInput[];
    readOnly?: PathRuleInput[];
    roots?: { path: string; access: "read" | "write" }[];
  };
  /** Tools and groups. */
  tools?: { disable?: string[]; enable?: string[]; groups?: string[]; approve?: string[] };
  /** The sandbox, timeouts and output caps. */
  sandbox?: {
    mode?: "auto" | "required" | "off";
    timeoutSeconds?: number;
    maxOutputChars?: number;
    network?: "none" | "proxy";
    read?: string[];
    limits?: ResourceLimitsInput;
  };
  /** Network destinations. */
  network?: { allow?: string[]; deny?: string[] };
  /** Who may answer. */
  answers?: { elicitation?: "refuse" | "once" | "grant"; save?: "never" | "project" | "user" };
  /** The audit log. */
  audit?: { file?: string; maxBytes?: number; redact?: string[] };
  /** The store a fleet of `serve --http` replicas shares: `sqlite:PATH` or `postgres://...`. */
  store?: string;
  /** Decisions the rules must give. */
  examples?: PolicyExample[];
}

const COMMAND_RULE = v.union([
  RULE_PATTERN,
  v.strictObject({ pattern: RULE_PATTERN, ...RULE_FLAGS }),
]);

const PATH_RULE = v.union([
  PATH_PATTERN,
  v.strictObject({ pattern: PATH_PATTERN, ...RULE_FLAGS }),
]);

const RULE_LISTS = {
  allow: v.pipe(
    v.optional(v.array(COMMAND_RULE)),
    v.description("Run without asking (the analysis still applies)."),
  ),
  ask: v.pipe(v.optional(v.array(COMMAND_RULE)), v.description("Always ask a person, even when allowlisted.")),
  deny: v.pipe(v.optional(v.array(COMMAND_RULE)), v.description("Never run, whatever wraps them.")),
};

const TOOL_NAMES = v.array(
  v.pipe(v.string(), v.nonEmpty(), v.description("A tool name or an fnmatch pattern (`browser_*`).")),
);

// `example.com`, `*.example.com`, `https://example.com:8443`, `[::1]:*`, as the browser tools read them.
const DESTINATION = v.pipe(
  v.string(),
  v.regex(
    /^(?:https?:\/\/)?(?:\*\.)?(?:\[[0-9a-f:.]+\]|[^:/\s*]+)(?::(?:\d+|\*))?\/?$/i,
    "a destination is a host, *.host or scheme://host, with an optional :port",
  ),
);

// An absolute, clean folder: no `.` or `..` steps, no empty ones, not the root itself.
const SANDBOX_FOLDER = v.pipe(
  v.string(),
  v.regex(/^(?:\/(?!\.\.?(?:\/|$))[^/\0]+)+$/, "an absolute folder without . or .. steps, not /"),
);

const POSITIVE_INT = v.pipe(v.number(), v.integer(), v.minValue(1));

const SIZE = v.pipe(
  v.union([
    v.pipe(POSITIVE_INT, v.maxValue(Number.MAX_SAFE_INTEGER, "the size is too large")),
    v.pipe(
      v.string(),
      v.regex(SIZE_PATTERN, "a size is a whole number with a unit: 512MiB, 2GiB (or bytes)"),
      // Only a size of the right form can be too large; the regex speaks for the others.
      v.check((size) => !SIZE_PATTERN.test(size) || sizeBytes(size) !== undefined, "the size is too large"),
    ),
  ]),
  v.description("Bytes, or a whole number with a binary unit: 512MiB, 2GiB."),
);

const EXAMPLE = v.pipe(
  v.strictObject({
    name: v.pipe(v.optional(v.string()), v.description("Named in the error when the example fails.")),
    command: v.pipe(v.optional(v.pipe(v.string(), v.nonEmpty())), v.description("A command line.")),
    path: v.pipe(v.optional(v.pipe(v.string(), v.nonEmpty())), v.description("A path relative to the workspace.")),
    expect: v.pipe(
      v.picklist(["allow", "ask", "deny", "read-only"]),
      v.description("allow, ask or deny for a command; allow, deny or read-only for a path."),
    ),
  }),
  v.check((e) => (e.command === undefined) !== (e.path === undefined), "an example has a command or a path, not both"),
  v.check(
    (e) => e.command === undefined ? e.expect !== "ask" : e.expect !== "read-only",
    "a command example expects allow, ask or deny; a path example allow, deny or read-only",
  ),
);

const FILE = v.strictObject({
  $schema: v.optional(v.string()),
  enforce: v.pipe(
    v.optional(v.boolean()),
    v.description("false: the whole file is in shadow mode (its decisions are recorded, not applied)."),
  ),
  override: v.pipe(
    v.optional(v.boolean()),
    v.description("true: every rule of this file overrides the rules of lower layers where it matches."),
  ),
  readOnly: v.pipe(
    v.optional(v.boolean()),
    v.description("true: every tool that can write or run is unregistered (the read-only tier)."),
  ),
  commands: v.optional(v.strictObject(RULE_LISTS)),
  paths: v.optional(v.strictObject({
    deny: v.pipe(
      v.optional(v.array(PATH_RULE)),
      v.description("Hidden from every tool and from the sandbox: not listed, not read, not written."),
    ),
    readOnly: v.pipe(
      v.optional(v.array(PATH_RULE)),
      v.description("Globs inside the workspace that tools may read but never write."),
    ),
    roots: v.pipe(
      v.optional(v.array(v.strictObject({
        path: v.pipe(v.string(), v.nonEmpty(), v.description("An absolute folder.")),
        access: v.picklist(["read", "write"]),
      }))),
      v.description(
        "Extra folders outside the workspace: the OS sandbox shows them read-only (the file tools do not serve them yet).",
      ),
    ),
  })),
  tools: v.optional(v.strictObject({
    disable: v.pipe(v.optional(TOOL_NAMES), v.description("Tools (or patterns) unregistered from the server.")),
    enable: v.pipe(v.optional(TOOL_NAMES), v.description("Tools (or patterns) enabled again after a lower layer.")),
    groups: v.pipe(
      v.optional(v.array(v.pipe(v.string(), v.nonEmpty()))),
      v.description("The built-in groups to serve (default: all)."),
    ),
    approve: v.pipe(v.optional(TOOL_NAMES), v.description("Tools that always need a person's approval.")),
  })),
  sandbox: v.optional(v.strictObject({
    mode: v.optional(v.picklist(["auto", "required", "off"])),
    timeoutSeconds: v.pipe(v.optional(POSITIVE_INT), v.description("The longest a shell command may run.")),
    maxOutputChars: v.pipe(v.optional(POSITIVE_INT), v.description("The output cap of a call's result.")),
    network: v.pipe(
      v.optional(v.picklist(["none", "proxy"])),
      v.description(
        "The network of sandboxed commands: `none` (only a private loopback), or `proxy` (the egress proxy, " +
          "judging every connection by `network`). Default `proxy` when `network.allow` names a host, else `none`.",
      ),
    ),
    read: v.pipe(
      v.optional(v.array(SANDBOX_FOLDER)),
      v.description(
        "Absolute host folders the OS sandbox shows read-only to commands, checkers and the browser, besides " +
          "the system folders, the workspace and the temp dir (nothing else of the host is there).",
      ),
    ),
    limits: v.pipe(
      v.optional(v.strictObject({
        memory: v.pipe(v.optional(SIZE), v.description("Memory of a command (default 4GiB).")),
        cpuSeconds: v.pipe(v.optional(POSITIVE_INT), v.description("CPU seconds of each process (default 120).")),
        fileSize: v.pipe(v.optional(SIZE), v.description("The largest file a process may write (default 1GiB).")),
        processes: v.pipe(
          v.optional(POSITIVE_INT),
          v.description("Processes and threads of a command (default 1024)."),
        ),
        openFiles: v.pipe(v.optional(POSITIVE_INT), v.description("Open files of each process (default 8192).")),
        tmpSize: v.pipe(
          v.optional(SIZE),
          v.description(
            "The size of each of the sandbox's private tmpfs folders: /tmp, /dev/shm and the home folder (default 1GiB).",
          ),
        ),
      })),
      v.description("Resource limits of every process the tools start; a command past one fails with resource_limit."),
    ),
  })),
  network: v.optional(v.strictObject({
    allow: v.pipe(
      v.optional(v.array(DESTINATION)),
      v.description("Hosts (`example.com`, `*.example.com`) a tool that uses the network may reach."),
    ),
    deny: v.pipe(
      v.optional(v.array(DESTINATION)),
      v.description("Hosts a tool that uses the network may never reach, whatever the allow lists say."),
    ),
  })),
  answers: v.optional(v.strictObject({
    elicitation: v.pipe(
      v.optional(v.picklist(["refuse", "once", "grant"])),
      v.description(
        "What an answer from an MCP client (elicitation) may do: `refuse` counts none, `once` (default) lets it " +
          "allow one call but never grant, `grant` lets it grant too. Protected paths always need a person.",
      ),
    ),
    save: v.pipe(
      v.optional(v.picklist(["never", "project", "user"])),
      v.description("Where a person's `allow and grant` of a command is saved (default never)."),
    ),
  })),
  audit: v.optional(v.strictObject({
    file: v.pipe(v.optional(v.string()), v.description("The audit log (JSON lines), relative to this file.")),
    maxBytes: v.pipe(v.optional(POSITIVE_INT), v.description("Rotate the log when it grows past this size.")),
    redact: v.pipe(
      v.optional(v.array(v.pipe(v.string(), v.nonEmpty()))),
      v.description("Names of environment variables, or literal strings, never written to the log."),
    ),
  })),
  store: v.pipe(
    v.optional(v.pipe(v.string(), v.regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/))),
    v.description(
      "The store `serve --http` replicas share (sessions, calls, the audit): `sqlite:PATH` or `postgres://USER@HOST:PORT/DB`; `--store` wins.",
    ),
  ),
  examples: v.pipe(
    v.optional(v.array(EXAMPLE)),
    v.description("Decisions the rules must give; checked when the file loads and by `toolfence policy test`."),
  ),
});

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// The hand-written types above are exactly what the schemas give.
true satisfies Same<PolicyFile, v.InferOutput<typeof FILE>>;
true satisfies Same<PolicyExample, v.InferOutput<typeof EXAMPLE>>;
true satisfies Same<CommandRuleInput, v.InferOutput<typeof COMMAND_RULE>>;

/**
 * The policy file's schema: strict at every level (unknown keys are refused).
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { PolicyFileSchema } from "@toolfence/policy";
 * console.log(v.safeParse(PolicyFileSchema, { commands: { deny: ["git push"] } }).success); // true
 * ```
 */
export const PolicyFileSchema: v.GenericSchema<unknown, PolicyFile> = FILE;
/** A command rule: a pattern, or a pattern with flags. */
export const CommandRuleSchema: v.GenericSchema<unknown, CommandRuleInput> = COMMAND_RULE;
/** A path rule: a glob, or a glob with flags. */
export const PathRuleSchema: v.GenericSchema<unknown, PathRuleInput> = PATH_RULE;
/** An example of a policy file. */
export const PolicyExampleSchema: v.GenericSchema<unknown, PolicyExample> = EXAMPLE;
