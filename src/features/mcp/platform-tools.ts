// The MCP gateway's own tools (spec §4.11): profile, workspace README, AI preferences, agents, and
// the MCP settings that only SYSTEM tokens see. Knowledge search and the integration tools come
// from the shared tool registry.
import { t } from "elysia";
import type { ToolDef } from "../../platform/tools/registry";
import type { KnowledgeEmbedder } from "../knowledge/embedder";
import type { WorkflowEngine } from "../workflows/engine/engine";
import { ENDED } from "../workflows/engine/engine";
import type { McpSettingsService } from "./settings";
import { profile, workspaceReadme, type InfoDeps } from "./workspace-info";

export interface McpTool extends ToolDef<any> {
  /** Listed and callable only with a SYSTEM token (spec §5 rule 7). */
  systemOnly?: boolean;
  /** Paid from the strict rate budget. */
  strict?: boolean;
}

const INVOKE_WAIT_MS = 120_000;

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / (Math.sqrt(na * nb) || 1);
};

const FILLER = new Set(["from", "with", "that", "this", "what", "when", "which", "have", "your", "their", "about", "into", "there", "where", "would", "could", "should", "please"]);
/** Content words as 5-letter stems ("answers" and "answer" meet), fillers dropped. */
const stems = (s: string) => new Set((s.toLowerCase().match(/\p{L}{4,}/gu) ?? []).filter((w) => !FILLER.has(w)).map((w) => w.slice(0, 5)));
/** Content words a query shares with an agent's text: the lexical half of choosing an agent. */
const overlap = (q: string, d: string) => {
  const words = stems(q);
  return [...stems(d)].filter((w) => words.has(w)).length;
};
/** Each shared content word is worth this much cosine: enough to break a near tie of the small embedding model. */
const WORD_WEIGHT = 0.03;

export function platformTools(d: InfoDeps & { embedder: KnowledgeEmbedder; engine: WorkflowEngine; settings: McpSettingsService; toolsOf: (ctx: Parameters<ToolDef["run"]>[1]) => ToolDef<any>[] }, managementTools: McpTool[] = []): McpTool[] {
  /** The agent that fits a query best: embedding similarity plus shared content words (either alone if the other fails). */
  const nearestAgent = async <A extends { id: string; name: string; description: string; systemPrompt: string }>(query: string, agents: A[]): Promise<A> => {
    if (agents.length === 1) return agents[0]!;
    const texts = agents.map((a) => `${a.name}. ${a.description} ${a.systemPrompt}`);
    let sims = agents.map(() => 0);
    try {
      const { vectors } = await d.embedder.embed([query, ...texts]);
      sims = agents.map((_, i) => cosine(vectors[0]!, vectors[i + 1]!));
    } catch {
      // no embedder: words alone decide
    }
    const scores = agents.map((_, i) => sims[i]! + WORD_WEIGHT * overlap(query, texts[i]!));
    return agents[scores.indexOf(Math.max(...scores))]!;
  };

  return [
    {
      name: "get_my_profile",
      description: "Who you are acting as: the user, the API token (name, role, expiry), the workspace, and the user's AI preferences.",
      input: t.Object({}, { additionalProperties: false }),
      async run(_args, ctx) {
        const data = profile(d, ctx.principal);
        return { text: JSON.stringify(data, null, 2), data };
      },
    },
    {
      name: "get_workspace_info",
      description: "A README of this workspace: its knowledge bases, agents, integrations and tools, and how to use them. Read it first when unsure what is available.",
      input: t.Object({}, { additionalProperties: false }),
      async run(_args, ctx) {
        const text = workspaceReadme(d, ctx.principal, d.toolsOf(ctx));
        return { text, data: { readme: text } };
      },
    },
    {
      name: "update_my_ai_preferences",
      description: "Set how answers should be for this user (chat, agents): language, tone, answer length, free notes. An empty string clears a field.",
      input: t.Object(
        {
          language: t.Optional(t.String({ maxLength: 64, description: 'e.g. "German" or "en"' })),
          tone: t.Optional(t.String({ maxLength: 200, description: 'e.g. "concise, technical"' })),
          answer_length: t.Optional(t.String({ maxLength: 64, description: 'e.g. "short", "detailed"' })),
          notes: t.Optional(t.String({ maxLength: 2000, description: "Anything else the assistant should keep in mind" })),
        },
        { additionalProperties: false },
      ),
      async run(args, ctx) {
        const data = d.preferences.update(ctx.principal.userId, args);
        return { text: `Preferences saved: ${JSON.stringify(data)}`, data };
      },
    },
    {
      name: "list_agents",
      description: "The agents installed in this workspace, with their ids and what each is for. Run one with invoke_agent.",
      input: t.Object({}, { additionalProperties: false }),
      async run(_args, ctx) {
        const agents = d.agents.active(ctx.principal, ctx.productId).map((a) => ({ id: a.id, name: a.name, description: a.description, template: a.template, tools: a.tools }));
        return { text: agents.length ? agents.map((a) => `- ${a.name} (id ${a.id}): ${a.description}`).join("\n") : "No agent is installed in this workspace.", data: { agents } };
      },
    },
    {
      name: "invoke_agent",
      description: "Ask an agent of this workspace to do a task and wait for its answer (up to 2 minutes). Without agent_id, the agent whose description best fits the query runs.",
      strict: true,
      input: t.Object(
        {
          query: t.String({ minLength: 1, maxLength: 8000, description: "The task or question, in natural language" }),
          agent_id: t.Optional(t.String({ format: "uuid", description: "Which agent (list_agents); default: the best fit" })),
        },
        { additionalProperties: false },
      ),
      async run(args, ctx) {
        const active = d.agents.active(ctx.principal, ctx.productId);
        const agent = args.agent_id ? d.agents.requireAgent(ctx.principal, args.agent_id) : active.length ? await nearestAgent(args.query, active) : undefined;
        if (!agent) throw new Error("No agent is installed in this workspace; install one from GET /api/agent-base/catalog");
        const { execution } = await d.agents.invoke(ctx.principal, agent.id, { query: args.query }, false, "mcp");
        let step = 0;
        ctx.progress?.(step, `agent "${agent.name}" started (execution ${execution.id})`);
        const timer = setInterval(() => ctx.progress?.(++step, `agent "${agent.name}" is working`), 2000);
        try {
          const ended = await d.engine.until(execution.id, ENDED, INVOKE_WAIT_MS);
          const out = (ended.output ?? {}) as { text?: string; sources?: { index: number; file_name: string; page?: number | null }[] };
          const data = { agent_id: agent.id, agent_name: agent.name, execution_id: ended.id, status: ended.status, output: ended.output, error: ended.error };
          if (!ENDED.includes(ended.status)) return { text: `Agent "${agent.name}" is still ${ended.status} after 2 minutes; execution ${ended.id}.`, data };
          if (ended.status !== "succeeded") throw new Error(`agent "${agent.name}" ${ended.status}: ${ended.error ?? "no reason given"} (execution ${ended.id})`);
          const cites = out.sources?.length ? `\n\nSources:\n${out.sources.map((s) => `[${s.index}] ${s.file_name}${s.page ? `, page ${s.page}` : ""}`).join("\n")}` : "";
          return { text: `${out.text ?? JSON.stringify(ended.output)}${cites}\n\n(agent "${agent.name}", execution ${ended.id})`, data };
        } finally {
          clearInterval(timer);
        }
      },
    },
    {
      name: "get_mcp_settings",
      description: "This workspace's MCP settings: tools switched off, and the default number of passages of search_knowledge.",
      systemOnly: true,
      input: t.Object({}, { additionalProperties: false }),
      async run(_args, ctx) {
        const data = d.settings.get(ctx.productId);
        return { text: JSON.stringify(data), data };
      },
    },
    {
      name: "update_mcp_settings",
      description: "Change this workspace's MCP settings: disabled_tools (names hidden from every MCP client of the workspace), default_top_k.",
      systemOnly: true,
      input: t.Object(
        {
          disabled_tools: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 128 }), { maxItems: 200 })),
          default_top_k: t.Optional(t.Integer({ minimum: 1, maximum: 20 })),
        },
        { additionalProperties: false },
      ),
      async run(args, ctx) {
        const data = d.settings.update(ctx.productId, args);
        return { text: `MCP settings saved: ${JSON.stringify(data)}`, data };
      },
    },
    ...managementTools,
  ];
}
