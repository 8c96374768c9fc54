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

export { BUILTIN_GROUPS } from "./groups.ts";
export { publishTool } from "./scratch/mod.ts";
export { fsTools } from "./fs/mod.ts";
export { searchTools } from "./search/mod.ts";
export { patchTools } from "./patch/mod.ts";
export { cmdTools, setSessionOutputMaximum } from "./cmd/mod.ts";
export { systemTools } from "./system/mod.ts";
export { frameworkTools } from "./framework/mod.ts";
export { diagnosticTools } from "./diagnostic/mod.ts";
export { browserTools } from "./browser/mod.ts";
export { agentTools } from "./agents/mod.ts";
// The umbrella re-exports the names above this line (scripts/surface.ts).
export { type PublishArgs, type PublishToolOptions } from "./scratch/mod.ts";
export { type GrepToolOptions } from "./search/mod.ts";
export { type BrowserOptions } from "./browser/mod.ts";
export { type SubagentGetter } from "./agents/mod.ts";
export { type GrepEngine } from "./search/mod.ts";
export { type DestinationRules } from "./browser/mod.ts";
export { type Subagent, type SubagentContext } from "./agents/mod.ts";
export { SUBAGENT_TOOLS } from "./groups.ts";
export { type PublishResult } from "./scratch/mod.ts";
export {
  type CopyArgs,
  copyTool,
  DEFAULT_READ_LIMIT,
  type DeleteArgs,
  deleteTool,
  type FileInfoArgs,
  fileInfoTool,
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
  type GrepMatch,
  grepTool,
  type LineHit,
} from "./search/mod.ts";
export { type ApplyPatchArgs, applyPatchTool, type EditFileArgs, editFileTool } from "./patch/mod.ts";
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
  type JobReport,
  type JobStatus,
  sessionOutputMaximum,
} from "./cmd/mod.ts";
export {
  type DatetimeArgs,
  type DatetimeResult,
  datetimeTool,
  type SleepArgs,
  sleepTool,
  type SystemInfo,
  systemInfoTool,
  zonedIso,
} from "./system/mod.ts";
export {
  type AskPreferenceArgs,
  askPreferenceTool,
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
  type BrowserTypeArgs,
  browserTypeTool,
  type BrowserWaitForArgs,
  browserWaitForTool,
  MAX_FULL_PAGE_HEIGHT,
  MAX_UPLOAD_BYTES,
  type PageEvent,
} from "./browser/mod.ts";
export {
  type AgentRunArgs,
  type AgentRunParallelArgs,
  MAX_PARALLEL_SUBAGENTS,
  MAX_PARALLEL_TASKS,
  MAX_SUBAGENT_DEPTH,
  modelRiskAssessor,
  type ModelRiskAssessorOptions,
  type SubagentOutcome,
} from "./agents/mod.ts";
