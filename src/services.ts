// Builds every service once from the configuration and storage; tests call it with their own.
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
import { createKnowledgeService } from "./features/knowledge/service";
import pkg from "../package.json";

export const VERSION: string = pkg.version;

export interface ServiceOptions {
  config: Config;
  storage: Storage;
  clock?: Clock;
  log?: Logger;
}

const EXPIRY_SWEEP_MS = 60_000;

export async function createServices({ config, storage, clock = systemClock, log = createLogger() }: ServiceOptions) {
  const { db } = storage;
  const accounts = createAccountsService({ db, clock });
  const workspaces = createWorkspacesService({ db, clock });
  const activity = createActivityService({ db, clock });
  const tokenAudit = createTokenAuditLog({ db, hotDb: storage.openConnection("NORMAL").db, clock, log });
  const tokens = createTokensService({
    db,
    clock,
    workspaces,
    audit: tokenAudit,
    organizationOf: (productId) => workspaces.organizationOf(productId),
  });
  const jobs = createJobQueue({ db, clock, log });
  const knowledge = createKnowledgeService({ db, clock, workspaces, jobs, embedding: { model: config.embeddingModel, dim: 384 } });
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

  const health = createHealthRegistry();
  health.set("database", () => {
    storage.sqlite.query("SELECT 1").get();
    return { status: "ok" };
  });
  health.set("vectors", () => ({ status: "ok", detail: `sqlite-vec ${storage.vecVersion}` }));

  let sweeper: ReturnType<typeof setInterval> | undefined;

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
    limiter,
    authenticator,
    health,
    jwtSecret,
    bootstrap,
    version: VERSION,
    backup: (file: string) => backupDatabase(storage.sqlite, file),

    /** Starts background work: the job runner (resuming unfinished jobs) and the expiry sweep. */
    start() {
      jobs.start();
      tokens.sweepExpired();
      sweeper = setInterval(() => tokens.sweepExpired(), EXPIRY_SWEEP_MS);
      sweeper.unref?.();
    },

    /** Stops background work; running jobs resume at the next start. */
    async stop() {
      if (sweeper) clearInterval(sweeper);
      await jobs.stop();
    },
  };
}

export type Services = Awaited<ReturnType<typeof createServices>>;
