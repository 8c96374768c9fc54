/**
 * Protected paths: files inside the workspace that change what programs do
 * later (git's configuration and hooks, package-manager settings, shell
 * start-up files, editor, agent and MCP configuration, toolfence's own
 * configuration). Creating, changing, moving or deleting one always asks a
 * person, even when the file is new, and inside the OS sandbox they are
 * read-only. The list is data: pass your own patterns to extend it.
 *
 * Patterns are globs relative to the workspace root, matched case-insensitively
 * (a case-insensitive file system reads `.GIT/config` as `.git/config`), with
 * `**` for any number of folders and `*` within one name.
 *
 * @module
 */
import { pathGlobMatcher } from "@toolfence/internal";

/**
 * The built-in protected paths, relative to the workspace root.
 *
 * @example
 * ```ts
 * import { DEFAULT_PROTECTED_PATHS } from "@toolfence/policy";
 * console.log(DEFAULT_PROTECTED_PATHS.includes("**\/.npmrc")); // true
 * ```
 */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = Object.freeze([
  // git: configuration names programs (diff.external, core.fsmonitor, filters),
  // hooks run on commit and checkout, attributes pick drivers, a `.git` file
  // points at another git folder, and `commondir` names the folder git takes
  // its configuration and hooks from.
  "**/.git",
  "**/.git/config",
  "**/.git/config.worktree",
  "**/.git/commondir",
  "**/.git/hooks/**",
  "**/.git/info/**",
  "**/.git/modules/**/config",
  "**/.git/modules/**/commondir",
  "**/.git/modules/**/hooks/**",
  "**/.git/worktrees/*/config*",
  "**/.git/worktrees/*/commondir",
  "**/.gitmodules",
  "**/.gitattributes",
  // hook managers: what an installed hook runs on the next commit.
  "**/.husky/**",
  "**/.githooks/**",
  "**/.pre-commit-config.yaml",
  "**/.pre-commit-config.yml",
  "**/lefthook.{yml,yaml,toml,json}",
  "**/.lefthook.{yml,yaml,toml,json}",
  "**/lefthook-local.{yml,yaml,toml,json}",
  "**/.lefthook-local.{yml,yaml,toml,json}",
  "**/.lefthook/**",
  "**/.overcommit.yml",
  // package managers: registries, scripts, credentials helpers.
  "**/.npmrc",
  "**/.yarnrc",
  "**/.yarnrc.yml",
  "**/bunfig.toml",
  "**/.pypirc",
  "**/pip.conf",
  "**/pip.ini",
  "**/.cargo/config",
  "**/.cargo/config.toml",
  // shell start-up files.
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
  ".zlogout",
  ".kshrc",
  ".cshrc",
  ".tcshrc",
  ".config/fish/**",
  ".envrc",
  // editors, dev containers (their commands run when the folder is opened), agents and MCP clients.
  "**/.vscode/**",
  "**/.idea/**",
  "**/.devcontainer/**",
  "**/.devcontainer.json",
  ".mcp.json",
  ".claude/**",
  ".cursor/**",
  ".gemini/**",
  ".codex/**",
  // toolfence itself.
  "toolfence.json",
  ".toolfence/**",
]);

/**
 * Whether `relativePath` (relative to the workspace root, `/`-separated, no
 * `.` or `..` components) is a protected path.
 *
 * Needs no permissions.
 *
 * @param relativePath The path relative to the workspace root.
 * @param patterns The protected-path globs; default {@linkcode DEFAULT_PROTECTED_PATHS}.
 * @returns Whether the path is protected.
 *
 * @example
 * ```ts
 * import { isProtectedPath } from "@toolfence/policy";
 * console.log(isProtectedPath(".git/hooks/pre-commit")); // true
 * console.log(isProtectedPath("src/main.ts")); // false
 * ```
 */
export function isProtectedPath(
  relativePath: string,
  patterns: readonly string[] = DEFAULT_PROTECTED_PATHS,
): boolean {
  if (relativePath === "" || relativePath === ".") return false;
  return pathGlobMatcher(patterns)(relativePath);
}

/**
 * Whether an operation on `relativePath` can create, change or remove a
 * protected path: the path itself is protected, or it is a folder under which
 * a protected path can lie (the workspace root, `.git`, `.vscode`, any folder
 * for the `**` patterns, so nearly every folder). Moving, copying or deleting
 * a folder for which this is true must look at the entries under it.
 *
 * Needs no permissions.
 *
 * @param relativePath The path relative to the workspace root (`""` for the root).
 * @param patterns The protected-path globs; default {@linkcode DEFAULT_PROTECTED_PATHS}.
 * @returns Whether a protected path is or can be at or below `relativePath`.
 *
 * @example
 * ```ts
 * import { mayContainProtectedPath } from "@toolfence/policy";
 * console.log(mayContainProtectedPath(".git")); // true
 * console.log(mayContainProtectedPath("src")); // true: src/.npmrc would be protected
 * ```
 */
export function mayContainProtectedPath(
  relativePath: string,
  patterns: readonly string[] = DEFAULT_PROTECTED_PATHS,
): boolean {
  if (relativePath === "" || relativePath === ".") return patterns.length > 0;
  if (isProtectedPath(relativePath, patterns)) return true;
  // A descendant that would match: try a probe name under the folder for each
  // pattern's last component (`.git/hooks/x`, `pkg/.npmrc`).
  const matcher = pathGlobMatcher(patterns);
  for (const pattern of patterns) {
    const parts = pattern.split("/");
    for (let depth = 1; depth <= parts.length; depth++) {
      const tail = parts.slice(parts.length - depth).map((part) => part.replaceAll("*", "x") || "x").join("/");
      if (matcher(`${relativePath}/${tail}`)) return true;
    }
  }
  return false;
}
