// Builds the MCP gateway: settings, the platform tools, and the gateway over the shared registry.
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/log";
import type { Authenticator } from "../../platform/auth/authenticator";
import type { RateLimiter } from "../../platform/rate-limit";
import type { ToolRegistry } from "../../platform/tools/registry";
import type { KnowledgeEmbedder } from "../knowledge/embedder";
import type { WorkflowEngine } from "../workflows/engine/engine";
import { createMcpGateway } from "./gateway";
import { platformTools, type McpTool } from "./platform-tools";
import { createMcpSettings } from "./settings";
import { profile, workspaceReadme, type InfoDeps } from "./workspace-info";

export function createMcpFeature(d: InfoDeps & { db: Db; clock: Clock; log: Logger; version: string; tools: ToolRegistry; embedder: KnowledgeEmbedder; engine: WorkflowEngine; limiter: RateLimiter; authenticator: Authenticator; managementTools?: McpTool[] }) {
  const settings = createMcpSettings({ db: d.db, clock: d.clock });
  const toolsOf = (ctx: { productId: string; organizationId: string }) => d.tools.forWorkspace(ctx);
  const gateway = createMcpGateway({
    version: d.version,
    clock: d.clock,
    tools: d.tools,
    platform: platformTools({ ...d, settings, toolsOf }, d.managementTools),
    settings,
    limiter: d.limiter,
    authenticator: d.authenticator,
    tokenUsable: (id) => d.tokens.usable(id),
    firstCallContext: (p, tools) => ({ readme: workspaceReadme(d, p, tools), profile: profile(d, p) }),
    log: d.log,
  });
  settings.onChange((productId) => gateway.toolsChanged({ productId }));
  // A part of Hearth (platform/parts.ts): the first to stop, so no session outlives what it calls.
  return { name: "mcp", settings, gateway, stop: () => gateway.stop() };
}

export type McpFeature = ReturnType<typeof createMcpFeature>;
