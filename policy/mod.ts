/**
 * The policy: the workspace that confines paths, the runtime fence, hosts and
 * the write-permission flow, shell-command analysis, and the OS sandbox. It
 * knows nothing of particular tools.
 *
 * @module
 */

export { Workspace, type WorkspaceOptions } from "./workspace.ts";
export { openFence, runtimeFence } from "./fence.ts";
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
export { Policy, type PolicyOptions } from "./policy.ts";
export { type SandboxMode, type SandboxState, sandboxState } from "./sandbox.ts";
export { type AllowlistEntry, DEFAULT_COMMAND_ALLOWLIST, READER_COMMANDS } from "./shell/allowlist.ts";
export { isReadOnlyLine } from "./shell/read_only_line.ts";
export { checkCommand, type CheckCommandOptions, type CommandCheck } from "./shell/check_command.ts";
export { type RiskAssessment, type RiskAssessor, rulesRiskAssessor } from "./shell/risk.ts";
export { loadPolicy, PolicyFileError } from "./config/load.ts";
export { AuditLog, type AuditLogOptions, type AuditRecord } from "./audit/audit_log.ts";
export { type PolicyFile } from "./config/schema.ts";
export { Session, type SessionOptions } from "./session.ts";
export { createScratch, Scratch, type ScratchOptions } from "./scratch/scratch.ts";
// The umbrella re-exports the names above this line (scripts/surface.ts).
// Text from the agent made safe to show a person: for the hosts of adapters (the MCP server's console).
export { visibleText } from "./_visible_text.ts";
export { folderRelation, type ResolvedPath, type ResolveOptions } from "./workspace.ts";
export { PolicyState, type PolicyStateData } from "./state.ts";
export { PolicyFileDoor } from "./file_door.ts";
export { type CommandNetwork, type PolicyAsker, type WriteAction } from "./policy.ts";
export { type Destination } from "./egress/judge.ts";
export { type EgressConnection } from "./egress/proxy.ts";
export { type LimitsState, type ResourceLimits, type TmpfsAtEnd } from "./limits.ts";
export { type CommandPath, type CommandSandbox, type SimpleCommandFinding } from "./shell/check_command.ts";
export { type AuthorizeCommandOptions, type CommandAuthorization } from "./shell/authorize_command.ts";
export { type PathOutcome, PolicyRules } from "./config/rules.ts";
export { type FileProblem, type PolicyFileLocations } from "./config/load.ts";
export { type AuditedToolBox, type PolicyDecisionEvent } from "./audit/audit_log.ts";
export { Redactor } from "./audit/redact.ts";
export {
  type CommandRuleInput,
  type PathRuleInput,
  type PolicyExample,
  type ResourceLimitsInput,
} from "./config/schema.ts";
export { type CopyMethod, type HostConflict, type ScratchChanges } from "./scratch/scratch.ts";
export { type Checkpoint, FileHistory, type FileHistoryOptions, type UndoReport } from "./file_history.ts";
export type { SweepReport } from "./_debris.ts";
export { type AddressClass } from "./egress/addresses.ts";
export { type LimitName } from "./limits.ts";
export { type PathAccess } from "./shell/check_command.ts";
export { type CommandTouches } from "./shell/authorize_command.ts";
export {
  type CommandRule,
  type PathRule,
  type PolicyLayer,
  type RuleDecision,
  type RuleOutcome,
} from "./config/rules.ts";
export { type RuleSpec, type SizeInput } from "./config/schema.ts";
export { type JournalEntry } from "./file_history.ts";
export { type PathRuleKind, type PolicyLayerName, type RuleSource } from "./config/rules.ts";
export { POLICY_LAYERS } from "./config/rules.ts";
export { denoFlagsForNeeds, type NeedsFlagsOptions, SPAWN_ENV } from "./fence.ts";
export { classifyAddress } from "./egress/addresses.ts";
export {
  allowedByName,
  allowsLoopback,
  defaultPort,
  type DestinationAnswer,
  DestinationJudge,
  type DestinationQuestion,
  type EgressRules,
  type QuestionBudget,
} from "./egress/judge.ts";
export {
  BLOCKED_HEADER,
  type ConnectionPool,
  type EgressListen,
  type EgressProxy,
  type EgressProxyOptions,
  type JudgedTarget,
  type JudgeTarget,
  startEgressProxy,
} from "./egress/proxy.ts";
export { findForwarder, findSocat, type Forwarder, proxyEnvironment, type SandboxProxy } from "./egress/forwarder.ts";
export {
  bubblewrapPath,
  type BubblewrapStatus,
  bubblewrapStatus,
  knownSandboxState,
  SYSTEM_READ_VIEW,
} from "./sandbox.ts";
export { INHERITED_VARIABLES } from "./_process_env.ts";
export { readProgramFile, removeProgramFolder } from "./program_folder.ts";
export {
  DEFAULT_RESOURCE_LIMITS,
  formatBytes,
  groupsRemoved,
  knownLimitsState,
  limitCommand,
  type LimitCommandOptions,
  type LimitedCommand,
  type LimitHit,
  limitMessage,
  limitRemedy,
  limitsOfPolicy,
  limitsState,
  resourceLimits,
  tmpfsSizeArgs,
  type WrittenFile,
} from "./limits.ts";
export { matchesAllowlist, parseAllowlistEntry, PROJECT_CODE_COMMANDS, runsProjectCode } from "./shell/allowlist.ts";
export { commandSandbox } from "./shell/check_command.ts";
export { ALWAYS_ASK_KINDS, type CommandPrompt, promptForAssessment } from "./shell/risk.ts";
export {
  authorizeCommand,
  type CommandDecision,
  decideCommand,
  type DecideCommandOptions,
} from "./shell/authorize_command.ts";
export { type CommandRuleMatch, type CommandRulesVerdict, judgeCommandRules } from "./shell/command_rules.ts";
export { describeRule } from "./config/rules.ts";
export {
  MANAGED_POLICY_FILE,
  parsePolicyFile,
  policyFileLocations,
  PROJECT_POLICY_FILE,
  unreadablePolicyFiles,
  userPolicyFile,
} from "./config/load.ts";
export { type ElicitationAnswers, type PolicySettings, policySettings } from "./config/settings.ts";
export {
  checkPolicyExamples,
  type ExampleResult,
  formatExampleFailure,
  PolicyExampleError,
  type PolicyExampleOptions,
  runPolicyExamples,
} from "./config/examples.ts";
export {
  addRuleToFile,
  addRuleToText,
  removeRuleFromFile,
  removeRuleFromText,
  type RuleList,
  STARTER_POLICY,
  writePolicyFile,
} from "./config/edit.ts";
export { policyJsonSchema } from "./config/json_schema.ts";
export { PolicyFileSchema } from "./config/schema.ts";
export { DEFAULT_PROTECTED_PATHS, isProtectedPath, mayContainProtectedPath } from "./protected_paths.ts";
export { diffTrees } from "./scratch/scratch.ts";
export { inputDigest } from "./scratch/digest.ts";
export { isRuntimePermissionError } from "@toolfence/internal";
export { parseBash } from "./shell/parser.ts";
export { isExecutableFile } from "@toolfence/internal";
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
  MemoryArtifactPool,
  MemoryArtifactStore,
  MemoryArtifactStoreOptions,
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
  ToolContext,
  ToolNeeds,
  ToolPlace,
  ToolResult,
  ToolStatus,
  WriteKind,
} from "@toolfence/core";
