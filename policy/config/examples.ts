/**
 * The examples of the policy files, as tests: every `examples` entry of every
 * layer is decided by the whole merged policy and compared with its `expect`.
 * They run when a session's policy loads (a failing one stops it) and with
 * `toolfence policy test`.
 *
 * @module
 */
import { realpath } from "node:fs/promises";
import path from "node:path";
import { decideCommand } from "../shell/authorize_command.ts";
import type { RiskAssessor } from "../shell/risk.ts";
import type { SandboxMode } from "../sandbox.ts";
import { describeRule, type PolicyLayerName, type PolicyRules } from "./rules.ts";
import type { PolicyExample } from "./schema.ts";
import { policySettings } from "./settings.ts";

/** One example and how it fared. */
export interface ExampleResult {
  /** The example as written. */
  example: PolicyExample;
  /** `name`, else the command or path. */
  label: string;
  /** The layer and file it came from, and where in the file. */
  layer: PolicyLayerName;
  /** Its file. */
  file?: string;
  /** 1-based line. */
  line?: number;
  /** 1-based column. */
  column?: number;
  /** What the policy decided. */
  got: string;
  /** Whether that is what the example expects. */
  ok: boolean;
  /** Why the policy decided so. */
  reason: string;
}

/** Options of {@linkcode runPolicyExamples}. */
export interface PolicyExampleOptions {
  /** The command allowlist (default the built-in one). */
  allowlist?: readonly string[];
  /** The sandbox mode commands would run in (default the files' `sandbox.mode`, else `auto`). */
  sandbox?: SandboxMode;
  /** The risk assessor (default the rules-based one). */
  assessor?: RiskAssessor;
}

/**
 * Decides every example of every layer of `rules`.
 *
 * Requires `--allow-read` for the workspace (real paths of path examples) and
 * `--allow-run=bwrap` to probe the sandbox for commands that run project code.
 *
 * @example
 * ```ts
 * import { PolicyRules, runPolicyExamples } from "@toolfence/policy";
 * const rules = PolicyRules.fromLayers([{
 *   name: "project",
 *   config: { commands: { deny: ["git push"] }, examples: [{ command: "git push origin", expect: "deny" }] },
 * }], "/w");
 * console.log((await runPolicyExamples(rules)).every((result) => result.ok)); // true
 * ```
 */
export async function runPolicyExamples(
  rules: PolicyRules,
  options: PolicyExampleOptions = {},
): Promise<ExampleResult[]> {
  const results: ExampleResult[] = [];
  for (const layer of rules.layers) {
    for (const [index, example] of (layer.config.examples ?? []).entries()) {
      const at = layer.positions?.get(`examples[${index}]`);
      const where = { layer: layer.name, ...(layer.file ? { file: layer.file } : {}), ...(at ?? {}) };
      const label = example.name ?? example.command ?? example.path!;
      if (example.command !== undefined) {
        const decided = await decideCommand(example.command, {
          rules,
          workspaceRoot: rules.root,
          ...(options.allowlist ? { allowlist: options.allowlist } : {}),
          ...(options.sandbox ?? policySettings(rules).sandbox
            ? { sandbox: options.sandbox ?? policySettings(rules).sandbox }
            : {}),
          ...(options.assessor ? { assessor: options.assessor } : {}),
        });
        results.push({
          example,
          label,
          ...where,
          got: decided.decision,
          ok: decided.decision === example.expect,
          reason: decided.reason,
        });
      } else {
        const named = path.posix.resolve(rules.root, example.path!);
        let real: string | undefined;
        try {
          real = await realpath(named);
        } catch {
          // Not there (yet): judged as named.
        }
        const lexical = rules.decidePath(named);
        const resolved = real === undefined || real === named ? lexical : rules.decidePath(real);
        const order = { allow: 0, "read-only": 1, deny: 2 } as const;
        const outcome = order[resolved.decision] > order[lexical.decision] ? resolved : lexical;
        results.push({
          example,
          label,
          ...where,
          got: outcome.decision,
          ok: outcome.decision === example.expect,
          reason: outcome.rule ? `${outcome.decision} by the ${describeRule(outcome.rule)}` : "no path rule matches it",
        });
      }
    }
  }
  return results;
}

/**
 * The failing examples of a policy, as one error naming each (file, line,
 * column, label, expected, got, why).
 *
 * @example
 * ```ts
 * import { PolicyExampleError } from "@toolfence/policy";
 * const error = new PolicyExampleError([]);
 * console.log(error.code); // "policy_example_failed"
 * ```
 */
export class PolicyExampleError extends Error {
  /** A stable code for the developer. */
  readonly code = "policy_example_failed";
  /** The examples that failed. */
  readonly failures: readonly ExampleResult[];

  /** Creates the error from the failed examples. */
  constructor(failures: readonly ExampleResult[]) {
    super(failures.map(formatExampleFailure).join("\n"));
    this.name = "PolicyExampleError";
    this.failures = failures;
  }
}

/** `file:line:column: example "label": expected deny, got allow (why)`. */
export function formatExampleFailure(result: ExampleResult): string {
  const where = result.file ? `${result.file}:${result.line ?? 1}:${result.column ?? 1}` : `${result.layer} layer`;
  return `${where}: example ${
    JSON.stringify(result.label)
  }: expected ${result.example.expect}, got ${result.got} (${result.reason})`;
}

/**
 * Runs the examples and throws {@linkcode PolicyExampleError} when any fails.
 *
 * Requires what {@linkcode runPolicyExamples} requires.
 *
 * @example
 * ```ts
 * import { checkPolicyExamples, PolicyRules } from "@toolfence/policy";
 * await checkPolicyExamples(PolicyRules.empty("/w"));
 * ```
 */
export async function checkPolicyExamples(rules: PolicyRules, options: PolicyExampleOptions = {}): Promise<void> {
  const failures = (await runPolicyExamples(rules, options)).filter((result) => !result.ok);
  if (failures.length > 0) throw new PolicyExampleError(failures);
}
