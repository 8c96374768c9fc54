/**
 * The environment shell commands run with: a short allowlist of the caller's
 * variables, never the rest (tokens, keys and loader tricks stay out), plus
 * the variables the model passes, minus those that would let an allowed
 * command run code nobody allowed.
 *
 * @module
 */

import process from "node:process";
import { ToolError } from "../../core/errors.ts";
import type { Fence } from "../../policy/fence.ts";

/** The caller's variables a command may see; everything else is dropped. */
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
// the places git, less and friends read configuration (and commands) from, and
// interpreter options. The allowlist of the command analysis judges the command
// text only, so letting the model set these would reach around it.
const FORBIDDEN_NAMES = new Set([
  "PATH",
  "HOME",
  "XDG_CONFIG_HOME",
  "XDG_CONFIG_DIRS",
  "XDG_DATA_HOME",
  "XDG_DATA_DIRS",
  "BASH_ENV",
  "ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "PROMPT_COMMAND",
  "IFS",
  "CDPATH",
  "GLOBIGNORE",
  "EXECIGNORE",
  "BASH_XTRACEFD",
  "BASH_LOADABLES_PATH",
  "INPUTRC",
  "SHELL",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "MANPAGER",
  "MANOPT",
  "BROWSER",
  "LESSOPEN",
  "LESSCLOSE",
  "LESSKEY",
  "GCONV_PATH",
  "LOCPATH",
  "NLSPATH",
  "HOSTALIASES",
  "RESOLV_HOST_CONF",
  "MALLOC_CHECK_",
  "NODE_OPTIONS",
  "NODE_PATH",
  "NODE_REPL_EXTERNAL_MODULE",
  "PYTHONPATH",
  "PYTHONSTARTUP",
  "PYTHONHOME",
  "PYTHONINSPECT",
  "PYTHONUSERBASE",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "PERL5DB",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "CLASSPATH",
  "TMPDIR",
  "SSH_AUTH_SOCK",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "DENO_DIR",
]);
const FORBIDDEN_PREFIXES = [
  "LD_",
  "DYLD_",
  "BASH_FUNC_",
  "GIT_",
  "GLIBC_",
  "MALLOC_",
  "NPM_CONFIG_",
  "YARN_",
  "PIP_",
  "DENO_",
  "PERL_",
  "PYTHON",
];

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
 * Builds the environment of a command: the allowlisted caller variables the
 * fence lets us read, `TMPDIR` pointing at the session temp dir, then the
 * model's `extra` variables. Throws `forbidden_env` (kind `policy`) naming the
 * first variable the model may not set.
 */
export function commandEnvironment(
  fence: Fence,
  tempDir: string,
  extra: Readonly<Record<string, string>> = {},
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
  env.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  env.TMPDIR = tempDir;
  return { ...env, ...extra };
}
