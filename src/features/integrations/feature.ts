// Builds the integrations feature: connectors, the service, their tools in the shared registry and
// the `integration` node in the workflow registry.
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import type { SecretBox } from "../../platform/secrets";
import type { ToolRegistry } from "../../platform/tools/registry";
import type { WorkspacesService } from "../workspaces/service";
import type { WorkflowFeature } from "../workflows/feature";
import { gitea, github } from "./connectors/git-forges";
import { gitlab } from "./connectors/gitlab";
import { slackConnector } from "./connectors/slack";
import { jira } from "./connectors/jira";
import { mattermost } from "./connectors/mattermost";
import { httpService } from "./connectors/http-service";
import { teams } from "./connectors/teams";
import { createIntegrationsService, type IntegrationsService } from "./service";
import { createCommunicators } from "./communicators";
import type { Logger } from "../../platform/log";
import type { JobQueue } from "../../platform/jobs/queue";
import type { AgentsService } from "../agents/service";
import { integrationNode, integrationToolProvider } from "./tools";

export function createIntegrationsFeature(d: { db: Db; clock: Clock; workspaces: WorkspacesService; box: SecretBox; tools: ToolRegistry; workflow: WorkflowFeature; agents: AgentsService }) {
  const service = createIntegrationsService({
    db: d.db,
    clock: d.clock,
    workspaces: d.workspaces,
    box: d.box,
    connectors: [github, gitea, gitlab, jira, slackConnector, mattermost, teams, httpService],
    agentWorkspace: (id) => d.agents.byId(id)?.productId,
  });
  d.tools.addProvider(integrationToolProvider(service, d.workflow.allow));
  d.workflow.registry.add(integrationNode(service, d.workflow.allow));
  return service;
}

/** Chat platforms that talk to agents; built once agents exist (their answers come from agents). */
export function createCommunicatorFeature(d: { db: Db; clock: Clock; log: Logger; jobs: JobQueue; integrations: IntegrationsService; agents: AgentsService; workflow: WorkflowFeature; workspaces: WorkspacesService }) {
  return createCommunicators({ db: d.db, clock: d.clock, log: d.log, jobs: d.jobs, integrations: d.integrations, agents: d.agents, executions: d.workflow.executions, engine: d.workflow.engine, allow: d.workflow.allow, organizationOf: (id) => d.workspaces.organizationOf(id) });
}
