/**
 * The environment shell commands run with: a short allowlist of the caller's
 * variables, never the rest (tokens, keys and loader tricks stay out), plus
 * the variables the model passes, minus those that would let an allowed
 * command run code nobody allowed.
 *
 * @module
 */

import fs from "node:fs";
import path from "node:path";
import process from "node:process";
import { ToolError } from "@toolfence/core";
import type { Fence } from "@toolfence/core";
import { isWithin } from "@toolfence/internal";

/**
 * The caller's variables a command may see; everything else is dropped.
 * Tools name them in their declared needs (`env`).
 *
 * @example
 * ```ts
 * import { INHERITED_VARIABLES } from "@toolfence/policy";
 * console.log(INHERITED_VARIABLES.includes("PATH")); // true
 * ```
 */
export const INHERITED_VARIABLES: readonly string[] = Object.freeze([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "LC_COLLATE",
  "LC_MESSAGES",
  "LC_NUMERIC",
  "LC_TIME",
  "LC_MONETARY",
  "LC_PAPER",
  "LC_NAME",
  "LC_ADDRESS",
  "LC_TELEPHONE",
  "LC_MEASUREMENT",
  "LC_IDENTIFICATION",
  "TERM",
  "TZ",
]);

// Variables that make an otherwise harmless program load or run other code: the
// dynamic loader, shell start-up and function import, the program search path,
// the places git, less, vim, rg, tar, OpenSSL and friends read configuration
// (and so commands) from, and interpreter options. The command analysis judges
// the command text only, so letting the model set these would reach around it.
// Any other variable is shown to the analysis as an assignment before the
// command (see `envAssignments`), which asks like `FOO=1 ls` does.
const FORBIDDEN_NAMES = new Set([
  "PATH",
  "HOME",
  "BASH_ENV",
  "ENV",
  "ZDOTDIR",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "PROMPT_COMMAND",
  "IFS",
  "CDPATH",
  "GLOBIGNORE",
  "EXECIGNORE",
  "INPUTRC",
  "SHELL",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "MANPAGER",
  "MANOPT",
  "BROWSER",
  "LESS",
  "LESSOPEN",
  "LESSCLOSE",
  "LESSKEY",
  "EXINIT",
  "VIMINIT",
  "GVIMINIT",
  "MYVIMRC",
  "RIPGREP_CONFIG_PATH",
  "TAR_OPTIONS",
  "CURL_HOME",
  "WGETRC",
  "GCONV_PATH",
  "LOCPATH",
  "NLSPATH",
  "HOSTALIASES",
  "RESOLV_HOST_CONF",
  "SSLKEYLOGFILE",
  "CLASSPATH",
  "PHPRC",
  "TMPDIR",
  "SSH_AUTH_SOCK",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
]);
const FORBIDDEN_PREFIXES = [
  "LD_",
  "DYLD_",
  "BASH_",
  "GIT_",
  "XDG_",
  "GLIBC_",
  "MALLOC_",
  "OPENSSL_",
  "NODE_",
  "NPM_CONFIG_",
  "YARN_",
  "BUN_",
  "DENO_",
  "PIP_",
  "PYTHON",
  "PERL",
  "RUBY",
  "LUA_",
  "PHP_",
  "JAVA_",
  "_JAVA_",
  "JDK_",
];

// A repository's own .git/config can make allowlisted read-only git commands
// start programs (core.fsmonitor on `git status`, hooks, a pager). Command-line
// level configuration outranks the repository's, so these are switched off for
// every command. diff.external and textconv drivers cannot be neutralised this
// way without breaking plain `git diff`; the OS sandbox contains those.
const GIT_OVERRIDES: readonly [string, string][] = [
  ["core.fsmonitor", "false"],
  ["core.hooksPath", "/dev/null"],
  ["core.pager", "cat"],
];

function gitOverrides(): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(GIT_OVERRIDES.length) };
  GIT_OVERRIDES.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why the model may not set `name`, or undefined when it may. */
export function forbiddenVariableReason(name: string): string | undefined {
  if (!NAME.test(name)) return "it is not a valid variable name (letters, digits and _, not starting with a digit)";
  const upper = name.toUpperCase();
  if (FORBIDDEN_NAMES.has(upper) || FORBIDDEN_PREFIXES.some((p) => upper.startsWith(p))) {
    return "it changes which programs, libraries or configuration a command loads";
  }
  return undefined;
}

/**
 * The model's variables as shell assignments (`NAME='value' `), to put before
 * the command text that the command analysis judges; empty without variables.
 */
export function envAssignments(extra: Readonly<Record<string, string>> = {}): string {
  return Object.entries(extra).map(([name, value]) => `${name}='${value.replaceAll("'", "'\\''")}' `).join("");
}

/** Where commands look for programs when the caller's PATH leaves them none. */
const DEFAULT_SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * The caller's PATH without the folders whose programs the project or the
 * agent chose: an entry that is not absolute (`.`, an empty one, as in a
 * trailing `:`, `node_modules/.bin`) is looked up from the folder the command
 * runs in, which lies in the workspace, and an absolute one inside `areas`
 * (the workspace, the temp dir; by its real path) holds what was put there.
 * Through either, an allowlisted `ls` would start an `ls` the repository
 * ships, a program no rule judged, with or without the sandbox.
 */
function searchPath(value: string, areas: readonly string[]): string {
  const kept = value.split(":").filter((entry) => {
    if (!path.isAbsolute(entry)) return false;
    let real = path.resolve(entry);
    try {
      real = fs.realpathSync(real);
    } catch {
      // A folder that does not exist holds no program now; judged as spelled.
    }
    return !areas.some((area) => isWithin(real, area) || isWithin(path.resolve(entry), area));
  });
  return kept.length > 0 ? kept.join(":") : DEFAULT_SEARCH_PATH;
}

/**
 * Builds the environment of a command: the allowlisted caller variables the
 * fence lets us read (PATH without the folders of the workspace and the temp
 * dir, nor relative ones: {@linkcode searchPath}), `TMPDIR` pointing at the
 * session temp dir, then the model's `extra` variables. Throws
 * `forbidden_env` (kind `policy`) naming the first variable the model may not
 * set.
 */
export function commandEnvironment(
  fence: Fence,
  tempDir: string,
  extra: Readonly<Record<string, string>> = {},
  workspace?: string,
): Record<string, string> {
  for (const [name, value] of Object.entries(extra)) {
    const why = forbiddenVariableReason(name);
    if (why !== undefined) {
      throw new ToolError(`The variable ${name} cannot be set through env: ${why}`, {
        code: "forbidden_env",
        kind: "policy",
        status: "skipped",
        recoveryHint: `Call again without ${name} in env.`,
        details: { variable: name },
      });
    }
    if (value.includes("\0")) {
      throw new ToolError(`The value of ${name} contains a NUL byte`, {
        code: "invalid_env",
        kind: "semantic",
        recoveryHint: `Remove the NUL byte from ${name}.`,
        details: { variable: name },
      });
    }
  }
  const env: Record<string, string> = {};
  for (const name of INHERITED_VARIABLES) {
    // Asking the fence first keeps Deno from prompting for each variable.
    if (!fence.query("env", name).allowed) continue;
    let value: string | undefined;
    try {
      value = process.env[name];
    } catch {
      // The runtime refused after all: the variable is simply not passed on.
    }
    if (value !== undefined) env[name] = value;
  }
  env.PATH = searchPath(env.PATH ?? DEFAULT_SEARCH_PATH, workspace === undefined ? [tempDir] : [workspace, tempDir]);
  env.TMPDIR = tempDir;
  return { ...env, ...extra, ...gitOverrides() };
}
