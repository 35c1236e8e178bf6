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
import { createIntegrationsService } from "./service";
import { integrationNode, integrationToolProvider } from "./tools";

export function createIntegrationsFeature(d: { db: Db; clock: Clock; workspaces: WorkspacesService; box: SecretBox; tools: ToolRegistry; workflow: WorkflowFeature }) {
  const service = createIntegrationsService({ db: d.db, clock: d.clock, workspaces: d.workspaces, box: d.box, connectors: [github, gitea, gitlab, slackConnector] });
  d.tools.addProvider(integrationToolProvider(service, d.workflow.allow));
  d.workflow.registry.add(integrationNode(service, d.workflow.allow));
  return service;
}
