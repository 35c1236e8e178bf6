// createApp(services): error handler → request facts and body limits → explorer, console → feature routes.
import { Elysia } from "elysia";
import { authPlugin } from "./platform/auth/plugin";
import { errorHandler } from "./platform/http/errors";
import { explorer } from "./platform/http/explorer";
import { consoleRoutes } from "./platform/http/console";
import { consoleAssets } from "./platform/http/console-assets";
import { beginRequest } from "./platform/http/request-meta";
import { bodyTooLarge, parseJsonBody, parseMultipart, refuseOtherBody } from "./platform/http/body";
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
import type { Services } from "./services";

/** No request may carry more than this; routes that take files set their own, smaller caps. */
export const MAX_REQUEST_BYTES = 51 * 1024 * 1024;

let appSeed = 0;

export function createApp(s: Services) {
  const auth = authPlugin({ authenticator: s.authenticator, limiter: s.limiter, jwtSecret: s.jwtSecret, seed: `app-${++appSeed}` });

  // normalize: false makes unknown body fields an error (422) instead of silently dropping them,
  // so a typo such as `is_activ` never passes as a successful no-op.
  return new Elysia({ normalize: false })
    .use(errorHandler(s.log))
    .onRequest(({ request, server, set }) => {
      const meta = beginRequest(request, server?.requestIP(request)?.address ?? null);
      set.headers["x-request-id"] = meta.id;
      if (Number(request.headers.get("content-length") ?? 0) > MAX_REQUEST_BYTES) throw bodyTooLarge(MAX_REQUEST_BYTES);
    })
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      // Multipart bodies are read under the global cap; routes that take files check their own.
      if (contentType.startsWith("multipart/form-data")) return parseMultipart(request, MAX_REQUEST_BYTES);
      if (contentType.startsWith("application/json") || contentType.endsWith("+json")) return parseJsonBody(request);
      return refuseOtherBody(request, contentType);
    })
    .use(explorer(s.version))
    .use(consoleRoutes(consoleAssets))
    .use(systemRoutes({ auth, health: s.health, version: s.version, dataDir: s.config.dataDir, clock: s.clock, backup: s.backup }))
    .use(accountRoutes(auth, s.accounts, s.activity, s.clock))
    .use(workspaceRoutes(auth, s.workspaces))
    .use(tokenRoutes(auth, s.tokens))
    .use(searchRoutes(auth, { search: s.search, knowledge: s.knowledge, embedder: s.embedder, vectors: s.vectors }))
    .use(knowledgeRoutes(auth, s.knowledge))
    .use(assistantRoutes(auth, { assistant: s.assistant, chats: s.chats, log: s.log }))
    .use(transcriptionRoutes(auth, s.transcriber))
    .use(workflowRoutes(auth, { workflows: s.workflow.workflows, executions: s.workflow.executions }))
    .use(executionRoutes(auth, { executions: s.workflow.executions, events: s.workflow.events, registry: s.workflow.registry }))
    .use(agentRoutes(auth, s.agents));
}

export type App = ReturnType<typeof createApp>;
