/**
 * The mechanisms below the policy: file operations confined to the
 * workspace's folders (no symlink or `..` leads out between the check and the
 * act), atomic writes, in-process path locks, file states, the runtime's
 * permission queries, path-glob matching (letter case ignored), and the
 * process mechanisms: process groups, bounded output capture, probes,
 * finding executables, and the OS sandbox's mounts (credential masks,
 * protected and hidden paths).
 *
 * **Not public API.** Only `@toolfence/policy` imports this member; it may
 * change in any release without notice. The layer check
 * (`deno task check:layers`) refuses an import of it from the tools, the
 * adapters and the umbrella package: they reach files through the policy's
 * file door (`ctx.policy.files`) and process door (`ctx.policy.processes`),
 * which apply every rule before they call these.
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
  type CopiedLink,
  type CopyCounts,
  copyTreeConfined,
  createAllConfined,
  createConfined,
  type CreatedFile,
  discardConfined,
  discardConfinedSync,
  type FolderPin,
  inFolder,
  linksInTree,
  lstatConfined,
  mkdirConfined,
  mkdirsConfined,
  moveConfined,
  namesConfined,
  openFolderConfined,
  openReadCheckedConfined,
  openReadConfined,
  pathChangedError,
  placeInFolder,
  readdirConfined,
  readlinkConfined,
  removeConfined,
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
export { ANY_RUN, codePoints, type WildcardItem, wildcardMatches, wildcardPattern } from "./wildcard.ts";
export { quickLstat } from "./quick_stat.ts";
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
export { hostProgramCandidates, isExecutableFile, programSearchPath } from "./executable.ts";
export {
  globBase,
  globMayMatchWithin,
  hasGlobSyntax,
  literalGlob,
  pathGlobMatcher,
  type PathMatcher,
} from "./path_globs.ts";
export { type GroupProcess, sandboxMakesSession, spawnGroup, type SpawnGroupOptions } from "./process_group.ts";
export { settlesWithin } from "./settles_within.ts";
export { captureOutput, type OutputCapture, type ReadyOutcome } from "./process_output.ts";
export { type ProbeOutcome, runProbe, shellOutput } from "./probe_process.ts";
export {
  type ChildListing,
  deniedEntries,
  hiddenMountArgs,
  type HiddenMounts,
  listOutside,
  REPOSITORY_STORE_GLOBS,
} from "./hidden_mounts.ts";
export { inodeKey, linkedInodes, otherNames } from "./hidden_aliases.ts";
export {
  closeMounts,
  type EntryKind,
  protectedLinkTargets,
  type ProtectedMount,
  protectedMountArgs,
  protectedMounts,
  type ProtectedPlan,
  quarantineCreated,
  type QuarantinedPath,
  readOnlyEntryMounts,
  readOnlyFolderMounts,
  releasePlaceholders,
  type SecretMasks,
  secretMasks,
  secretMountArgs,
  unseenBySandbox,
  type WorkspaceListing,
} from "./sandbox_mounts.ts";
export { serialQueue } from "./serial_queue.ts";
export { type Slicer, slicer } from "./slicer.ts";
export {
  BEFORE_HASH_BUDGET,
  BEFORE_HASH_FILES,
  isRename,
  MAX_SCAN_ENTRIES,
  PATH_MAX_BYTES,
  scanWorkspace,
  type StatEntry,
  type WatchOptions,
  watchWorkspace,
  type WorkspaceScan,
  type WorkspaceWatch,
} from "./workspace_changes.ts";
// The types the names above reference, type-only, so this entry's docs are complete (written by deno task surface):
export type {
  AfterBatchHook,
  AfterCallHook,
  AgentModel,
  ArtifactInfo,
  ArtifactRef,
  ArtifactStore,
  AttemptId,
  AuthorizeOptions,
  BatchClosure,
  BeforeCallDecision,
  BeforeCallEvent,
  BeforeCallHook,
  BoundedOutput,
  CallGate,
  CallPolicy,
  ChildSessionOptions,
  ChoiceOption,
  ChoiceOutcome,
  ChoiceRequest,
  ChoiceSource,
  ConfirmRequest,
  CopiedCounts,
  DeferredImage,
  Effect,
  EffectState,
  ErrorCode,
  ErrorKind,
  Fence,
  FenceAnswer,
  FencePermission,
  FileChange,
  FileChangeEvent,
  FileDoor,
  FileSnapshot,
  FileState,
  FileTarget,
  HookSet,
  Host,
  ImageMediaType,
  JsonSchema,
  JsonSchemaToolSpec,
  LateResult,
  LateResults,
  LateResultsOptions,
  Launcher,
  LauncherRequest,
  ModelMessage,
  ModelRequest,
  ModelToolCall,
  ModelTurn,
  MovedPath,
  PathResolver,
  ProcessDoor,
  ProcessExit,
  ProcessRequest,
  ProgramRequest,
  ProgressEvent,
  Provenance,
  QuestionSubject,
  RequestCommon,
  ResourceLimitHit,
  RetryDisposition,
  RunningProcess,
  SandboxSetting,
  SessionBase,
  ShellRequest,
  StartedProcess,
  TargetOptions,
  ThrownStatus,
  ToolContext,
  ToolError,
  ToolErrorOptions,
  ToolResult,
  ToolStatus,
  WriteKind,
} from "@toolfence/core";
