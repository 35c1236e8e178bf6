// Builds the agents feature: the agent node joins the workflow registry, the service and routes.
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import type { Llm } from "../../platform/llm/llm";
import type { ToolRegistry } from "../../platform/tools/registry";
import type { WorkspacesService } from "../workspaces/service";
import type { KnowledgeService } from "../knowledge/service";
import type { WorkflowFeature } from "../workflows/feature";
import type { PreferencesService } from "../preferences/service";
import { agentNode } from "./agent-node";
import { createAgentsService } from "./service";

export function createAgentsFeature(d: { db: Db; hotDb: Db; clock: Clock; llm: Llm; tools: ToolRegistry; workspaces: WorkspacesService; knowledge: KnowledgeService; workflow: WorkflowFeature; preferences: PreferencesService }) {
  d.workflow.registry.add(agentNode({ db: d.db, hotDb: d.hotDb, llm: d.llm, tools: d.tools, basesOf: d.workflow.basesOf, preferencesOf: (actor) => d.preferences.promptLine(actor) }));
  return createAgentsService({ db: d.db, clock: d.clock, workspaces: d.workspaces, knowledge: d.knowledge, workflows: d.workflow.workflows, executions: d.workflow.executions, engine: d.workflow.engine, tools: d.tools });
}
