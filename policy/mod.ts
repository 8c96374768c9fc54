/**
 * The policy: the workspace that confines paths, the runtime fence, hosts and
 * the write-permission flow, shell-command analysis, and the OS sandbox. It
 * knows nothing of particular tools.
 *
 * @module
 */

export { type ResolvedPath, type ResolveOptions, Workspace, type WorkspaceOptions } from "./workspace.ts";
export { PolicyState, type PolicyStateData } from "./state.ts";
export { denoFlagsForNeeds, type NeedsFlagsOptions, openFence, runtimeFence, SPAWN_ENV } from "./fence.ts";
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
export { PolicyFileDoor } from "./file_door.ts";
export {
  type CommandNetwork,
  Policy,
  type PolicyAsker,
  type PolicyOptions,
  type WriteAction,
  type WriteChoice,
} from "./policy.ts";
export { type AddressClass, classifyAddress } from "./egress/addresses.ts";
export {
  allowedByName,
  type AskDestination,
  defaultPort,
  type Destination,
  type DestinationAnswer,
  DestinationJudge,
  type DestinationJudgeOptions,
  type DestinationQuestion,
  type EgressRules,
} from "./egress/judge.ts";
export {
  BLOCKED_HEADER,
  type EgressConnection,
  type EgressListen,
  type EgressProxy,
  type EgressProxyOptions,
  type JudgedTarget,
  type JudgeTarget,
  startEgressProxy,
} from "./egress/proxy.ts";
export { findSocat, proxyEnvironment, type SandboxProxy } from "./egress/forwarder.ts";
export {
  bubblewrapPath,
  type BubblewrapStatus,
  bubblewrapStatus,
  knownSandboxState,
  type SandboxMode,
  type SandboxState,
  sandboxState,
  SYSTEM_READ_VIEW,
} from "./sandbox.ts";
export { INHERITED_VARIABLES } from "./_process_env.ts";
export {
  DEFAULT_RESOURCE_LIMITS,
  formatBytes,
  knownLimitsState,
  limitCommand,
  type LimitCommandOptions,
  type LimitedCommand,
  type LimitHit,
  limitMessage,
  type LimitName,
  limitsOfPolicy,
  type LimitsState,
  limitsState,
  limitValue,
  type ResourceLimits,
  resourceLimits,
  tmpfsSizeArgs,
} from "./limits.ts";
export {
  type AllowlistEntry,
  DEFAULT_COMMAND_ALLOWLIST,
  matchesAllowlist,
  parseAllowlistEntry,
  PROJECT_CODE_COMMANDS,
  runsProjectCode,
} from "./shell/allowlist.ts";
export {
  checkCommand,
  type CheckCommandOptions,
  type CommandCheck,
  type CommandPath,
  type CommandSandbox,
  commandSandbox,
  type CommandVerdict,
  type PathAccess,
  type SimpleCommandFinding,
} from "./shell/check_command.ts";
export {
  ALWAYS_ASK_KINDS,
  type CommandPrompt,
  promptForAssessment,
  type RiskAssessment,
  type RiskAssessor,
  rulesRiskAssessor,
} from "./shell/risk.ts";
export {
  authorizeCommand,
  type AuthorizeCommandOptions,
  type CommandAuthorization,
  type CommandDecision,
  type CommandTouches,
  decideCommand,
  type DecideCommandOptions,
} from "./shell/authorize_command.ts";
export { type CommandRuleMatch, type CommandRulesVerdict, judgeCommandRules } from "./shell/command_rules.ts";
export {
  commandPatternMatches,
  type CommandRule,
  describeRule,
  type PathOutcome,
  type PathRule,
  type PathRuleKind,
  POLICY_LAYERS,
  type PolicyLayer,
  type PolicyLayerName,
  PolicyRules,
  type RuleDecision,
  type RuleOutcome,
  type RuleSource,
} from "./config/rules.ts";
export {
  type FileProblem,
  formatProblem,
  loadPolicy,
  MANAGED_POLICY_FILE,
  parsePolicyFile,
  PolicyFileError,
  type PolicyFileLocations,
  policyFileLocations,
  PROJECT_POLICY_FILE,
  readPolicyFile,
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
export {
  type AuditedToolBox,
  AuditLog,
  type AuditLogOptions,
  type AuditRecord,
  type PolicyDecisionEvent,
} from "./audit/audit_log.ts";
export { REDACTED, Redactor, type RedactorOptions, TOKEN_PATTERNS } from "./audit/redact.ts";
export {
  type CommandRuleInput,
  CommandRuleSchema,
  type PathRuleInput,
  PathRuleSchema,
  type PolicyExample,
  PolicyExampleSchema,
  type PolicyFile,
  PolicyFileSchema,
  type ResourceLimitsInput,
  type RuleSpec,
  type SizeInput,
} from "./config/schema.ts";
export { DEFAULT_PROTECTED_PATHS, isProtectedPath, mayContainProtectedPath } from "./protected_paths.ts";
export { Session, type SessionOptions } from "./session.ts";
export {
  type CopyMethod,
  createScratch,
  diffTrees,
  type HostConflict,
  Scratch,
  type ScratchChanges,
  type ScratchOptions,
} from "./scratch/scratch.ts";
export { inputDigest } from "./scratch/digest.ts";
export { isRuntimePermissionError } from "@toolfence/internal";
export { parseBash } from "./shell/parser.ts";
export { isExecutableFile } from "@toolfence/internal";
export {
  type Checkpoint,
  DEFAULT_MAX_IMAGE_BYTES,
  FileHistory,
  type FileHistoryOptions,
  type JournalEntry,
  type UndoReport,
} from "./file_history.ts";
export type { SweepReport } from "./_debris.ts";
