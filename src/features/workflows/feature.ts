// Builds the workflows feature once: node registry, event log, engine, and the services the
// routes and other features (agents, MCP) use; start/stop for the engine.
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/log";
import { parseAllowList } from "../../platform/net/safe-fetch";
import type { WorkspacesService } from "../workspaces/service";
import type { KnowledgeSearch } from "../knowledge/search";
import type { Llm } from "../../platform/llm/llm";
import { createEventLog } from "./engine/events";
import { createWorkflowEngine } from "./engine/engine";
import { createExecutionsService } from "./executions";
import { createWorkflowsService } from "./service";
import { createNodeRegistry, type NodeType } from "./nodes/node-type";
import { manualTrigger, scheduleTrigger, webhookTrigger } from "./nodes/triggers";
import { approvalNode, conditionNode, delayNode, outputNode, transformNode } from "./nodes/simple";
import { httpNode } from "./nodes/http";
import { llmNode } from "./nodes/llm";
import { knowledgeSearchNode } from "./nodes/knowledge-search";
import { transcribeNode, type TranscribeBytes } from "./nodes/transcribe";
import { createRateLimiter } from "../../platform/rate-limit";
import { createRetention } from "./retention";
import { createScheduler } from "./scheduler";
import { createTriggerService } from "./trigger-service";
import { createWebhooks } from "./webhooks";

export interface WorkflowFeatureDeps {
  db: Db;
  hotDb: Db;
  clock: Clock;
  log: Logger;
  workspaces: WorkspacesService;
  search: KnowledgeSearch;
  /** Ids of a workspace's knowledge bases (what nodes may name). */
  basesOf: (productId: string) => string[];
  llm: Llm;
  transcribe: TranscribeBytes;
  concurrency: number;
  httpAllow: string;
  /** Where others reach Hearth: webhook URLs are built on it. */
  publicUrl: string;
  /** Inbound webhook deliveries a minute per path. */
  webhookRateLimit: number;
  /** Days ended executions are kept (0: for ever). */
  retentionDays: number;
}

export function createWorkflowFeature(d: WorkflowFeatureDeps) {
  const allow = parseAllowList(d.httpAllow);
  const nodes: NodeType<any>[] = [
    manualTrigger,
    scheduleTrigger,
    webhookTrigger,
    transformNode,
    conditionNode,
    outputNode,
    delayNode,
    approvalNode,
    httpNode(allow),
    llmNode(d.llm),
    knowledgeSearchNode(d.search, d.basesOf),
    transcribeNode({ transcribe: d.transcribe, allow }),
  ];
  const registry = createNodeRegistry(nodes);
  const events = createEventLog({ db: d.db, hotDb: d.hotDb, clock: d.clock });
  const engine = createWorkflowEngine({
    db: d.db,
    hotDb: d.hotDb,
    clock: d.clock,
    log: d.log,
    registry,
    events,
    concurrency: d.concurrency,
    organizationOf: (productId) => d.workspaces.organizationOf(productId),
  });
  const workflows = createWorkflowsService({ db: d.db, clock: d.clock, workspaces: d.workspaces, registry });
  const executions = createExecutionsService({ db: d.db, engine, workflows, workspaces: d.workspaces });
  const triggers = createTriggerService({ db: d.db, workspaces: d.workspaces, workflows, executions, registry, publicUrl: d.publicUrl });
  const scheduler = createScheduler({ db: d.db, clock: d.clock, log: d.log, engine });
  const webhooks = createWebhooks({ db: d.db, clock: d.clock, log: d.log, engine });
  const webhookLimiter = createRateLimiter({ default: d.webhookRateLimit, strict: d.webhookRateLimit }, d.clock);
  const retention = createRetention({ db: d.db, clock: d.clock, log: d.log, days: d.retentionDays });
  return {
    registry,
    allow,
    basesOf: d.basesOf,
    events,
    engine,
    workflows,
    executions,
    triggers,
    scheduler,
    webhooks,
    webhookLimiter,
    retention,
    // A part of Hearth (platform/parts.ts).
    name: "workflows",
    start() {
      engine.start();
      scheduler.start();
      retention.start();
    },
    stop() {
      retention.stop();
      scheduler.stop();
      engine.shutdown();
    },
  };
}

export type WorkflowFeature = ReturnType<typeof createWorkflowFeature>;
