/**
 * The `diagnostic` group: `check_syntax`, `diff_files`, `check_types`.
 *
 * Requires `--allow-read` for the workspace; `check_syntax` also `--allow-env`
 * for the variables TypeScript reads (and uses bash when it may run it);
 * `check_types` `--allow-run` (deno, and stopping it) and the temp folder;
 * `toolfence flags --groups diagnostic` prints them.
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import { checkSyntaxTool } from "./check_syntax.ts";
import { checkTypesTool } from "./check_types.ts";
import { diffFilesTool } from "./diff_files.ts";

export {
  type CheckSyntaxArgs,
  type CheckSyntaxResult,
  checkSyntaxTool,
  SYNTAX_LANGUAGES,
  type SyntaxLanguage,
  type SyntaxProblem,
} from "./check_syntax.ts";
export { type DiffFilesArgs, type DiffFilesResult, diffFilesTool } from "./diff_files.ts";
export {
  type CheckTypesArgs,
  type CheckTypesResult,
  checkTypesTool,
  parseDenoCheckOutput,
  type TypeDiagnostic,
} from "./check_types.ts";

/**
 * The tools of the `diagnostic` group.
 *
 * @example
 * ```ts
 * import { diagnosticTools } from "@toolfence/tools";
 * console.log(diagnosticTools().map((t) => t.name)); // ["check_syntax", "diff_files", "check_types"]
 * ```
 */
export function diagnosticTools(): AnyTool[] {
  return [checkSyntaxTool, diffFilesTool, checkTypesTool];
}
