/**
 * The `search` tool group: glob and grep.
 *
 * @module
 */

export { searchTools } from "./search_tools.ts";
export { DEFAULT_MAX_RESULTS, type GlobArgs, globTool } from "./glob.ts";
export {
  DEFAULT_MAX_MATCHES,
  type GrepArgs,
  type GrepEngine,
  type GrepMatch,
  grepTool,
  type GrepToolOptions,
  type LineHit,
} from "./grep.ts";
