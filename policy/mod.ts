/**
 * The policy: the workspace that confines paths, the runtime fence, hosts and
 * the write-permission flow, shell-command analysis, and the OS sandbox. It
 * knows nothing of particular tools.
 *
 * @module
 */

export { Session, type SessionOptions } from "./session.ts";
export { type ResolvedPath, type ResolveOptions, Workspace, type WorkspaceOptions } from "./workspace.ts";
export { PolicyState, type PolicyStateData } from "./state.ts";
export {
  type DenoFlagsOptions,
  type Fence,
  type FenceAnswer,
  type FencePermission,
  narrowestDenoFlags,
  openFence,
  requireFence,
  runtimeFence,
} from "./fence.ts";
export {
  autoHost,
  type CallbackAnswer,
  callbackHost,
  denyAllHost,
  type HostCallbacks,
  terminalHost,
  type TerminalHostOptions,
  withAutoConfirm,
} from "./hosts.ts";
export { Policy, type PolicyAsker, type PolicyOptions, type WriteAction, type WriteChoice } from "./policy.ts";
export {
  bubblewrapPath,
  type BubblewrapStatus,
  bubblewrapStatus,
  sandboxArgv,
  type SandboxMode,
  type SandboxOptions,
} from "./sandbox.ts";
export { DEFAULT_COMMAND_ALLOWLIST, matchesAllowlist } from "./allowlist.ts";
export {
  checkCommand,
  type CheckCommandOptions,
  type CommandCheck,
  type CommandVerdict,
  type SimpleCommandFinding,
} from "./command.ts";
export {
  ALWAYS_ASK_KINDS,
  type CommandPrompt,
  promptForAssessment,
  type RiskAssessment,
  type RiskAssessor,
  rulesRiskAssessor,
} from "./risk.ts";
export { authorizeCommand, type AuthorizeCommandOptions, type CommandAuthorization } from "./authorize_command.ts";
export { withPathLocks } from "./path_lock.ts";
export { DEFAULT_PROTECTED_PATHS, isProtectedPath, mayContainProtectedPath } from "./protected_paths.ts";
export { isRuntimePermissionError } from "./_runtime_permissions.ts";
export { parseBash } from "./_bash_parser.ts";
