// createApp(services): error handler → request facts and body limits → explorer, console → feature routes.
// No body is read before its caller is authenticated: parse only wraps it (PendingBody), the
// `auth` route option reads it after the credentials and the rate limit are checked.
import { Elysia } from "elysia";
import { authPlugin } from "./platform/auth/plugin";
import { errorBody } from "./platform/errors";
import { errorHandler, toAppError } from "./platform/http/errors";
import { IDLE_TIMEOUT_S } from "./platform/http/long-request";
import type { Logger } from "./platform/log";
import { explorer } from "./platform/http/explorer";
import { consoleRoutes } from "./platform/http/console";
import { consoleAssets } from "./platform/http/console-assets";
import { beginRequest, type AddressSource } from "./platform/http/request-meta";
import { bodyTooLarge, MAX_REQUEST_BYTES, PendingBody } from "./platform/http/body";
import { knowledgeRoutes } from "./features/knowledge/routes";
import { searchRoutes } from "./features/knowledge/search-routes";
import { accountRoutes } from "./features/accounts/routes";
import { workspaceRoutes } from "./features/workspaces/routes";
import { tokenRoutes } from "./features/tokens/routes";
import { systemRoutes } from "./features/system/routes";
import { assistantRoutes } from "./features/assistant/routes";
import { transcriptionRoutes } from "./features/transcription/routes";
import { workflowRoutes } from "./features/workflows/routes";
import { executionRoutes } from "./features/workflows/execution-routes";
import { agentRoutes } from "./features/agents/routes";
import { mcpRoutes } from "./features/mcp/routes";
import { integrationRoutes } from "./features/integrations/routes";
import { communicatorRoutes } from "./features/integrations/communicator-routes";
import { triggerRoutes } from "./features/workflows/trigger-routes";
import { webhookRoutes } from "./features/workflows/webhook-routes";
import type { Services } from "./services";

let appSeed = 0;

export function createApp(s: Services) {
  const auth = authPlugin({ authenticator: s.authenticator, limiter: s.limiter, jwtSecret: s.jwtSecret, seed: `app-${++appSeed}` });

  // normalize: false makes unknown body fields an error (422) instead of silently dropping them,
  // so a typo such as `is_activ` never passes as a successful no-op.
  // The client's address is asked of the listening server through the app, not the hook's
  // `server`: a hook that names `server` makes Elysia define a getter on every request's context.
  const addresses: AddressSource = { requestIP: (request) => app.server?.requestIP(request) ?? null };
  const app = new Elysia({ normalize: false })
    .use(errorHandler(s.log))
    // A plain function: Elysia awaits a hook whose source looks asynchronous (an arrow returning a
    // call), which cost every request a turn of the microtask queue.
    .onRequest(({ request, set }) => {
      const meta = beginRequest(request, addresses);
      set.headers["x-request-id"] = meta.id;
      if (Number(request.headers.get("content-length") ?? 0) > MAX_REQUEST_BYTES) throw bodyTooLarge(MAX_REQUEST_BYTES);
    })
    .onParse({ as: "global" }, ({ request, contentType }) => new PendingBody(request, contentType))
    .use(explorer(s.version))
    .use(consoleRoutes(consoleAssets))
    .use(systemRoutes({ auth, health: s.health, version: s.version, dataDir: s.config.dataDir, clock: s.clock, backup: s.backup, backupKeep: s.config.backupKeep }))
    .use(accountRoutes({ auth, accounts: s.accounts, activity: s.activity, clock: s.clock, log: s.log }))
    .use(workspaceRoutes({ auth, workspaces: s.workspaces }))
    .use(tokenRoutes({ auth, tokens: s.tokens }))
    .use(searchRoutes({ auth, search: s.search, embeddings: s.embeddings }))
    .use(knowledgeRoutes({ auth, knowledge: s.knowledge }))
    .use(assistantRoutes({ auth, assistant: s.assistant, chats: s.chats, log: s.log }))
    .use(transcriptionRoutes({ auth, transcriber: s.transcriber }))
    .use(workflowRoutes({ auth, workflows: s.workflow.workflows, executions: s.workflow.executions }))
    .use(executionRoutes({ auth, executions: s.workflow.executions, events: s.workflow.events, registry: s.workflow.registry }))
    .use(triggerRoutes({ auth, triggers: s.workflow.triggers }))
    .use(webhookRoutes({ webhooks: s.workflow.webhooks, limiter: s.workflow.webhookLimiter }))
    .use(agentRoutes({ auth, agents: s.agents }))
    .use(integrationRoutes({ auth, integrations: s.integrations, allow: s.workflow.allow }))
    .use(communicatorRoutes({ communicators: s.communicators }))
    .use(mcpRoutes({ auth, gateway: s.mcp.gateway, allowedHosts: mcpHosts(s.config) }));
  return app;
}

/** Hosts whose pages may call /mcp: loopback, the listen address, the public URL's host. */
function mcpHosts(config: Services["config"]): string[] {
  const hosts = ["localhost", "127.0.0.1", "::1", config.host];
  if (config.publicUrl) hosts.push(new URL(config.publicUrl).hostname.replace(/^\[|\]$/g, ""));
  return hosts;
}

export type App = ReturnType<typeof createApp>;

/**
 * How the server listens (main.ts). Not in Bun's development mode, whose error page shows a stack
 * (Elysia turns it on unless NODE_ENV is production), and not sharing the port (Elysia's default
 * SO_REUSEPORT let a second Hearth of another data dir answer every other request from its own
 * database). What escapes Elysia's error handler (a bug) still gets the JSON envelope.
 */
export function listenOptions(host: string, port: number, log: Logger) {
  return {
    hostname: host,
    port,
    development: false,
    reusePort: false,
    // Hearth enforces its own limits with JSON errors (a declared length over them before any
    // byte is read, a body without one as it comes); Bun's own would answer 413 with no body.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    idleTimeout: IDLE_TIMEOUT_S,
    error(error: Error) {
      log.error("request failed outside the error handler", { error: String(error?.stack ?? error) });
      return Response.json(errorBody(toAppError("UNKNOWN", error)), { status: 500 });
    },
  };
}
