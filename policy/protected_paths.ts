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
  // other version control: Mercurial's repository configuration names hooks and extensions (Python files) that run
  // on every hg command, and `sharedpath` the repository it takes them from; Jujutsu's names the pager, diff and fix
  // tools it runs, and a workspace's `.jj/repo` file points at the repository.
  "**/.hg/hgrc",
  "**/.hg/hgrc-not-shared",
  "**/.hg/sharedpath",
  "**/.jj/repo",
  "**/.jj/repo/config.toml",
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
  "**/hk.pkl",
  "**/hk.local.pkl",
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
  // ... and the programs they run: yarn runs the release and plugins .yarnrc.yml names, pnpm the hooks of its
  // pnpmfile on every install, bundler the Gemfile .bundle/config names, rustup the toolchain (`path = "DIR"`: DIR's
  // cargo and rustc) that rust-toolchain.toml names in this folder and every one below it.
  "**/.yarn/releases/**",
  "**/.yarn/plugins/**",
  "**/.pnpmfile.cjs",
  "**/.pnpmfile.mjs",
  "**/.bundle/config",
  "**/rust-toolchain",
  "**/rust-toolchain.toml",
  // tool-version and environment managers, read in the folder a command runs in and every one above it: mise's
  // configuration (`[tools] node = "path:DIR"`, `[env] _.path`, hooks on entering the folder), asdf's and mise's
  // `.tool-versions` (`path:DIR` versions, run for `node`, `python`), direnv's `.envrc` (sourced on entering).
  "**/.envrc",
  "**/.tool-versions",
  "**/mise.toml",
  "**/mise.*.toml",
  "**/.mise.toml",
  "**/.mise.*.toml",
  "**/.rtx.toml",
  "**/.rtx.*.toml",
  "**/mise/config.toml",
  "**/mise/config.*.toml",
  "**/.mise/**",
  "**/.config/mise.toml",
  "**/.config/mise.*.toml",
  "**/.config/mise/**",
  // interpreters' and debuggers' start-up files read from the folder they run in (pdb's commands, irb's and pry's
  // Ruby).
  "**/.pdbrc",
  "**/.irbrc",
  "**/.pryrc",
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
  // other start-up configuration read from a home folder, should the workspace be one: git's (pager, fsmonitor,
  // hooks path), ssh's (ProxyCommand), Mercurial's, curl's and wget's, the credential programs of docker, kubectl
  // and the AWS tools.
  ".gitconfig",
  ".config/git/**",
  // toolfence's own user policy file (`~/.config/toolfence/config.json`), read by the next server started there.
  ".config/toolfence/**",
  ".ssh/**",
  ".hgrc",
  ".curlrc",
  ".wgetrc",
  ".docker/config.json",
  ".kube/config",
  ".aws/config",
  // editors and dev containers: their tasks, language servers and commands run when the folder is opened (Zed's
  // and Helix's language servers, Neovim's and Vim's exrc, Emacs's directory variables).
  "**/.vscode/**",
  "**/.idea/**",
  "**/.devcontainer/**",
  "**/.devcontainer.json",
  "**/.zed/**",
  "**/.helix/**",
  "**/.fleet/**",
  "**/.theia/**",
  "**/.nvim.lua",
  "**/.nvimrc",
  "**/.exrc",
  "**/.dir-locals.el",
  "**/.dir-locals-2.el",
  // agents and MCP clients, in any folder one may be started in (a package of a monorepo): their settings run hooks,
  // MCP servers and lint or test commands.
  "**/.mcp.json",
  "**/.claude/**",
  "**/.cursor/**",
  "**/.gemini/**",
  "**/.codex/**",
  "**/.qwen/**",
  "**/.continue/**",
  "**/.roo/**",
  "**/.kiro/**",
  "**/.amazonq/**",
  "**/.junie/**",
  "**/.windsurf/**",
  "**/.factory/**",
  "**/.opencode/**",
  "**/opencode.json",
  "**/opencode.jsonc",
  "**/.crush.json",
  "**/crush.json",
  "**/.aider.conf.yml",
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
