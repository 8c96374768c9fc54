/**
 * Reading policy files: one file checked against the schema (every problem
 * with its file, line, column and key), and the layered set a session uses
 * (managed, `--config`, project, user). A broken file is an error, never a
 * fallback to the defaults.
 *
 * @module
 */
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import * as v from "valibot";
import type { Node } from "jsonc-parser";
import { type FileProblem, issueProblems, keyPath, lineColumn, parseJsonc } from "./_locate.ts";
import { type PolicyFile, PolicyFileSchema } from "./schema.ts";
import { type PolicyLayer, type PolicyLayerName, PolicyRules } from "./rules.ts";
import { checkPolicyExamples } from "./examples.ts";
import { isRuntimePermissionError } from "@toolfence/internal";

export type { FileProblem } from "./_locate.ts";

/**
 * A policy file that cannot be used: every problem, each as
 * `file:line:column: key: what was expected`.
 *
 * @example
 * ```ts
 * import { parsePolicyFile, PolicyFileError } from "@toolfence/policy";
 * try {
 *   parsePolicyFile("toolfence.json", '{ "commands": { "deny": [3] } }', "project");
 * } catch (error) {
 *   if (error instanceof PolicyFileError) console.log(error.message);
 *   // toolfence.json:1:27: commands.deny[0]: expected (string | Object), received 3
 * }
 * ```
 */
export class PolicyFileError extends Error {
  /** A stable code for the developer. */
  readonly code = "invalid_policy_file";
  /** Every problem found. */
  readonly problems: readonly FileProblem[];

  /** Creates the error from its problems. */
  constructor(problems: readonly FileProblem[]) {
    super(problems.map(formatProblem).join("\n"));
    this.name = "PolicyFileError";
    this.problems = problems;
  }
}

/** `file:line:column: key: message`. */
export function formatProblem(problem: FileProblem): string {
  return `${problem.file}:${problem.line}:${problem.column}: ${
    problem.key ? `${problem.key}: ` : ""
  }${problem.message}`;
}

function positions(text: string, tree: Node): Map<string, { line: number; column: number }> {
  const out = new Map<string, { line: number; column: number }>();
  const walk = (node: Node, at: (string | number)[]) => {
    out.set(keyPath(at), lineColumn(text, node.offset));
    if (node.type === "object") {
      for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (key && value) walk(value, [...at, key.value as string]);
      }
    } else if (node.type === "array") {
      (node.children ?? []).forEach((child, i) => walk(child, [...at, i]));
    }
  };
  walk(tree, []);
  return out;
}

// The keys a strict object of the schema takes at a path of the value, for "expected one of".
function knownKeys(at: readonly (string | number)[]): string[] {
  // deno-lint-ignore no-explicit-any
  let schema: any = PolicyFileSchema;
  const unwrap = () => {
    while (schema?.type === "optional" || schema?.type === "union") {
      schema = schema.type === "optional"
        ? schema.wrapped
        // deno-lint-ignore no-explicit-any
        : schema.options.find((option: any) => option.type === "strict_object") ?? schema.options[0];
    }
  };
  for (const part of at) {
    unwrap();
    if (schema?.type === "strict_object") schema = schema.entries[part];
    else if (schema?.type === "array") schema = schema.item;
    else return [];
  }
  unwrap();
  return schema?.type === "strict_object" ? Object.keys(schema.entries) : [];
}

/**
 * Parses and validates one policy file's text as the layer `layer`. Throws
 * {@linkcode PolicyFileError} with every problem.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { parsePolicyFile } from "@toolfence/policy";
 * const layer = parsePolicyFile("toolfence.json", '{ // comments are fine\n "commands": { "deny": ["git push"] } }', "project");
 * console.log(layer.config.commands?.deny); // ["git push"]
 * ```
 */
export function parsePolicyFile(file: string, text: string, layer: PolicyLayerName): PolicyLayer {
  const parsed = parseJsonc(file, text);
  if (parsed.problems.length > 0 || parsed.tree === undefined) throw new PolicyFileError(parsed.problems);
  if (parsed.tree.type !== "object") {
    throw new PolicyFileError([{ file, line: 1, column: 1, key: "", message: "expected an object at the top level" }]);
  }
  const result = v.safeParse(PolicyFileSchema, parsed.value);
  if (!result.success) throw new PolicyFileError(issueProblems(file, text, parsed.tree, result.issues, knownKeys));
  return { name: layer, file, config: result.output as PolicyFile, text, positions: positions(text, parsed.tree) };
}

/**
 * Reads one policy file as the layer `layer`; `undefined` when it does not
 * exist. Any other failure to read it is an error.
 *
 * Requires `--allow-read` for the file.
 */
export async function readPolicyFile(file: string, layer: PolicyLayerName): Promise<PolicyLayer | undefined> {
  let text: string;
  try {
    text = await fsp.readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    // The managed file is the administrator's: a process that cannot tell
    // whether it exists must not run as if it did not. The user file is the
    // user's own, outside the workspace: a process whose runtime flags do not
    // reach it runs without it, and says so.
    if (layer === "managed" && isRuntimePermissionError(error)) {
      throw new PolicyFileError([{
        file,
        line: 1,
        column: 1,
        key: "",
        message: `the runtime flags do not allow reading the managed policy file, so it may not be skipped: ` +
          `add --allow-read=${file} under Deno (main.ts flags prints it) or --allow-fs-read=${file} under Node, ` +
          `or name another with --managed-config`,
      }]);
    }
    if (layer === "user" && isRuntimePermissionError(error)) {
      unreadable.add(file);
      return undefined;
    }
    throw new PolicyFileError([{
      file,
      line: 1,
      column: 1,
      key: "",
      message: `cannot be read (${code ?? (error as Error).message})`,
    }]);
  }
  return parsePolicyFile(file, text, layer);
}

const unreadable = new Set<string>();

/**
 * The user files this process was not allowed to read by its
 * runtime flags (Deno's `--allow-read`, Node's `--permission`), so that a
 * command line can say that they were not applied.
 */
export function unreadablePolicyFiles(): string[] {
  return [...unreadable];
}

/** Where the layers are read from. */
export interface PolicyFileLocations {
  /** The managed file (default `/etc/toolfence/config.json`). */
  managed?: string;
  /** `--config FILE`. */
  cli?: string;
  /** The project file (default `toolfence.json` at the workspace root). */
  project?: string;
  /** The user file (default `$XDG_CONFIG_HOME/toolfence/config.json`, else `~/.config/toolfence/config.json`). */
  user?: string;
  /**
   * Whether the files' examples run once the layers are merged (default
   * true): a failing one is a {@linkcode PolicyExampleError}.
   */
  examples?: boolean;
}

/** The default managed file. */
export const MANAGED_POLICY_FILE = "/etc/toolfence/config.json";

/** The name of the project file at the workspace root. */
export const PROJECT_POLICY_FILE = "toolfence.json";

/**
 * The user's policy file: `$XDG_CONFIG_HOME/toolfence/config.json`, else
 * `$HOME/.config/toolfence/config.json`; undefined without either variable.
 *
 * Requires `--allow-env=XDG_CONFIG_HOME,HOME` (without it there is no user file).
 */
export function userPolicyFile(env: Record<string, string | undefined> = safeEnv()): string | undefined {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, "toolfence", "config.json");
  const home = env.HOME;
  return home && path.isAbsolute(home) ? path.join(home, ".config", "toolfence", "config.json") : undefined;
}

function safeEnv(): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const name of ["XDG_CONFIG_HOME", "HOME"]) {
    try {
      out[name] = process.env[name];
    } catch {
      // Not allowed to read it: as if unset.
    }
  }
  return out;
}

/** The files of each layer for a workspace, with the defaults filled in. */
export function policyFileLocations(workdir: string, given: PolicyFileLocations = {}): PolicyFileLocations {
  return {
    managed: given.managed ?? MANAGED_POLICY_FILE,
    ...(given.cli === undefined ? {} : { cli: path.resolve(given.cli) }),
    project: given.project ?? path.join(workdir, PROJECT_POLICY_FILE),
    ...(given.user ?? userPolicyFile() ? { user: given.user ?? userPolicyFile() } : {}),
  };
}

/**
 * Reads every layer of the policy of the workspace `workdir` and merges
 * them. A `--config` file that does not exist is an error; the other layers
 * are optional. Throws {@linkcode PolicyFileError} for a broken file, and
 * `PolicyExampleError` when an example of the files fails.
 *
 * Requires `--allow-read` for the files (and `--allow-env=XDG_CONFIG_HOME,HOME` for the user file).
 *
 * @example
 * ```ts
 * import { loadPolicy } from "@toolfence/policy";
 * const rules = await loadPolicy(Deno.cwd(), { managed: "/nonexistent", user: "/nonexistent" });
 * console.log(rules.layers.map((layer) => layer.name));
 * ```
 */
export async function loadPolicy(workdir: string, given: PolicyFileLocations = {}): Promise<PolicyRules> {
  const where = policyFileLocations(workdir, given);
  const layers: PolicyLayer[] = [];
  for (const name of ["managed", "cli", "project", "user"] as const) {
    const file = where[name];
    if (file === undefined) continue;
    const layer = await readPolicyFile(file, name);
    if (layer === undefined && name === "cli") {
      throw new PolicyFileError([{ file, line: 1, column: 1, key: "", message: "the --config file does not exist" }]);
    }
    if (layer !== undefined) layers.push(layer);
  }
  const rules = PolicyRules.fromLayers(layers, workdir);
  if (given.examples !== false) await checkPolicyExamples(rules);
  return rules;
}
