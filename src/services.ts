// Builds every service once from the configuration and storage; tests call it with their own.
import { join } from "node:path";
import type { Config } from "./platform/config";
import { databasePart, type Storage } from "./platform/db/database";
import { systemClock, type Clock } from "./platform/clock";
import { createLogger, type Logger } from "./platform/log";
import { createRateLimiter } from "./platform/rate-limit";
import type { Authenticator } from "./platform/auth/authenticator";
import { createAccountsService } from "./features/accounts/service";
import { bootstrapFirstOwner, type BootstrapResult } from "./features/accounts/bootstrap";
import { createWorkspacesService } from "./features/workspaces/service";
import { createTokenAuditLog } from "./features/tokens/audit-log";
import { createTokensService } from "./features/tokens/service";
import { tokensPart } from "./features/tokens/part";
import { createActivityService } from "./features/activity/service";
import { backupApart, clearPartialBackups } from "./features/system/backup";
import { createJobQueue } from "./platform/jobs/queue";
import { createWalSync } from "./platform/db/durability";
import { createKnowledgeService } from "./features/knowledge/service";
import { EMBED_JOB, INGEST_JOB } from "./features/knowledge/files";
import { createKnowledgeEmbedder } from "./features/knowledge/embedder";
import { createVectorStore } from "./features/knowledge/vector-store";
import { createKeywordStore } from "./features/knowledge/keyword-store";
import { createKnowledgeSearch } from "./features/knowledge/search";
import { createEmbeddingsService } from "./features/knowledge/embeddings";
import { createIngestion } from "./features/knowledge/ingest/pipeline";
import { createContentStore } from "./features/knowledge/content";
import { modelSpec } from "./platform/ml/models";
import { knowledgePart } from "./features/knowledge/part";
import { checkParts, startParts, stopParts, type Part } from "./platform/parts";
import { createChatService } from "./features/assistant/service";
import { createLlm, llmPart } from "./platform/llm/create";
import { createAssistant } from "./features/assistant/chat";
import { createTranscriber } from "./features/transcription/transcriber";
import { prepareAudio } from "./features/transcription/audio";
import { createWorkflowFeature } from "./features/workflows/feature";
import { workflowTools } from "./features/workflows/tools";
import { knowledgeTools } from "./features/knowledge/tools";
import { createAgentsFeature } from "./features/agents/feature";
import { createToolRegistry } from "./platform/tools/registry";
import { createPreferencesService } from "./features/preferences/service";
import { createMcpFeature } from "./features/mcp/feature";
import { createCommunicatorFeature, createIntegrationsFeature } from "./features/integrations/feature";
import { integrationManagementTools } from "./features/mcp/integration-tools";
import { openSecretBox, SECRET_KEY_MARKER } from "./platform/secrets";
import { createSettings } from "./platform/settings/settings";
import pkg from "../package.json";

export const VERSION: string = pkg.version;

export interface ServiceOptions {
  config: Config;
  storage: Storage;
  clock?: Clock;
  log?: Logger;
}


export async function createServices({ config, storage, clock = systemClock, log = createLogger() }: ServiceOptions) {
  const { db } = storage;
  const settings = createSettings({ db, clock });
  const activity = createActivityService({ db, clock });
  const accounts = createAccountsService({ db, clock, activity });
  const workspaces = createWorkspacesService({ db, clock });
  const tokenAudit = createTokenAuditLog({ db, hotDb: storage.openConnection("NORMAL").db, clock, log, journalPath: join(config.dataDir, "token-uses.journal") });
  const tokens = createTokensService({
    db,
    clock,
    workspaces,
    audit: tokenAudit,
    organizationOf: (productId) => workspaces.organizationOf(productId),
  });
  // A removed user's tokens act as nobody: revoked in the removal's own turn, before the user's row changes.
  accounts.onRemoving((userId, info) => tokens.revokeAllOf(userId, { ipAddress: info.ipAddress, userAgent: info.userAgent, endpoint: info.endpoint }));
  // Commits whose fsync runs on the I/O pool instead of the event loop: a job's end, an upload.
  const sync = createWalSync(storage.path);
  const jobs = createJobQueue({ db, clock, log, sync });
  const embeddingSpec = modelSpec(config.embeddingModel);
  const embedder = createKnowledgeEmbedder({
    modelsDir: config.modelsDir,
    model: config.embeddingModel,
    offline: config.offline,
    maxTokens: embeddingSpec?.maxTokens ?? 256,
  });
  const vectors = createVectorStore(storage.sqlite, { memoryBudget: config.vectorMemoryMb * 2 ** 20 });
  const content = createContentStore(db);
  const ingestion = createIngestion({ db, clock, log, embedder, vectors, content, maxChunks: config.maxChunksPerFile });
  // Four files at once, one per workspace: a workspace's backlog runs one file at a time, and up to
  // three other workspaces' uploads start at once instead of waiting for a large file to end (with
  // two slots, a third workspace's 40-byte note waited 1 m 38 s behind two 4 MB files). Their
  // chunks and vectors take turns in the inference worker's lanes, so a small file is ready after
  // one part of each other file, not all of it.
  const fairIngestion = { concurrency: 4, perGroup: 1, onFailed: ingestion.failed };
  jobs.register(INGEST_JOB, ingestion.ingest, fairIngestion);
  jobs.register(EMBED_JOB, ingestion.ingest, fairIngestion);
  const knowledge = createKnowledgeService({ db, clock, workspaces, jobs, content, sync, embedding: { model: config.embeddingModel, dim: embeddingSpec?.dim ?? 0 } });
  const embeddings = createEmbeddingsService({ knowledge, embedder, vectors });
  const search = createKnowledgeSearch({ db, knowledge, embedder, vectors, keywords: createKeywordStore(storage.sqlite) });
  const chats = createChatService({ db, clock, workspaces });
  const llm = createLlm({ provider: config.llmProvider, ollamaUrl: config.ollamaUrl, llmUrl: config.llmUrl, llmApiKey: config.llmApiKey, model: config.llmModel, silenceMs: config.llmTimeoutS * 1000, clock });
  const assistant = createAssistant({ chats, knowledge, search, llm, log });
  const transcriber = createTranscriber({ modelsDir: config.modelsDir, model: config.whisperModel, offline: config.offline, maxSeconds: config.audioMaxMinutes * 60 });
  // One connection without an fsync per commit, for rows a crash may lose: event deltas, run records.
  const hotDb = storage.openConnection("NORMAL").db;
  const workflow = createWorkflowFeature({
    db,
    hotDb,
    clock,
    log,
    workspaces,
    search,
    basesOf: (productId) => knowledge.basesOfWorkspace(productId),
    llm,
    transcribe: async (bytes, language, signal) => transcriber.transcribe(await prepareAudio(bytes, transcriber.maxSeconds), language, signal),
    concurrency: config.workflowConcurrency,
    httpAllow: config.httpAllow,
    publicUrl: config.publicUrl ?? `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}`,
    webhookRateLimit: config.webhookRateLimit,
    retentionDays: config.executionRetentionDays,
  });
  const tools = createToolRegistry();
  for (const tool of [...knowledgeTools(search), ...workflowTools({ ...workflow, allow: workflow.allow })]) tools.add(tool);
  // Only this Hearth writes into <data dir>/backups/; what a killed backup left there goes now.
  clearPartialBackups(config.dataDir);
  const { box, replaced } = openSecretBox(config.secretKey, config.dataDir, {
    marker: (sealed) => settings.ensure(SECRET_KEY_MARKER, sealed),
    replaceMarker: (sealed) => settings.put(SECRET_KEY_MARKER, sealed),
    sealedCount: () => (storage.sqlite.query("SELECT count(*) AS n FROM integrations WHERE credentials IS NOT NULL").get() as { n: number }).n,
  });
  if (replaced) log.warn("secret key: not the database's first key, which sealed no credential; this one is used from now on");
  const preferences = createPreferencesService({ db, clock, userOfToken: (id) => tokens.describe(id)?.user_id });
  const agents = createAgentsFeature({ db, hotDb, clock, llm, tools, workspaces, knowledge, workflow, preferences });
  const integrations = createIntegrationsFeature({ db, clock, workspaces, box, tools, workflow, agents });

  const limiter = createRateLimiter({ default: config.rateLimit, strict: config.rateLimitStrict }, clock);

  const bootstrap: BootstrapResult | null = await bootstrapFirstOwner(db, accounts, workspaces, {
    email: config.adminEmail,
    password: config.adminPassword,
  });
  const jwtSecret = config.jwtSecret ?? settings.ensure("jwt_secret", Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString("base64url"));

  const authenticator: Authenticator = {
    checkToken: (raw) => tokens.check(raw),
    userPrincipal: (id, sessionVersion) => accounts.principalFor(id, sessionVersion),
    organizationExists: (id) => accounts.organizationExists(id),
    sessionHolds: (user) => accounts.principalFor(user.userId, user.sessionVersion) !== null,
    recordTokenUse: (use) => tokenAudit.record(use),
    recordOverride: (use) =>
      activity.record({
        action: "organization_override",
        // A super admin's override is the target's to see; anyone else's refused attempt is their
        // own organization's (whose admins should know; the target learns nothing of them).
        organizationId: use.actor.isSuperAdmin ? use.targetOrganizationId : use.actor.homeOrganizationId,
        actorUserId: use.actor.userId,
        targetOrganizationId: use.targetOrganizationId,
        method: use.method,
        endpoint: use.endpoint,
        statusCode: use.statusCode,
        ipAddress: use.ipAddress,
        userAgent: use.userAgent,
        detail: `from organization ${use.actor.homeOrganizationId}`,
      }),
  };

  const communicators = createCommunicatorFeature({ db, clock, log, jobs, integrations, agents, workflow, workspaces });
  const mcp = createMcpFeature({
    db,
    clock,
    log,
    version: VERSION,
    tools,
    embedder,
    engine: workflow.engine,
    limiter,
    authenticator,
    workspaces,
    knowledge,
    agents,
    accounts,
    tokens,
    preferences,
    managementTools: integrationManagementTools(integrations),
    integrationsOf: (p) => integrations.effective(p.productId, p.organizationId).map((i) => ({ title: i.title, type: i.type, scope: i.scope, tools: integrations.toolsOf(i).map((x) => x.name) })),
  });
  integrations.onChange((c) => mcp.gateway.toolsChanged(c.productId ? { productId: c.productId } : { organizationId: c.organizationId }));

  const knowledgeLife = knowledgePart({ content, vectors, ingestion, embedder, jobs, modelsDir: config.modelsDir, embeddingModel: config.embeddingModel, vecVersion: storage.vecVersion, log });
  // Started in this order and stopped in reverse: the MCP gateway stops first (no session outlives
  // what it calls), then the workflow engine and the job queue (their running work resumes at the
  // next start), then the models' workers; the token journal is folded and closed last, so every use
  // acknowledged before is in the table. /health reports the checks in this order.
  const parts: Part[] = [databasePart(storage.sqlite), tokensPart(tokens, tokenAudit), knowledgeLife, transcriber, llmPart(llm), jobs, workflow, mcp];

  return {
    config,
    storage,
    clock,
    log,
    accounts,
    workspaces,
    activity,
    tokens,
    tokenAudit,
    jobs,
    knowledge,
    content,
    embedder,
    vectors,
    search,
    embeddings,
    ingestion,
    chats,
    llm,
    assistant,
    transcriber,
    workflow,
    tools,
    agents,
    preferences,
    integrations,
    communicators,
    mcp,
    catchUpEmbeddings: knowledgeLife.catchUpEmbeddings,
    limiter,
    authenticator,
    health: { report: () => checkParts(parts) },
    jwtSecret,
    bootstrap,
    version: VERSION,
    // Token uses still in their journal are folded first, so the copy holds every acknowledged one.
    // The copy is made on a thread of its own (backupApart), so the server keeps answering meanwhile.
    backup: (file: string) => {
      tokenAudit.flush();
      return backupApart(storage.path, file);
    },

    /** Starts background work: the sweeps, the job runner and the engine (resuming unfinished work). */
    start: () => startParts(parts),

    /** Stops background work; running jobs and executions resume at the next start. */
    stop: () => stopParts(parts),
  };
}

export type Services = Awaited<ReturnType<typeof createServices>>;
