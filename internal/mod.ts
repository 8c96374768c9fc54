/**
 * The mechanisms below the policy: file operations confined to the
 * workspace's folders (no symlink or `..` leads out between the check and the
 * act), atomic writes, in-process path locks, file states, and the runtime's
 * permission queries.
 *
 * **Not public API.** Only `@toolfence/policy` imports this member; it may
 * change in any release without notice. The layer check
 * (`deno task check:layers`) refuses an import of it from the tools, the
 * adapters and the umbrella package: they reach files through the policy's
 * file door (`ctx.policy.files`), which applies every rule before it calls
 * these.
 *
 * @example
 * ```ts
 * import { isWithin } from "@toolfence/internal";
 * console.log(isWithin("/w/a", "/w"));
 * ```
 *
 * @module
 */
export { atomicWrite, type AtomicWriteOptions } from "./atomic_write.ts";
export {
  type At,
  chmodConfined,
  confinementMode,
  type CopyCounts,
  copyTreeConfined,
  createConfined,
  type CreatedFile,
  discardConfined,
  discardConfinedSync,
  type FolderPin,
  inFolder,
  lstatConfined,
  mkdirConfined,
  mkdirsConfined,
  moveConfined,
  openFolderConfined,
  openReadConfined,
  readdirConfined,
  readlinkConfined,
  removeTreeConfined,
  removeTreeConfinedSync,
  renameInFolder,
  requireRoot,
  rmdirConfined,
  symlinkConfined,
  syncFd,
  tempName,
  tempNameOwner,
  unlinkConfined,
  writeAll,
} from "./confined_fs.ts";
export { type FileEntry, fileEntryConfined, fileStateConfined, IMAGE_FILE_LIMIT } from "./file_state.ts";
export { withPathLocks } from "./path_lock.ts";
export { isAbsoluteClean, isWithin } from "./paths.ts";
export {
  denoFlag,
  isRuntimePermissionError,
  nodeFlag,
  queryRuntimePermission,
  type RuntimeAnswer,
  runtimeFenceKind,
  runtimeFlag,
  type RuntimePermission,
  runtimePermissionClosedEntirely,
  systemTempFolder,
} from "./runtime_permissions.ts";
