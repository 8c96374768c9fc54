/**
 * The sub-agent tools, registered through `ToolBox.withSubagents(getter)`.
 *
 * Requires no permissions itself.
 *
 * @module
 */

export {
  type AgentRunArgs,
  type AgentRunParallelArgs,
  agentTools,
  MAX_PARALLEL_TASKS,
  type SubagentOutcome,
} from "./agent_run.ts";
export { modelRiskAssessor, type ModelRiskAssessorOptions } from "./model_risk_assessor.ts";
export {
  MAX_PARALLEL_SUBAGENTS,
  MAX_SUBAGENT_DEPTH,
  type Subagent,
  type SubagentContext,
  type SubagentGetter,
} from "./subagent.ts";
