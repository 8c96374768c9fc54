/**
 * Editing a policy file in place, keeping its comments and layout (through
 * `jsonc-parser`'s edit API): adding and removing rules, and the commented
 * starter file of `toolfence policy init`. Every edit is validated before it
 * is written, atomically.
 *
 * @module
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { applyEdits, findNodeAtLocation, modify, parseTree } from "jsonc-parser";
import { ToolError } from "@toolfence/core";
import { atomicWrite } from "@toolfence/internal";
import { parsePolicyFile } from "./load.ts";

/** Where a rule goes: a command list or a path list. */
export type RuleList =
  | { section: "commands"; list: "allow" | "ask" | "deny" }
  | { section: "paths"; list: "deny" | "readOnly" };

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" } };

function patternOf(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim();
  if (typeof value === "object" && value !== null && typeof (value as { pattern?: unknown }).pattern === "string") {
    return (value as { pattern: string }).pattern.trim();
  }
  return undefined;
}

function entries(text: string, where: RuleList): unknown[] {
  const tree = parseTree(text, [], { allowTrailingComma: true });
  const node = tree ? findNodeAtLocation(tree, [where.section, where.list]) : undefined;
  if (node?.type !== "array") return [];
  return (node.children ?? []).map((child) => {
    if (child.type === "string") return child.value;
    const pattern = findNodeAtLocation(child, ["pattern"]);
    return pattern ? { pattern: pattern.value } : undefined;
  });
}

/**
 * The text of a policy file with `pattern` added to a rule list (nothing
 * changes when it is there already). Throws `PolicyFileError` when the
 * result would not be a valid policy file.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { addRuleToText } from "@toolfence/policy";
 * const text = addRuleToText('{\n  // ours\n  "commands": { "deny": [] }\n}\n', { section: "commands", list: "deny" }, "git push");
 * console.log(text.includes("// ours") && text.includes('"git push"')); // true
 * ```
 */
export function addRuleToText(text: string, where: RuleList, pattern: string, file = "toolfence.json"): string {
  const wanted = pattern.trim();
  if (entries(text, where).some((entry) => patternOf(entry) === wanted)) return text;
  const source = text.trim() === "" ? "{}\n" : text;
  const out = applyEdits(
    source,
    modify(source, [where.section, where.list, -1], wanted, { ...FORMAT, isArrayInsertion: true }),
  );
  parsePolicyFile(file, out, "project");
  return out;
}

/**
 * The text of a policy file with every rule of `pattern` removed from a rule
 * list, and how many were removed.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { removeRuleFromText } from "@toolfence/policy";
 * const { text, removed } = removeRuleFromText('{ "commands": { "deny": ["git push", "rm"] } }', { section: "commands", list: "deny" }, "git push");
 * console.log(removed, text); // 1 { "commands": { "deny": ["rm"] } }
 * ```
 */
export function removeRuleFromText(
  text: string,
  where: RuleList,
  pattern: string,
  file = "toolfence.json",
): { text: string; removed: number } {
  const wanted = pattern.trim();
  let out = text;
  let removed = 0;
  for (;;) {
    const index = entries(out, where).findIndex((entry) => patternOf(entry) === wanted);
    if (index < 0) break;
    out = applyEdits(out, modify(out, [where.section, where.list, index], undefined, FORMAT));
    removed++;
  }
  if (removed > 0) parsePolicyFile(file, out, "project");
  return { text: out, removed };
}

// The file the write will replace, read without following a link at its name: atomicWrite replaces a link there,
// never writes through it, and a read through it would carry the text of the file it leads to (outside the
// workspace, for the project's file a command may have made a link) into the file written.
function readOrEmpty(file: string): Promise<string> {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return Promise.resolve("");
    if (code === "ELOOP" || code === "EMLINK") throw linkedPolicyFile(file, error);
    throw error;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) {
      throw new ToolError(`The policy file ${file} is not a regular file; nothing was changed`, {
        code: "not_a_file",
        details: { path: file },
      });
    }
    return Promise.resolve(fs.readFileSync(fd, "utf8"));
  } finally {
    fs.closeSync(fd);
  }
}

const NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

function linkedPolicyFile(file: string, cause: unknown): ToolError {
  return new ToolError(`The policy file ${file} is a symlink, which is not followed; nothing was changed`, {
    code: "symlink_target",
    recoveryHint: "Name the file the link leads to, or replace the link with the file.",
    details: { path: file },
    cause,
  });
}

/**
 * Adds a rule to the policy file `file` (made when missing), keeping its
 * comments and layout; returns whether the file changed.
 *
 * Requires `--allow-read` and `--allow-write` for the file's folder.
 *
 * @example
 * ```ts
 * import { addRuleToFile } from "@toolfence/policy";
 * const file = `${await Deno.makeTempDir()}/toolfence.json`;
 * await addRuleToFile(file, { section: "commands", list: "allow" }, "npm run lint");
 * ```
 */
export async function addRuleToFile(file: string, where: RuleList, pattern: string): Promise<boolean> {
  const before = await readOrEmpty(file);
  const after = addRuleToText(before, where, pattern, file);
  if (after === before) return false;
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await atomicWrite(file, after);
  return true;
}

/**
 * Removes a rule from the policy file `file`; returns how many entries went.
 *
 * Requires `--allow-read` and `--allow-write` for the file's folder.
 *
 * @example
 * ```ts
 * import { removeRuleFromFile } from "@toolfence/policy";
 * const file = `${await Deno.makeTempDir()}/toolfence.json`;
 * console.log(await removeRuleFromFile(file, { section: "commands", list: "allow" }, "npm run lint")); // 0
 * ```
 */
export async function removeRuleFromFile(file: string, where: RuleList, pattern: string): Promise<number> {
  const before = await readOrEmpty(file);
  const { text, removed } = removeRuleFromText(before, where, pattern, file);
  if (removed > 0) await atomicWrite(file, text);
  return removed;
}

/**
 * Writes the policy file `file` whole (atomically, creating its folder): for
 * `toolfence policy init`, which writes {@linkcode STARTER_POLICY}.
 *
 * Requires `--allow-read` and `--allow-write` for the file's folder.
 *
 * @example
 * ```ts
 * import { STARTER_POLICY, writePolicyFile } from "@toolfence/policy";
 * await writePolicyFile(`${await Deno.makeTempDir()}/.toolfence/config.json`, STARTER_POLICY);
 * ```
 */
export async function writePolicyFile(file: string, text: string): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await atomicWrite(file, text);
}

/**
 * The commented starter file written by `toolfence policy init`.
 *
 * @example
 * ```ts
 * import { parsePolicyFile, STARTER_POLICY } from "@toolfence/policy";
 * parsePolicyFile("toolfence.json", STARTER_POLICY, "project");
 * ```
 */
export const STARTER_POLICY = `{
  // The toolfence policy of this project. JSON with comments; checked against
  // the schema when the server starts (a broken file stops it).
  "$schema": "https://jsr.io/@toolfence/policy/toolfence.schema.json",

  "commands": {
    // Run without asking (the command analysis still applies: redirections,
    // wrappers and flags that write still ask).
    "allow": ["npm run lint", "npm run test:*"],
    // Always ask a person, even when allowlisted.
    "ask": ["git commit"],
    // Never run, whatever wraps them (env, sudo, timeout, bash -c, xargs...).
    "deny": ["git push*", "rm -rf"]
  },

  "paths": {
    // Hidden from every tool and from the sandbox.
    "deny": ["**/.env", "**/.env.*", "secrets/**"],
    // Readable, never written.
    "readOnly": ["vendor/**"]
  },

  "tools": {
    // Tools (or fnmatch patterns) that are not served at all.
    "disable": [],
    // Tools that always need a person's approval.
    "approve": []
  },

  "sandbox": {
    // auto | required | off
    "mode": "auto"
  },

  // What an answer from an MCP client may do: refuse | once | grant.
  "answers": { "elicitation": "once" },

  // Decisions the rules must give: checked on load and by \`toolfence policy test\`.
  "examples": [
    { "command": "git push origin main", "expect": "deny" },
    { "command": "env git push", "expect": "deny" },
    { "command": "ls -la", "expect": "allow" },
    { "path": "app/.env", "expect": "deny" }
  ]
}
`;
