/**
 * The policy: the workspace that confines paths, the runtime fence, hosts and
 * the write-permission flow, shell-command analysis, and the OS sandbox. It
 * knows nothing of particular tools.
 *
 * @module
 */

export * from "./workspace.ts";
export * from "./state.ts";
export * from "./fence.ts";
export * from "./hosts.ts";
export * from "./policy.ts";
export * from "./atomic_write.ts";
export * from "./sandbox.ts";
export * from "./shell/allowlist.ts";
export * from "./shell/check_command.ts";
export * from "./shell/risk.ts";
export * from "./shell/authorize_command.ts";
export * from "./path_lock.ts";
export * from "./protected_paths.ts";
