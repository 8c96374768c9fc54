/**
 * `toolfence policy`: check, explain, list, add, remove, test, init, schema.
 *
 * @module
 */
import { access, realpath } from "node:fs/promises";
import { realpathSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import {
  addRuleToFile,
  type CommandDecision,
  decideCommand,
  DEFAULT_COMMAND_ALLOWLIST,
  describeRule,
  formatExampleFailure,
  loadPolicy,
  PolicyExampleError,
  PolicyFileError,
  type PolicyFileLocations,
  policyFileLocations,
  policyJsonSchema,
  type PolicyRules,
  policySettings,
  PROJECT_POLICY_FILE,
  removeRuleFromFile,
  type RuleList,
  runPolicyExamples,
  STARTER_POLICY,
  userPolicyFile,
  writePolicyFile,
} from "@toolfence/policy";
import { CliUsageError, parseCommand } from "./usage.ts";
import { userFileResolved } from "./session_policy.ts";

/** The help of `toolfence policy`. */
export const POLICY_HELP = `Usage: toolfence policy <subcommand> [options]

Subcommands:
  check "COMMAND"         the decision for a command line: allow, ask or deny, and why
  explain "COMMAND"|PATH  which rule of which layer decided, every rule that matched, and why
  list                    the layers read (managed, --config, project, user) and their rules
  add KIND PATTERN        add a rule to the project (default) or --user file, keeping its comments;
                          KIND: allow | ask | deny (commands), or with --path: deny | read-only
  remove KIND PATTERN     remove a rule the same way
  test                    run the examples of every layer; exit 1 when one fails
  init                    write a commented starter toolfence.json (or the --user file)
  schema                  print the JSON Schema of the policy file

Layers, highest first: managed (/etc/toolfence/config.json), --config FILE,
project (toolfence.json in the workspace), user ($XDG_CONFIG_HOME/toolfence/config.json
or ~/.config/toolfence/config.json). Where layers disagree, deny beats ask beats
allow, unless a higher layer's rule says "override": true.

Exit codes: 0 allowed (check) or success; 1 ask or deny (check), a failing example,
a broken policy file; 2 bad usage.

Options:
  --workspace DIR   the workspace (default: the current folder)
  --config FILE     a policy file as the command-line layer
  --managed FILE    read the managed layer from FILE instead of /etc/toolfence/config.json
  --user-file FILE  read the user layer from FILE
  --allow ENTRY     add an allowlist entry (repeatable), e.g. --allow "npm test"
  --path            explain/add/remove: the argument is a path
  --command         explain: the argument is a command line
  --user            add/remove/init: edit the user file instead of the project file
  --force           init: overwrite an existing file
  --json            print JSON
  -h, --help        show this help`;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  workspace: { type: "string" },
  config: { type: "string" },
  managed: { type: "string" },
  "user-file": { type: "string" },
  allow: { type: "string", multiple: true },
  path: { type: "boolean" },
  command: { type: "boolean" },
  user: { type: "boolean" },
  force: { type: "boolean" },
  json: { type: "boolean" },
} as const;

type Values = ReturnType<typeof parseCommand<typeof OPTIONS>>["values"];

function out(text: string): void {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

function workdirOf(values: Values): string {
  const dir = values.workspace ?? process.cwd();
  try {
    return realpathSync(dir);
  } catch (error) {
    throw new CliUsageError(`The workspace ${dir} cannot be used: ${(error as Error).message}`, "policy");
  }
}

function locations(values: Values, examples = true): PolicyFileLocations {
  return {
    ...(values.managed ? { managed: path.resolve(values.managed) } : {}),
    ...(values.config ? { cli: path.resolve(values.config) } : {}),
    ...(values["user-file"] ? { user: path.resolve(values["user-file"]) } : {}),
    examples,
  };
}

async function rulesFor(values: Values, examples = true): Promise<PolicyRules> {
  return await loadPolicy(workdirOf(values), locations(values, examples));
}

function allowlistOf(values: Values): string[] {
  return [...DEFAULT_COMMAND_ALLOWLIST, ...(values.allow ?? [])];
}

function decisionLines(decided: CommandDecision): string[] {
  const lines: string[] = [];
  const verdict = decided.decision === "allow"
    ? "allow (runs without asking)"
    : decided.decision === "deny"
    ? "deny (never runs)"
    : "ask";
  lines.push(`verdict: ${verdict}`);
  lines.push(`because: ${decided.reason}`);
  if (decided.rules.rule) {
    lines.push(`${decided.decidedBy === "rule" ? "decided by" : "matching rule"}: ${describeRule(decided.rules.rule)}`);
  }
  if (decided.rules.shadow) {
    lines.push(`shadow: would be ${decided.rules.shadow.decision} by the ${describeRule(decided.rules.shadow)}`);
  }
  for (const reason of decided.rules.uncertain) lines.push(`  uncertain: ${reason}`);
  const check = decided.check;
  if (check) {
    if (!check.parsed) lines.push("parsed: no (anything not fully understood asks)");
    for (const reason of check.reasons) lines.push(`  reason: ${reason}`);
    lines.push("commands:");
    for (const found of check.commands) lines.push(`  ${found.ok ? "ok " : "ask"}  ${found.text}  (${found.reason})`);
    // Every path the line was judged to touch, and the rule behind each that asks or denies.
    if (check.paths.length > 0) lines.push("paths:");
    for (const found of check.paths) {
      const where = found.real ?? found.path;
      lines.push(
        `  ${found.decision.padEnd(5)}  ${found.access} ${JSON.stringify(found.written)}${
          where !== undefined && where !== found.written ? ` (${where})` : ""
        } from ${found.origin}${found.reason ? `: ${found.reason}` : ""}`,
      );
    }
  }
  if (decided.assessment) {
    lines.push(`risk: ${decided.assessment.decision} (${decided.assessment.kind}): ${decided.assessment.reason}`);
  }
  if (decided.prompt) {
    lines.push(
      `then: "${decided.prompt.title}", default ${decided.prompt.defaultChoice ? "yes" : "no"}${
        decided.prompt.requirePerson ? ", only a person may answer" : ""
      }; refused where nobody can be asked`,
    );
  } else if (decided.decision === "allow" && decided.decidedBy === "assessor") {
    lines.push("then: runs without asking (the assessor allowed it)");
  }
  return lines;
}

// The allowlist check's fields at the top (as before policy files), with the decision beside them.
function checkJson(decided: CommandDecision): Record<string, unknown> {
  const { check, ...rest } = decided;
  return { ...(check ?? { command: decided.command }), ...rest };
}

async function check(values: Values, args: string[]): Promise<number> {
  const [command, ...extra] = args;
  if (command === undefined) {
    throw new CliUsageError('policy check needs the command line, e.g. policy check "ls -la"', "policy");
  }
  if (extra.length > 0) throw new CliUsageError(`Unexpected argument ${JSON.stringify(extra[0])}`, "policy");
  const rules = await rulesFor(values);
  const decided = await decideCommand(command, {
    rules,
    allowlist: allowlistOf(values),
    workspaceRoot: rules.root,
    ...(policySettings(rules).sandbox ? { sandbox: policySettings(rules).sandbox } : {}),
  });
  if (values.json) out(JSON.stringify(checkJson(decided), null, 2));
  else out(decisionLines(decided).join("\n"));
  return decided.decision === "allow" ? 0 : 1;
}

async function looksLikePath(argument: string, workdir: string): Promise<boolean> {
  if (/\s/.test(argument)) return false;
  if (argument.includes("/") || argument.startsWith(".")) return true;
  try {
    await access(path.resolve(workdir, argument));
    return true;
  } catch {
    return false;
  }
}

async function explain(values: Values, args: string[]): Promise<number> {
  const [argument, ...extra] = args;
  if (argument === undefined) throw new CliUsageError("policy explain needs a command line or a path", "policy");
  if (extra.length > 0) throw new CliUsageError(`Unexpected argument ${JSON.stringify(extra[0])}`, "policy");
  const rules = await rulesFor(values);
  const layers = rules.layers.map((layer) => `${layer.name}${layer.file ? ` (${layer.file})` : ""}`);
  const isPath = values.path || (!values.command && await looksLikePath(argument, rules.root));
  if (isPath) {
    const named = path.resolve(rules.root, argument);
    let real: string | undefined;
    try {
      real = await realpath(named);
    } catch {
      // Judged as named.
    }
    const lexical = rules.decidePath(named);
    const resolved = real !== undefined && real !== named ? rules.decidePath(real) : undefined;
    const order = { allow: 0, "read-only": 1, deny: 2 } as const;
    const outcome = resolved && order[resolved.decision] > order[lexical.decision] ? resolved : lexical;
    if (values.json) {
      out(JSON.stringify({ path: named, real, layers, ...outcome }, null, 2));
      return 0;
    }
    const lines = [
      `path: ${named}${real && real !== named ? ` (really ${real})` : ""}`,
      `decision: ${outcome.decision}${outcome.decision === "deny" ? " (hidden from every tool and the sandbox)" : ""}`,
      `because: ${outcome.rule ? describeRule(outcome.rule) : "no path rule matches it"}${
        outcome.rule?.reason ? `: ${outcome.rule.reason}` : ""
      }`,
      ...(outcome.shadow ? [`shadow: would be ${outcome.shadow.kind} by the ${describeRule(outcome.shadow)}`] : []),
      `layers: ${layers.join(", ") || "none (built-in defaults only)"}`,
      "matching rules:",
      ...(outcome.matches.length ? outcome.matches.map((rule) => `  ${describeRule(rule)}`) : ["  none"]),
    ];
    out(lines.join("\n"));
    return 0;
  }
  const decided = await decideCommand(argument, {
    rules,
    allowlist: allowlistOf(values),
    workspaceRoot: rules.root,
  });
  if (values.json) {
    out(JSON.stringify({ layers, ...checkJson(decided) }, null, 2));
    return 0;
  }
  const lines = [
    ...decisionLines(decided),
    `layers: ${layers.join(", ") || "none (built-in defaults only)"}`,
    "matching rules:",
    ...(decided.rules.matches.length
      ? decided.rules.matches.map((match) =>
        `  ${describeRule(match.rule)} matches ${JSON.stringify(match.words.join(" "))}`
      )
      : ["  none"]),
  ];
  out(lines.join("\n"));
  return 0;
}

async function list(values: Values): Promise<number> {
  const rules = await rulesFor(values, false);
  const settings = policySettings(rules);
  if (values.json) {
    out(JSON.stringify(
      {
        layers: rules.layers.map((layer) => ({ name: layer.name, file: layer.file, config: layer.config })),
        commandRules: rules.commandRules,
        pathRules: rules.pathRules,
        settings,
      },
      null,
      2,
    ));
    return 0;
  }
  const where = policyFileLocations(rules.root, locations(values));
  const lines = ["layers (highest first):"];
  for (const name of ["managed", "cli", "project", "user"] as const) {
    const file = where[name];
    if (file === undefined) continue;
    const layer = rules.layers.find((l) => l.name === name);
    lines.push(`  ${name}: ${file}${layer ? "" : " (not present)"}`);
  }
  lines.push("command rules:");
  if (rules.commandRules.length === 0) lines.push("  none");
  for (const rule of rules.commandRules) {
    lines.push(
      `  ${rule.decision.padEnd(5)} ${rule.pattern}  [${rule.source.layer}${rule.enforce ? "" : ", shadow"}${
        rule.override ? ", override" : ""
      }]`,
    );
  }
  lines.push("path rules:");
  if (rules.pathRules.length === 0) lines.push("  none");
  for (const rule of rules.pathRules) {
    lines.push(`  ${rule.kind.padEnd(9)} ${rule.pattern}  [${rule.source.layer}${rule.enforce ? "" : ", shadow"}]`);
  }
  lines.push(`read-only tier: ${settings.readOnly ? "on" : "off"}`);
  if (settings.sandbox) lines.push(`sandbox: ${settings.sandbox}`);
  if (settings.disabledTools.length) lines.push(`disabled tools: ${settings.disabledTools.join(", ")}`);
  if (settings.approveTools.length) lines.push(`tools needing approval: ${settings.approveTools.join(", ")}`);
  lines.push(`elicitation answers: ${settings.elicitation}`);
  out(lines.join("\n"));
  return 0;
}

function targetFile(values: Values): string {
  if (values.user) {
    const file = values["user-file"] ? path.resolve(values["user-file"]) : userPolicyFile();
    if (file === undefined) throw new CliUsageError("No user file: neither XDG_CONFIG_HOME nor HOME is set", "policy");
    return userFileResolved(file);
  }
  return path.join(workdirOf(values), PROJECT_POLICY_FILE);
}

function ruleList(values: Values, kind: string | undefined, sub: string): RuleList {
  if (values.path) {
    if (kind === "deny") return { section: "paths", list: "deny" };
    if (kind === "read-only" || kind === "readOnly") return { section: "paths", list: "readOnly" };
    throw new CliUsageError(`policy ${sub} --path needs deny or read-only, not ${JSON.stringify(kind)}`, "policy");
  }
  if (kind === "allow" || kind === "ask" || kind === "deny") return { section: "commands", list: kind };
  throw new CliUsageError(`policy ${sub} needs allow, ask or deny, not ${JSON.stringify(kind)}`, "policy");
}

async function edit(values: Values, args: string[], sub: "add" | "remove"): Promise<number> {
  const [kind, pattern, ...extra] = args;
  const where = ruleList(values, kind, sub);
  if (pattern === undefined || pattern.trim() === "") {
    throw new CliUsageError(`policy ${sub} needs a pattern, e.g. policy ${sub} deny "git push*"`, "policy");
  }
  if (extra.length > 0) throw new CliUsageError(`Unexpected argument ${JSON.stringify(extra[0])}`, "policy");
  const file = targetFile(values);
  if (sub === "add") {
    const changed = await addRuleToFile(file, where, pattern);
    out(changed ? `added ${kind} ${JSON.stringify(pattern.trim())} to ${file}` : `${file} already has it`);
    return 0;
  }
  const removed = await removeRuleFromFile(file, where, pattern);
  out(removed > 0 ? `removed ${kind} ${JSON.stringify(pattern.trim())} from ${file}` : `${file} has no such rule`);
  return removed > 0 ? 0 : 1;
}

async function test(values: Values): Promise<number> {
  const rules = await rulesFor(values, false);
  const results = await runPolicyExamples(rules, { allowlist: allowlistOf(values) });
  if (values.json) {
    out(JSON.stringify(results, null, 2));
  } else {
    for (const result of results) {
      out(result.ok ? `ok    ${result.label} (${result.got})` : `FAIL  ${formatExampleFailure(result)}`);
    }
    const failed = results.filter((result) => !result.ok).length;
    out(`${results.length - failed} passed, ${failed} failed`);
  }
  return results.every((result) => result.ok) ? 0 : 1;
}

async function init(values: Values): Promise<number> {
  const file = targetFile(values);
  if (!values.force) {
    try {
      await access(file);
      throw new CliUsageError(`${file} exists already; use --force to overwrite it`, "policy");
    } catch (error) {
      if (error instanceof CliUsageError) throw error;
    }
  }
  await writePolicyFile(file, STARTER_POLICY);
  out(`wrote ${file}`);
  return 0;
}

/**
 * Runs `toolfence policy` with `args` (after `policy`); returns the exit
 * code. A broken policy file or a failing example prints its message and
 * gives 1; bad usage throws {@linkcode CliUsageError}.
 *
 * Requires `--allow-read` for the policy files (and `--allow-write` for add, remove, init).
 *
 * @example
 * ```ts
 * import { policyCommand } from "./policy.ts";
 * await policyCommand(["check", "git status"]);
 * ```
 */
export async function policyCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand("policy", args, OPTIONS);
  if (values.help) {
    out(POLICY_HELP);
    return 0;
  }
  const [sub, ...rest] = positionals;
  try {
    switch (sub) {
      case "check":
        return await check(values, rest);
      case "explain":
        return await explain(values, rest);
      case "list":
        return await list(values);
      case "add":
      case "remove":
        return await edit(values, rest, sub);
      case "test":
        return await test(values);
      case "init":
        return await init(values);
      case "schema":
        out(JSON.stringify(policyJsonSchema(), null, 2));
        return 0;
      case undefined:
        throw new CliUsageError('policy needs a subcommand, e.g. policy check "COMMAND"', "policy");
      default:
        throw new CliUsageError(
          `Unknown policy subcommand ${
            JSON.stringify(sub)
          }; use: check, explain, list, add, remove, test, init, schema`,
          "policy",
        );
    }
  } catch (error) {
    if (error instanceof PolicyFileError || error instanceof PolicyExampleError) {
      process.stderr.write(`toolfence: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
