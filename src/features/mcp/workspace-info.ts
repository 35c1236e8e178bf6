// What an IDE assistant learns about where it is: a README of the workspace (knowledge bases,
// agents, integrations, tools and how to use them) and the caller's profile.
import type { TokenPrincipal } from "../../platform/auth/principal";
import type { ToolDef } from "../../platform/tools/registry";
import type { AccountsService } from "../accounts/service";
import type { AgentsService } from "../agents/service";
import type { KnowledgeService } from "../knowledge/service";
import type { PreferencesService } from "../preferences/service";
import type { TokensService } from "../tokens/service";
import type { WorkspacesService } from "../workspaces/service";

export interface IntegrationSummary {
  title: string;
  type: string;
  scope: string;
  tools: string[];
}

export interface InfoDeps {
  workspaces: WorkspacesService;
  knowledge: KnowledgeService;
  agents: AgentsService;
  accounts: AccountsService;
  tokens: TokensService;
  preferences: PreferencesService;
  /** The effective active integrations of a workspace, once integrations exist. */
  integrationsOf?: (p: TokenPrincipal) => IntegrationSummary[];
}

export function workspaceReadme(d: InfoDeps, p: TokenPrincipal, tools: ToolDef<any>[]): string {
  const w = d.workspaces.requireVisible(p, p.productId);
  const bases = d.knowledge.listBases(p, p.productId);
  const agents = d.agents.active(p, p.productId);
  const integrations = d.integrationsOf?.(p) ?? [];
  const lines = [
    `# Workspace "${w.name}"`,
    w.description ? `\n${w.description}` : "",
    "\nThis is a Hearth workspace: the team's documents, agents and tools, on its own server.",
    "\n## Knowledge bases",
    ...(bases.length ? bases.map((b) => `- **${b.kb.name}** (${b.fileCount} file${b.fileCount === 1 ? "" : "s"})${b.kb.description ? `: ${b.kb.description}` : ""}`) : ["- none yet"]),
    "\nAsk `search_knowledge` with a natural-language description of what you need (top_k 3 for a focused answer, 10 to explore); cite the passages it returns.",
    "\n## Agents",
    ...(agents.length ? agents.map((a) => `- **${a.name}** (id ${a.id}): ${a.description || "no description"}`) : ["- none installed"]),
    "\nRun one with `invoke_agent` (`query`, and `agent_id` to choose; without it the agent whose description fits the query best runs).",
    "\n## Integrations",
    ...(integrations.length ? integrations.map((i) => `- **${i.title}** (${i.type}, ${i.scope}): ${i.tools.join(", ") || "no tools"}`) : ["- none active"]),
    "\n## Tools",
    ...tools.map((t) => `- \`${t.name}\`: ${t.description.split("\n")[0]}`),
  ];
  return lines.filter((l) => l !== "").join("\n");
}

export function profile(d: InfoDeps, p: TokenPrincipal) {
  const user = d.accounts.getUser(p.userId);
  const token = d.tokens.describe(p.tokenId);
  const w = d.workspaces.requireVisible(p, p.productId);
  return {
    user: user ? { id: user.id, email: user.email, name: user.name ?? null, role: user.role } : null,
    token: token ? { id: token.id, name: token.name, prefix: token.prefix, role: token.role, expires_at: token.expires_at } : null,
    workspace: { id: w.id, name: w.name, organization_id: w.organizationId },
    ai_preferences: d.preferences.get(p.userId),
  };
}
