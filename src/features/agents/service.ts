// Agents of a workspace: the catalog, install and custom creation (each with its workflow), list,
// read, update, uninstall, invoke, and their executions with every tool call and the tokens used.
import { and, asc, count, desc, eq, inArray } from "drizzle-orm";
import { problemText, validatorFor, nonBlank } from "../../platform/validator";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { forbidden, invalid, notFound, unprocessable } from "../../platform/errors";
import type { PageWindow } from "../../platform/http/pagination";
import { isOrgAdmin, type Principal } from "../../platform/auth/principal";
import type { ToolRegistry } from "../../platform/tools/registry";
import type { WorkspacesService } from "../workspaces/service";
import type { KnowledgeService } from "../knowledge/service";
import type { WorkflowsService } from "../workflows/service";
import { checkInput, type ExecutionsService } from "../workflows/executions";
import { ENDED, type WorkflowEngine } from "../workflows/engine/engine";
import type { ExecutionRow } from "../workflows/engine/runner";
import type { Graph } from "../workflows/model";
import { customGraph, TEMPLATES } from "./templates";
import { agents, agentToolCalls, agentUsage } from "./table";

export type AgentRow = typeof agents.$inferSelect;

export const INVOKE_WAIT_MS = 120_000;
/** How often a waiting invoke looks at the injected clock for its deadline. */
const WAIT_POLL_MS = 250;

const blank = (v: unknown) => v === undefined || v === null || (typeof v === "string" && v.trim() === "");
/** The required fields of `required` that `input` lacks (blank strings count as missing). */
const lacking = (required: unknown, input: Record<string, unknown>): string[] => (Array.isArray(required) ? required.filter((k): k is string => typeof k === "string" && blank(input[k])) : []);

/**
 * What a manual trigger's input_schema requires that `input` lacks, said as a field ("input.query")
 * or as alternatives ("input.audio_url or input.transcript"), so an invoke fails at once, not in a
 * later node. `required` and `anyOf` of `required` lists are understood.
 */
const missingInput = (graph: Graph, input: Record<string, unknown>): string | undefined => {
  for (const n of graph.nodes) {
    if (n.type !== "trigger.manual") continue;
    const schema = n.config?.input_schema as { required?: unknown; anyOf?: unknown } | undefined;
    const missing = lacking(schema?.required, input)[0];
    if (missing) return `input.${missing}`;
    const options = Array.isArray(schema?.anyOf) ? schema.anyOf.map((o: { required?: unknown }) => (o && typeof o === "object" ? o.required : undefined)) : [];
    if (options.length > 0 && options.every((r) => lacking(r, input).length > 0)) return options.flatMap((r) => lacking(r, input).map((k) => `input.${k}`)).join(" or ");
  }
  return undefined;
};

export function createAgentsService(deps: {
  db: Db;
  clock: Clock;
  workspaces: WorkspacesService;
  knowledge: KnowledgeService;
  workflows: WorkflowsService;
  executions: ExecutionsService;
  engine: WorkflowEngine;
  tools: ToolRegistry;
}) {
  const { db, clock, workspaces, workflows, executions, engine } = deps;

  const productOf = (p: Principal, productId?: string) => {
    const id = productId ?? (p.kind === "token" ? p.productId : undefined);
    if (!id) throw invalid("Name the workspace: product_id");
    return workspaces.requireVisible(p, id).id;
  };

  /** Installing, changing and removing agents: owners/admins (JWT) or a SYSTEM token. */
  const requireManager = (p: Principal) => {
    if (p.kind === "token" ? p.tokenRole !== "SYSTEM" : !isOrgAdmin(p)) throw forbidden("Installing, changing or removing agents needs an owner or admin session, or a SYSTEM token");
  };

  const requireAgent = (p: Principal, id: string): AgentRow => {
    const a = db.select().from(agents).where(eq(agents.id, id.toLowerCase())).get();
    if (!a) throw notFound("Agent");
    if (!workspaces.canSee(p, a.productId)) throw notFound("Agent");
    return a;
  };

  const checkTools = (productId: string, names: string[]) => {
    const known = new Set(deps.tools.forWorkspace({ productId, organizationId: workspaces.organizationOf(productId) ?? "" }).map((t) => t.name));
    const unknown = names.filter((n) => !known.has(n));
    if (unknown.length) throw unprocessable(`Unknown tool(s): ${unknown.join(", ")}; available: ${[...known].join(", ")}`);
  };

  /**
   * Bases the caller may see (else 404) that belong to the agent's workspace: its searches run
   * there, and a session that sees two workspaces must not hand one's documents to the other's agent.
   */
  const checkBases = (p: Principal, productId: string, ids: string[], field = "knowledge_base_ids") => {
    const foreign = ids.filter((id) => deps.knowledge.requireBase(p, id).productId !== productId);
    if (foreign.length) throw unprocessable(`${field}: ${foreign.join(", ")} ${foreign.length === 1 ? "is not a knowledge base" : "are not knowledge bases"} of the agent's workspace`);
  };

  /** Writes the agent, then its workflow; a workflow that cannot be saved takes the agent back out. */
  const createWith = (p: Principal, row: Omit<AgentRow, "workflowId" | "createdAt" | "updatedAt" | "status">, graph: (id: string) => Graph): AgentRow => {
    const now = new Date(clock.now());
    db.insert(agents).values({ ...row, workflowId: null, status: "active", createdAt: now, updatedAt: now }).run();
    try {
      const w = workflows.create(p, { productId: row.productId, name: row.name, description: `Workflow of the agent "${row.name}"`, graph: graph(row.id), agentId: row.id });
      db.update(agents).set({ workflowId: w.id }).where(eq(agents.id, row.id)).run();
    } catch (e) {
      db.delete(agents).where(eq(agents.id, row.id)).run();
      throw e;
    }
    return requireAgent(p, row.id);
  };


  /** The execution once it ends, or as it is when `ms` have passed on the injected clock (so tests move time instead of waiting). */
  const untilEndedOr = (p: Principal, id: string, ms: number) =>
    new Promise<ExecutionRow>((resolve, reject) => {
      const deadline = clock.now() + ms;
      const poll = setInterval(() => {
        if (clock.now() < deadline) return;
        clearInterval(poll);
        try {
          resolve(executions.requireExecution(p, id));
        } catch (e) {
          reject(e);
        }
      }, WAIT_POLL_MS);
      engine.until(id, ENDED, ms).then(
        (row) => (clearInterval(poll), resolve(row)),
        (e) => (clearInterval(poll), reject(e)),
      );
    });

  const actor = (p: Principal) => (p.kind === "token" ? p.tokenId : p.userId);

  const executionView = (e: ExecutionRow, calls: (typeof agentToolCalls.$inferSelect)[], usage?: typeof agentUsage.$inferSelect) => ({
    id: e.id,
    status: e.status,
    trigger: { type: e.triggerType, ...(e.triggerId ? { id: e.triggerId } : {}) },
    input: e.input,
    ...(e.output !== null && e.output !== undefined ? { output: e.output } : {}),
    ...(e.error ? { error: e.error } : {}),
    tool_calls: calls.map((c) => ({ tool: c.tool, arguments: c.arguments, ...(c.result !== null ? { result: c.result } : {}), ...(c.error ? { error: c.error } : {}), duration_ms: c.durationMs, step: c.step })),
    usage: { prompt_tokens: usage?.promptTokens ?? 0, completion_tokens: usage?.completionTokens ?? 0 },
    started_at: e.startedAt?.toISOString() ?? null,
    finished_at: e.finishedAt?.toISOString() ?? null,
    duration_ms: e.startedAt && e.finishedAt ? e.finishedAt.getTime() - e.startedAt.getTime() : null,
  });

  return {
    requireAgent,
    executionView,

    catalog: () => TEMPLATES.map((tpl) => ({ id: tpl.id, name: tpl.name, description: tpl.description, settings_schema: tpl.settings, input_schema: tpl.input, triggers: tpl.triggers, tools: tpl.tools })),

    install(p: Principal, input: { productId?: string; template: string; name?: string; settings?: Record<string, unknown> }): AgentRow {
      requireManager(p);
      const productId = productOf(p, input.productId);
      const tpl = TEMPLATES.find((x) => x.id === input.template);
      if (!tpl) throw unprocessable(`Unknown template "${input.template}"; the catalog has: ${TEMPLATES.map((x) => x.id).join(", ")}`);
      const settings = input.settings ?? {};
      const problem = validatorFor(tpl.settings).Errors(settings).First();
      if (problem) throw unprocessable(problemText(problem, "settings"));
      const kbs = (settings.knowledge_base_ids as string[] | undefined) ?? [];
      checkBases(p, productId, kbs, "settings.knowledge_base_ids");
      const id = crypto.randomUUID();
      return createWith(p, { id, productId, name: input.name?.trim() || tpl.name, description: tpl.description, template: tpl.id, systemPrompt: tpl.systemPrompt, model: null, tools: tpl.tools, knowledgeBaseIds: kbs, settings, createdBy: actor(p) }, (agentId) => tpl.build(agentId, settings));
    },

    create(p: Principal, input: { productId?: string; name: string; description?: string; systemPrompt: string; tools?: string[]; knowledgeBaseIds?: string[]; model?: string; graph?: Graph }): AgentRow {
      requireManager(p);
      const name = nonBlank(input.name);
      const productId = productOf(p, input.productId);
      checkTools(productId, input.tools ?? []);
      checkBases(p, productId, input.knowledgeBaseIds ?? []);
      const id = crypto.randomUUID();
      return createWith(
        p,
        { id, productId, name, description: input.description?.trim() ?? "", template: null, systemPrompt: input.systemPrompt, model: input.model ?? null, tools: input.tools ?? ["search_knowledge"], knowledgeBaseIds: input.knowledgeBaseIds ?? [], settings: {}, createdBy: actor(p) },
        (agentId) => input.graph ?? customGraph(agentId),
      );
    },

    list(p: Principal, productId: string | undefined, win: PageWindow) {
      const where = eq(agents.productId, productOf(p, productId));
      const total = db.select({ n: count() }).from(agents).where(where).get()?.n ?? 0;
      const rows = db.select().from(agents).where(where).orderBy(asc(agents.createdAt), asc(agents.id)).limit(win.pageSize).offset(win.offset).all();
      return { rows, total };
    },

    update(p: Principal, id: string, patch: { name?: string; description?: string; systemPrompt?: string; tools?: string[]; knowledgeBaseIds?: string[]; model?: string | null; status?: "active" | "disabled"; graph?: Graph }): AgentRow {
      requireManager(p);
      const a = requireAgent(p, id);
      const name = patch.name === undefined ? a.name : nonBlank(patch.name);
      if (patch.tools) checkTools(a.productId, patch.tools);
      if (patch.knowledgeBaseIds) checkBases(p, a.productId, patch.knowledgeBaseIds);
      if (patch.graph && a.workflowId) workflows.update(p, a.workflowId, { graph: patch.graph });
      db.update(agents)
        .set({
          name,
          description: patch.description ?? a.description,
          systemPrompt: patch.systemPrompt ?? a.systemPrompt,
          tools: patch.tools ?? a.tools,
          knowledgeBaseIds: patch.knowledgeBaseIds ?? a.knowledgeBaseIds,
          model: patch.model === undefined ? a.model : patch.model,
          status: patch.status ?? a.status,
          updatedAt: new Date(clock.now()),
        })
        .where(eq(agents.id, a.id))
        .run();
      return requireAgent(p, a.id);
    },

    /** Removes the agent: its executions in progress stop, its workflow and triggers go. Nothing else is touched. */
    async uninstall(p: Principal, id: string): Promise<{ agent: AgentRow; stopped: number }> {
      requireManager(p);
      const a = requireAgent(p, id);
      let stopped = 0;
      if (a.workflowId) {
        // Its ended executions a slice at a time; from the stop to the delete in one turn.
        await workflows.drainHistory(a.workflowId);
        stopped = executions.stopAllOf(a.workflowId);
        workflows.remove(p, a.workflowId);
      }
      db.delete(agents).where(eq(agents.id, a.id)).run();
      return { agent: a, stopped };
    },

    /** Starts an execution of the agent's workflow; with `wait`, resolves when it ends (or after 120 s). */
    async invoke(p: Principal, id: string, input: Record<string, unknown>, wait: boolean, triggerType: "api" | "mcp" | "communicator" = "api") {
      const a = requireAgent(p, id);
      if (a.status !== "active") throw invalid("The agent is disabled; enable it with PUT status: active");
      if (!a.workflowId) throw notFound("Agent workflow");
      const w = workflows.requireWorkflow(p, a.workflowId);
      const version = workflows.requireVersion(p, w.activeVersionId!).version;
      const missing = missingInput(version.graph, input);
      if (missing) throw unprocessable(`${missing} is required${a.template ? ` (the ${a.template} template's input_schema, GET /api/agent-base/catalog)` : ""}`);
      const e = executions.begin({ productId: a.productId, workflowId: w.id, versionId: version.id, agentId: a.id, graph: null, graphForNodes: version.graph, triggerType, input: checkInput(input), createdBy: actor(p) });
      if (!wait) return { execution: e, ended: false };
      const row = await untilEndedOr(p, e.id, INVOKE_WAIT_MS);
      return { execution: row, ended: ENDED.includes(row.status) };
    },

    /** The agent's executions, newest first, each with its tool calls and token usage. */
    executions(p: Principal, id: string, win: PageWindow) {
      const a = requireAgent(p, id);
      if (!a.workflowId) return { rows: [], total: 0 };
      const { rows, total } = executions.list(p, { workflow_id: a.workflowId }, win);
      const ids = rows.map((r) => r.id);
      const calls = ids.length ? db.select().from(agentToolCalls).where(inArray(agentToolCalls.executionId, ids)).orderBy(asc(agentToolCalls.id)).all() : [];
      const usage = new Map((ids.length ? db.select().from(agentUsage).where(inArray(agentUsage.executionId, ids)).all() : []).map((u) => [u.executionId, u]));
      return { rows: rows.map((r) => executionView(r, calls.filter((c) => c.executionId === r.id), usage.get(r.id))), total };
    },

    /** One execution of the agent, with its tool calls. */
    execution(p: Principal, agentId: string, executionId: string) {
      const a = requireAgent(p, agentId);
      const e = executions.requireExecution(p, executionId);
      if (e.agentId !== a.id) throw notFound("Execution");
      const calls = db.select().from(agentToolCalls).where(eq(agentToolCalls.executionId, e.id)).orderBy(asc(agentToolCalls.id)).all();
      return executionView(e, calls, db.select().from(agentUsage).where(eq(agentUsage.executionId, e.id)).get());
    },

    /** An agent by id for Hearth's own callers (communicators), who check its organization themselves. */
    byId: (id: string) => db.select().from(agents).where(eq(agents.id, id)).get(),

    /** Agents of a workspace that are active, for MCP's list_agents and invoke_agent. */
    active: (p: Principal, productId?: string) => db.select().from(agents).where(and(eq(agents.productId, productOf(p, productId)), eq(agents.status, "active"))).orderBy(desc(agents.createdAt)).all(),
  };
}

export type AgentsService = ReturnType<typeof createAgentsService>;
