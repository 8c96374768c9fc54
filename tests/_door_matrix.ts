// The path matrix of the file door, shared by the library run
// (tests/policy/door_matrix_test.ts) and the MCP runs over stdio and HTTP
// (tests/adapters/door_matrix_mcp_test.ts): a planted tree with a unique
// marker in every protected file, the tools that take a path (found from the
// registry: a string argument with a path-like name in a tool's input schema,
// of a tool that needs the workspace), every rule × every spelling, and the
// checks every call must pass whatever it answered.

import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { AnyTool } from "../core/mod.ts";

/** What no output may ever hold: planted in every file the caller may not read. */
export const SECRET = `SECRET-${randomBytes(8).toString("hex")}`;
/** In the files the caller may read but not change (read-only, protected): they must stay as planted. */
export const KEEP = `KEEP-${randomBytes(8).toString("hex")}`;
/** In the name of a file the policy hides (`*.hidden`): no listing may name it. */
export const HIDDEN_NAME = `hid${randomBytes(4).toString("hex")}`;
/** The text a write tool writes: it must never land in a protected place. */
export const PWNED = "PWNED-by-the-matrix";
/** The text in every planted file that edit_file's old_text names, so an edit that gets through changes it. */
export const OLD_TEXT = "replace-me";

/** The policy file of the matrix (paths relative to the workspace). */
export const POLICY = {
  paths: { deny: ["**/.env", "secrets/**", "**/*.hidden"], readOnly: ["vendor/**"] },
};

/** The rules a path can break. */
export type Rule = "outside" | "denied" | "hidden" | "read-only" | "protected" | "tenant";

/** One planted tree: `root/ws` is the workspace (tenant `ws` under the tenant root `root`). */
export interface Layout {
  base: string;
  /** The tenant root. */
  root: string;
  /** The workspace. */
  ws: string;
  /** Files whose content must stay exactly as planted, by real path. */
  planted: Map<string, string>;
  /** Folders whose entries must stay exactly as planted (nothing created in them, nothing removed). */
  sealed: Map<string, string>;
  /** The policy file (for `--config`). */
  policyFile: string;
  /** Paths that must never come to exist: spellings of a rule in a letter case that names nothing. */
  absent: string[];
  /** The planted symlinks (name in the workspace, target): a tool may legitimately move or delete a link itself. */
  links: [string, string][];
  close(): Promise<void>;
}

/** Plants the tree in a fresh temp folder. */
export async function plant(): Promise<Layout> {
  const base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-door-")));
  const root = join(base, "tenants");
  const ws = join(root, "ws");
  const planted = new Map<string, string>();
  const put = async (file: string, text: string) => {
    await mkdir(join(file, ".."), { recursive: true });
    await writeFile(file, text);
    planted.set(file, text);
  };
  const secret = (what: string) => `${SECRET} ${what} ${OLD_TEXT}\n`;
  const keep = (what: string) => `${KEEP} ${what} ${OLD_TEXT}\n`;
  await put(join(base, "out", "secret.txt"), secret("outside"));
  await put(join(root, "other", "secret.txt"), secret("another tenant"));
  await put(join(ws, "app", ".env"), secret("denied file"));
  await put(join(ws, "secrets", "key.txt"), secret("denied folder"));
  await put(join(ws, "notes", `${HIDDEN_NAME}.hidden`), secret("hidden by name"));
  await put(join(base, "out", "f.txt"), secret("outside, raced"));
  await put(join(ws, "secrets", "f.txt"), secret("denied, raced"));
  await put(join(ws, "vendor", "lib.js"), keep("read-only"));
  await put(join(ws, ".npmrc"), keep("protected"));
  await put(join(ws, ".git", "config"), keep("protected"));
  // The same rules in another letter case: distinct files here, the same file where the file system folds
  // case (macOS, Windows), so the rules match them case-insensitively everywhere.
  await put(join(ws, "app", ".ENV"), secret("denied file, other case"));
  await put(join(ws, "Secrets", "key.txt"), secret("denied folder, other case"));
  await put(join(ws, "Vendor", "lib.js"), keep("read-only, other case"));
  await put(join(ws, ".NPMRC"), keep("protected, other case"));
  await writeFile(join(ws, "app", "main.ts"), `console.log("${OLD_TEXT}");\n`);
  await writeFile(join(ws, "notes", "plain.txt"), `plain ${OLD_TEXT}\n`);
  await writeFile(join(ws, "ok.txt"), `ok ${OLD_TEXT}\n`);
  await mkdir(join(ws, "race", "real"), { recursive: true });
  await writeFile(join(ws, "race", "real", "f.txt"), `benign ${OLD_TEXT}\n`);
  const links: [string, string][] = [
    ["l_out_file", join(base, "out", "secret.txt")],
    ["l_out_dir", join(base, "out")],
    ["l_out_chain", "l_out_chain2"],
    ["l_out_chain2", "l_out_file"],
    ["l_deny_file", join(ws, "app", ".env")],
    ["l_deny_rel", "app/.env"],
    ["l_deny_dir", "secrets"],
    ["l_deny_chain", "l_deny_chain2"],
    ["l_deny_chain2", "l_deny_dir"],
    ["l_hidden", `notes/${HIDDEN_NAME}.hidden`],
    ["l_tenant", join(root, "other", "secret.txt")],
    ["l_tenant_dir", "../other"],
    ["l_ro", "vendor/lib.js"],
    ["l_ro_dir", "vendor"],
    ["l_prot", ".npmrc"],
    ["l_git", ".git"],
  ];
  for (const [name, target] of links) await symlink(target, join(ws, name));
  const policyFile = join(base, "policy.json");
  await writeFile(policyFile, JSON.stringify(POLICY));
  const sealed = new Map<string, string>();
  // Not .git: creating a new entry in it is allowed (only named paths in it are protected), and a
  // sandboxed command's mount points appear there while it runs.
  const inWorkspace = ["secrets", "vendor", "Secrets", "Vendor"].map((f) => join(ws, f));
  for (const folder of [join(base, "out"), join(root, "other"), ...inWorkspace]) {
    sealed.set(folder, treeOf(folder));
  }
  return {
    base,
    root,
    ws,
    planted,
    sealed,
    policyFile,
    links,
    absent: ["app/.Env", "SECRETS", `notes/${HIDDEN_NAME}.HIDDEN`, "VENDOR", ".Npmrc", ".GIT"].map((p) => join(ws, p)),
    close: () => rm(base, { recursive: true, force: true }),
  };
}

function treeOf(folder: string): string {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const stat = lstatSync(full);
      out.push(`${rel}${name}${stat.isDirectory() ? "/" : ""}`);
      if (stat.isDirectory()) walk(full, `${rel}${name}/`);
    }
  };
  walk(folder, "");
  return out.join("\n");
}

/**
 * The spellings of each rule's path, relative to the workspace or absolute,
 * letter case included: the rules hold case-insensitively on every system.
 */
export function spellings(layout: Layout): Record<Rule, string[]> {
  const { base, root, ws } = layout;
  return {
    outside: [
      `${base}/out/secret.txt`,
      "../../out/secret.txt",
      "app/../../../out/secret.txt",
      `/${base}/out/secret.txt`,
      `${base}//out//secret.txt`,
      `${base}/out/secret.txt/`,
      `${base}/out`,
      `${base}/out/`,
      "l_out_file",
      "l_out_dir",
      "l_out_dir/secret.txt",
      "l_out_dir/",
      "l_out_chain",
      "/etc/passwd",
    ],
    denied: [
      "app/.env",
      `${ws}/app/.env`,
      "./app/../app/.env",
      "app//.env",
      "app/.env/",
      `/${ws}/app/.env`,
      "secrets",
      "secrets/",
      "secrets/key.txt",
      "./secrets//key.txt",
      "l_deny_file",
      "l_deny_rel",
      "l_deny_dir",
      "l_deny_dir/key.txt",
      "l_deny_dir/",
      "l_deny_chain",
      "l_deny_chain/key.txt",
      `notes/${HIDDEN_NAME}.hidden`,
      "l_hidden",
      // Letter case: an existing file and folder in another case, and spellings that exist in no case.
      "app/.ENV",
      "app/.Env",
      "Secrets/key.txt",
      "SECRETS/key.txt",
      "Secrets",
      `notes/${HIDDEN_NAME}.HIDDEN`,
    ],
    // The folders that hold hidden entries: listings and searches of them must leave the entries out.
    hidden: [".", "./", ws, `${ws}/`, "notes", "notes/", "app", `${ws}//notes`],
    "read-only": [
      "vendor/lib.js",
      `${ws}/vendor/lib.js`,
      "vendor//lib.js",
      "vendor/",
      "l_ro",
      "l_ro_dir/lib.js",
      "Vendor/lib.js",
      "VENDOR/lib.js",
    ],
    protected: [
      ".npmrc",
      `${ws}/.npmrc`,
      ".git/config",
      ".git",
      "l_prot",
      "l_git/config",
      "./.git//config",
      ".NPMRC",
      ".Npmrc",
      ".GIT/config",
    ],
    tenant: [
      "../other/secret.txt",
      `${root}/other/secret.txt`,
      "../other",
      "..",
      `${root}/`,
      "l_tenant",
      "l_tenant_dir",
      "l_tenant_dir/secret.txt",
      `${ws}/../other/secret.txt`,
    ],
  };
}

/**
 * Whether the rule's path must be refused outright, not merely leave every
 * protected thing unchanged: for the rules that forbid reaching the path at
 * all, unless the path ends at a planted link (move, copy, delete and
 * file_info act on a link itself, which lies in the workspace).
 */
export function mustRefuse(rule: Rule, spelled: string): boolean {
  const last = spelled.replace(/\/+$/, "").split("/").at(-1) ?? "";
  return (rule === "outside" || rule === "denied" || rule === "tenant") && !last.startsWith("l_");
}

/** Puts back the planted links a call legitimately moved, replaced or deleted. */
export function restoreLinks(layout: Layout): void {
  for (const [name, target] of layout.links) {
    const at = join(layout.ws, name);
    let intact = false;
    try {
      intact = lstatSync(at).isSymbolicLink() && readlinkSync(at) === target;
    } catch {
      intact = false;
    }
    if (intact) continue;
    rmSync(at, { recursive: true, force: true });
    symlinkSync(target, at);
  }
}

const PATH_NAME = /^(path|paths|src|dst|directory|dir|folder|file|cwd|root)$|_(path|file|dir)$/;

/** A tool and its path-taking arguments, from its input schema. */
export interface PathTool {
  tool: AnyTool;
  /** The string properties that name a path. */
  pathArgs: string[];
}

interface SchemaProperty {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  default?: unknown;
}

/** The registered tools that take a path: a path-named string argument, and a need on the workspace. */
export function pathTools(tools: readonly AnyTool[]): PathTool[] {
  const found: PathTool[] = [];
  for (const tool of tools) {
    const properties = (tool.inputSchema.properties ?? {}) as Record<string, SchemaProperty>;
    const pathArgs = Object.entries(properties)
      .filter(([name, schema]) => PATH_NAME.test(name) && typesOf(schema).includes("string"))
      .map(([name]) => name);
    const needs = tool.needs ?? {};
    const usesWorkspace = [needs.read, needs.write].some((list) => list?.includes("workspace"));
    if (pathArgs.length > 0 && usesWorkspace) found.push({ tool, pathArgs });
  }
  return found;
}

function typesOf(schema: SchemaProperty): string[] {
  return schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
}

// Values for the required arguments that are not under test, by name (a write must have
// something to write, an edit something to replace); anything else gets one from its type.
const ARGUMENT_VALUES: Record<string, unknown> = {
  content: PWNED,
  old_text: OLD_TEXT,
  new_text: PWNED,
  pattern: "*",
  patch: `*** Begin Patch\n*** Add File: pwned.txt\n+${PWNED}\n*** End Patch\n`,
  // The command tools take a working folder: what is judged here is the folder, not a command's reads.
  command: "pwd",
  code: "1",
  text: OLD_TEXT,
};

/**
 * The arguments of one call: `spelled` in `arg`, the tool's other path
 * arguments on fresh paths (the first an existing file, the rest free), the
 * other required arguments from {@linkcode ARGUMENT_VALUES} or their type.
 */
export async function argumentsFor(
  layout: Layout,
  entry: PathTool,
  arg: string,
  spelled: string,
  serial: number,
): Promise<Record<string, unknown>> {
  const schema = entry.tool.inputSchema as { properties?: Record<string, SchemaProperty>; required?: string[] };
  const args: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    if (entry.pathArgs.includes(name)) continue;
    const property = schema.properties?.[name] ?? {};
    args[name] = name in ARGUMENT_VALUES
      ? ARGUMENT_VALUES[name]
      : property.enum?.[0] ?? valueOfType(typesOf(property)[0], property);
  }
  if (entry.tool.name === "grep") args.pattern = "[A-Z]";
  let first = true;
  for (const other of entry.pathArgs) {
    if (other === arg) continue;
    const fresh = `fresh/${serial}-${other}.txt`;
    if (first && entry.pathArgs.indexOf(other) < entry.pathArgs.indexOf(arg)) {
      await mkdir(join(layout.ws, "fresh"), { recursive: true });
      await writeFile(join(layout.ws, fresh), `fresh ${OLD_TEXT}\n`);
    }
    first = false;
    args[other] = fresh;
  }
  args[arg] = spelled;
  return args;
}

function valueOfType(type: string | undefined, property: SchemaProperty): unknown {
  if (type === "boolean") return false;
  if (type === "integer" || type === "number") return property.minimum ?? 1;
  if (type === "array") return [];
  if (type === "object") return {};
  return OLD_TEXT;
}

/**
 * The checks of one call, whatever it answered: its whole text (output,
 * error, details) holds no secret and names no hidden file; every planted
 * file is as planted; every sealed folder holds what it held.
 */
export function checkCall(layout: Layout, label: string, answerText: string, spelled = ""): string[] {
  const problems: string[] = [];
  if (answerText.includes(SECRET)) problems.push(`${label}: the answer holds protected content`);
  // A refusal may repeat the path it was given; any other mention of a hidden name is a leak.
  if (!spelled.includes(HIDDEN_NAME) && answerText.includes(HIDDEN_NAME)) {
    problems.push(`${label}: the answer names a hidden file`);
  }
  for (const [file, text] of layout.planted) {
    let now: string | undefined;
    try {
      now = readFileSync(file, "utf8");
    } catch {
      now = undefined;
    }
    if (now !== text) problems.push(`${label}: ${file} was changed or removed`);
  }
  for (const made of layout.absent) {
    if (!existsSync(made)) continue;
    problems.push(`${label}: ${made} was created`);
    rmSync(made, { recursive: true, force: true });
  }
  for (const [folder, tree] of layout.sealed) {
    let now: string | undefined;
    try {
      now = treeOf(folder);
    } catch {
      now = undefined;
    }
    if (now !== tree) problems.push(`${label}: the entries of ${folder} changed to ${JSON.stringify(now)}`);
  }
  return problems;
}
