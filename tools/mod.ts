/**
 * The built-in tools, by group: `fs`, `search`, `patch`, `cmd`, `system`,
 * `framework`, `diagnostic`, `browser`, and the sub-agent tools. {@linkcode BUILTIN_GROUPS}
 * is the plain record of the groups by name, for a `ToolBox`'s `groups` option;
 * importing this module registers nothing.
 *
 * @example
 * ```ts
 * import { ToolBox } from "@toolfence/core";
 * import { BUILTIN_GROUPS } from "@toolfence/tools";
 * const box = new ToolBox({ groups: BUILTIN_GROUPS }).withDefaults("fs", "search");
 * console.log(box.list().length > 0); // true
 * ```
 *
 * @module
 */

export { BUILTIN_GROUPS, SUBAGENT_TOOLS } from "./groups.ts";
export { type PublishArgs, type PublishResult, publishTool, type PublishToolOptions } from "./scratch/mod.ts";
export {
  type CopyArgs,
  copyTool,
  DEFAULT_READ_LIMIT,
  type DeleteArgs,
  deleteTool,
  type FileInfoArgs,
  fileInfoTool,
  fsTools,
  type ListDirArgs,
  listDirTool,
  type MkdirArgs,
  mkdirTool,
  type MoveArgs,
  moveTool,
  READ_BUDGET_CHARS,
  type ReadFileArgs,
  readFileTool,
  type RequestImageArgs,
  type RequestImageCrop,
  type RequestImageResult,
  requestImageTool,
  type TempDirArgs,
  tempDirTool,
  type WriteFileArgs,
  writeFileTool,
} from "./fs/mod.ts";
export {
  DEFAULT_MAX_MATCHES,
  DEFAULT_MAX_RESULTS,
  type GlobArgs,
  globTool,
  type GrepArgs,
  type GrepEngine,
  type GrepMatch,
  grepTool,
  type GrepToolOptions,
  type LineHit,
  searchTools,
} from "./search/mod.ts";
export { type ApplyPatchArgs, applyPatchTool, type EditFileArgs, editFileTool, patchTools } from "./patch/mod.ts";
export {
  type BashArgs,
  type BashBackgroundArgs,
  bashBackgroundTool,
  bashListTool,
  type BashReadArgs,
  bashReadTool,
  type BashResult,
  type BashStopArgs,
  bashStopTool,
  bashTool,
  type BashWaitArgs,
  bashWaitTool,
  cmdTools,
  type JobReport,
  type JobStatus,
  sessionOutputMaximum,
  setSessionOutputMaximum,
} from "./cmd/mod.ts";
export {
  type DatetimeArgs,
  type DatetimeResult,
  datetimeTool,
  type SleepArgs,
  sleepTool,
  type SystemInfo,
  systemInfoTool,
  systemTools,
  zonedIso,
} from "./system/mod.ts";
export {
  type AskPreferenceArgs,
  askPreferenceTool,
  frameworkTools,
  MAX_ARTIFACT_WINDOW,
  type PreferenceAnswer,
  type ReadArtifactArgs,
  readArtifactTool,
} from "./framework/mod.ts";
export {
  type CheckSyntaxArgs,
  type CheckSyntaxResult,
  checkSyntaxTool,
  type CheckTypesArgs,
  type CheckTypesResult,
  checkTypesTool,
  diagnosticTools,
  type DiffFilesArgs,
  type DiffFilesResult,
  diffFilesTool,
  parseDenoCheckOutput,
  SYNTAX_LANGUAGES,
  type SyntaxLanguage,
  type SyntaxProblem,
  type TypeDiagnostic,
} from "./diagnostic/mod.ts";
export {
  type BrowserClickArgs,
  browserClickTool,
  browserCloseTool,
  type BrowserConsoleArgs,
  browserConsoleMessagesTool,
  type BrowserEvaluateArgs,
  browserEvaluateTool,
  type BrowserFileUploadArgs,
  browserFileUploadTool,
  type BrowserNavigateArgs,
  browserNavigateTool,
  type BrowserOptions,
  type BrowserPressKeyArgs,
  browserPressKeyTool,
  Browsers,
  type BrowserScreenshotArgs,
  type BrowserScreenshotResult,
  browserScreenshotTool,
  type BrowserSelectArgs,
  browserSelectTool,
  browserSnapshotTool,
  type BrowserTabsArgs,
  browserTabsTool,
  browserTools,
  type BrowserTypeArgs,
  browserTypeTool,
  type BrowserWaitForArgs,
  browserWaitForTool,
  type DestinationRules,
  MAX_FULL_PAGE_HEIGHT,
  MAX_UPLOAD_BYTES,
  type PageEvent,
} from "./browser/mod.ts";
export {
  type AgentRunArgs,
  type AgentRunParallelArgs,
  agentTools,
  MAX_PARALLEL_SUBAGENTS,
  MAX_PARALLEL_TASKS,
  MAX_SUBAGENT_DEPTH,
  modelRiskAssessor,
  type ModelRiskAssessorOptions,
  type Subagent,
  type SubagentContext,
  type SubagentGetter,
  type SubagentOutcome,
} from "./agents/mod.ts";
