// Builds every service once from the configuration and storage; tests call it with their own.
import { join } from "node:path";
import type { Config } from "./platform/config";
import type { Storage } from "./platform/db/database";
import { systemClock, type Clock } from "./platform/clock";
import { createLogger, type Logger } from "./platform/log";
import { createRateLimiter } from "./platform/rate-limit";
import type { Authenticator } from "./platform/auth/authenticator";
import { createAccountsService } from "./features/accounts/service";
import { bootstrapFirstOwner, type BootstrapResult } from "./features/accounts/bootstrap";
import { createWorkspacesService } from "./features/workspaces/service";
import { createTokenAuditLog } from "./features/tokens/audit-log";
import { createTokensService } from "./features/tokens/service";
import { createActivityService } from "./features/activity/service";
import { createHealthRegistry } from "./features/system/health";
import { backupDatabase } from "./features/system/backup";
import { createJobQueue } from "./platform/jobs/queue";
import { createWalSync } from "./platform/db/durability";
import { createKnowledgeService, INGEST_JOB, EMBED_JOB } from "./features/knowledge/service";
import { createKnowledgeEmbedder } from "./features/knowledge/embedder";
import { createVectorStore } from "./features/knowledge/vector-store";
import { createKeywordStore } from "./features/knowledge/keyword-store";
import { createKnowledgeSearch } from "./features/knowledge/search";
import { createIngestion } from "./features/knowledge/ingest/pipeline";
import { createContentStore } from "./features/knowledge/content";
import { modelPresence, modelSpec } from "./platform/ml/models";
import { createChatService } from "./features/assistant/service";
import { createLlm } from "./platform/llm/create";
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
import { createSecretBox, loadSecretKey } from "./platform/secrets";
import { ConfigError } from "./platform/config";
import pkg from "../package.json";

export const VERSION: string = pkg.version;

export interface ServiceOptions {
  config: Config;
  storage: Storage;
  clock?: Clock;
  log?: Logger;
}

const EXPIRY_SWEEP_MS = 60_000;
const MODEL_RETRY_MS = 60_000;
/** How long /health waits for the model server's status before it says "loading" (the probe goes on). */
const HEALTH_PROBE_WAIT_MS = 250;

export async function createServices({ config, storage, clock = systemClock, log = createLogger() }: ServiceOptions) {
  const { db } = storage;
  const accounts = createAccountsService({ db, clock });
  const workspaces = createWorkspacesService({ db, clock });
  const activity = createActivityService({ db, clock });
  const tokenAudit = createTokenAuditLog({ db, hotDb: storage.openConnection("NORMAL").db, clock, log, journalPath: join(config.dataDir, "token-uses.journal") });
  const tokens = createTokensService({
    db,
    clock,
    workspaces,
    audit: tokenAudit,
    organizationOf: (productId) => workspaces.organizationOf(productId),
  });
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
  // Two files at once, one per workspace: a workspace's backlog runs one file at a time as before,
  // and another workspace's upload takes the second slot instead of waiting for that file to end.
  const fairIngestion = { concurrency: 2, perGroup: 1, onFailed: ingestion.failed };
  jobs.register(INGEST_JOB, ingestion.ingest, fairIngestion);
  jobs.register(EMBED_JOB, ingestion.ingest, fairIngestion);
  const knowledge = createKnowledgeService({ db, clock, workspaces, jobs, content, sync, embedding: { model: config.embeddingModel, dim: embeddingSpec?.dim ?? 0 } });
  const search = createKnowledgeSearch({ db, knowledge, embedder, vectors, keywords: createKeywordStore(storage.sqlite) });
  const chats = createChatService({ db, clock, workspaces });
  const llm = createLlm({ provider: config.llmProvider, ollamaUrl: config.ollamaUrl, llmUrl: config.llmUrl, llmApiKey: config.llmApiKey, model: config.llmModel, clock });
  const assistant = createAssistant({ chats, knowledge, search, embedder, llm, log });
  const transcriber = createTranscriber({ modelsDir: config.modelsDir, model: config.whisperModel, offline: config.offline, maxSeconds: config.audioMaxMinutes * 60 });
  // One connection without an fsync per commit, for rows a crash may lose: event deltas, run records.
  const hotDb = storage.openConnection("NORMAL").db;
  const workflow = createWorkflowFeature({
    db,
    hotDb,
    clock,
    log,
    workspaces,
    knowledge,
    search,
    llm,
    transcribe: async (bytes, language, signal) => transcriber.transcribe(await prepareAudio(bytes, transcriber.maxSeconds), language, signal),
    concurrency: config.workflowConcurrency,
    httpAllow: config.httpAllow,
    publicUrl: config.publicUrl ?? `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}`,
    webhookRateLimit: config.webhookRateLimit,
  });
  const tools = createToolRegistry();
  for (const tool of [...knowledgeTools(search), ...workflowTools({ ...workflow, allow: workflow.allow })]) tools.add(tool);
  const box = createSecretBox(loadSecretKey(config.secretKey, config.dataDir));
  // A marker sealed under the first key: another key would leave every credential undecryptable, so it stops the start.
  try {
    box.open(accounts.ensureSetting("secret_key_check", box.seal("hearth")));
  } catch {
    throw new ConfigError("HEARTH_SECRET_KEY (or <data dir>/secret.key) is not the key this database's integration credentials were sealed with; restore the original key");
  }
  const integrations = createIntegrationsFeature({ db, clock, workspaces, box, tools, workflow });
  const preferences = createPreferencesService({ db, clock, userOfToken: (id) => tokens.describe(id)?.user_id });
  const agents = createAgentsFeature({ db, hotDb, clock, llm, tools, workspaces, knowledge, workflow, preferences });

  // Set by stop(): the embedding catch-up below outlives start() and must not touch a closed database.
  let stopped = false;

  /**
   * Queues vectors for files stored while the model was missing, once it is there. With no such
   * file nothing is loaded (idle Hearth holds no model): true when the model's files are present.
   */
  const catchUpEmbeddings = async () => {
    if (ingestion.unembedded().length === 0) return modelPresence(config.modelsDir, config.embeddingModel).ok;
    const status = () => embedder.status().catch((e: Error) => ({ state: "unavailable" as const, reason: e.message }));
    let state = await status();
    while (state.state === "loading") {
      await Bun.sleep(200);
      state = await status();
    }
    if (state.state !== "ok" || stopped) return false;
    const files = ingestion.unembedded();
    for (const f of files) jobs.enqueue(EMBED_JOB, { fileId: f.id }, { group: f.productId });
    if (files.length) jobs.wake();
    return true;
  };
  const limiter = createRateLimiter({ default: config.rateLimit, strict: config.rateLimitStrict }, clock);

  const bootstrap: BootstrapResult | null = await bootstrapFirstOwner(db, accounts, workspaces, {
    email: config.adminEmail,
    password: config.adminPassword,
  });
  const jwtSecret = config.jwtSecret ?? accounts.ensureSetting("jwt_secret", Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString("base64url"));

  const authenticator: Authenticator = {
    checkToken: (raw) => tokens.check(raw),
    userPrincipal: (id) => accounts.principalFor(id),
    organizationExists: (id) => accounts.organizationExists(id),
    recordTokenUse: (use) => tokenAudit.record(use),
    recordOverride: (use) =>
      activity.record({
        action: "organization_override",
        organizationId: use.targetOrganizationId,
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

  const health = createHealthRegistry();
  health.set("database", () => {
    storage.sqlite.query("SELECT 1").get();
    return { status: "ok" };
  });
  health.set("vectors", () => ({ status: "ok", detail: `sqlite-vec ${storage.vecVersion}` }));
  health.set("embedder", () => embedder.health());
  health.set("transcriber", () => transcriber.health());
  health.set("llm", async () => {
    const server = `${llm.provider === "ollama" ? "Ollama" : "an OpenAI-compatible server"} at ${llm.url}`;
    // /health answers at once: a model server that is slow to answer (the first probe, or one that
    // hangs) shows as loading while the probe goes on; its answer is cached for the next call.
    // A known answer is taken as it is: racing every call against a timer kept one 250 ms timer
    // per /health request alive (34-37 µs of CPU per request under load, more than a token request).
    const s = llm.knownStatus() ?? (await Promise.race([llm.status(), Bun.sleep(HEALTH_PROBE_WAIT_MS).then(() => undefined)]));
    if (!s) return { status: "loading", detail: `asking ${server}` };
    return s.state === "ok" ? { status: "ok", detail: `${s.model} via ${server} (context ${s.contextLength})` } : { status: "unavailable", reason: s.reason };
  });

  let sweeper: ReturnType<typeof setInterval> | undefined;
  let modelWatch: ReturnType<typeof setInterval> | undefined;

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
    catchUpEmbeddings,
    limiter,
    authenticator,
    health,
    jwtSecret,
    bootstrap,
    version: VERSION,
    // Token uses still in their journal are folded first, so the copy holds every acknowledged one.
    backup: (file: string) => {
      tokenAudit.flush();
      return backupDatabase(storage.sqlite, file);
    },

    /** Starts background work: the job runner (resuming unfinished jobs) and the expiry sweep. */
    start() {
      stopped = false;
      // Before any upload can start: pieces of uploads a crash cut off before their file row.
      const orphans = content.sweep();
      if (orphans > 0) log.info("knowledge: removed pieces of uploads cut off by a crash", { pieces: orphans });
      const strayVectors = vectors.sweepOrphansOnce();
      if (strayVectors > 0) log.info("knowledge: removed vectors of chunks deleted while they were embedded", { vectors: strayVectors });
      jobs.start();
      workflow.start();
      tokens.sweepExpired();
      sweeper = setInterval(() => tokens.sweepExpired(), EXPIRY_SWEEP_MS);
      sweeper.unref?.();
      // Without its model the embedder is retried every minute, so copying the model into the
      // models dir is enough: the files stored meanwhile get their vectors then.
      void catchUpEmbeddings().then((ok) => {
        if (ok || stopped) return;
        modelWatch = setInterval(async () => {
          if (!modelPresence(config.modelsDir, config.embeddingModel).ok) return;
          await embedder.stop(); // a worker that failed to load the model starts afresh
          if (await catchUpEmbeddings()) clearInterval(modelWatch);
        }, MODEL_RETRY_MS);
        modelWatch.unref?.();
      });
    },

    /** Stops background work; running jobs resume at the next start. */
    async stop() {
      stopped = true;
      if (sweeper) clearInterval(sweeper);
      if (modelWatch) clearInterval(modelWatch);
      mcp.gateway.stop();
      workflow.stop();
      await jobs.stop();
      await embedder.stop();
      await transcriber.stop();
      tokenAudit.close();
    },
  };
}

export type Services = Awaited<ReturnType<typeof createServices>>;
