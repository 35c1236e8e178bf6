// Integrations of an organization: create (a template without credentials, active with them), read,
// update, delete; scope set by the service (local with a workspace, global without); the shadow
// rule (a workspace's active local integration replaces the global ones of its type); credentials
// sealed with the secret key and never returned.
import { and, count, desc, eq, isNull, or } from "drizzle-orm";
import type { TSchema } from "@sinclair/typebox";
import { problemText, validatorFor, nonBlank } from "../../platform/validator";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { conflict, forbidden, invalid, notFound, unprocessable } from "../../platform/errors";
import type { PageWindow } from "../../platform/http/pagination";
import { isOrgAdmin, type Principal } from "../../platform/auth/principal";
import type { SecretBox } from "../../platform/secrets";
import type { WorkspacesService } from "../workspaces/service";
import { redact, type Connector, type ConnectorTool } from "./connectors/connector";
import type { AllowList } from "../../platform/net/safe-fetch";
import { integrations } from "./table";

export type IntegrationRow = typeof integrations.$inferSelect;

/** Every string in a credentials object: what no message may repeat. */
const secretsOf = (value: unknown): string[] => (typeof value === "string" ? [value] : value && typeof value === "object" ? Object.values(value).flatMap(secretsOf) : []);

/** An error whose message (and stack) no longer carry the credentials, its class and fields kept (a RetryableError's wait). */
function redacted(e: unknown, credentials: Record<string, unknown>): unknown {
  if (!(e instanceof Error)) return e;
  e.message = redact(e.message, secretsOf(credentials));
  if (e.stack) e.stack = redact(e.stack, secretsOf(credentials));
  return e;
}

type Change = { productId: string | null; organizationId: string };

export function createIntegrationsService(deps: { db: Db; clock: Clock; workspaces: WorkspacesService; box: SecretBox; connectors: Connector[]; agentWorkspace(agentId: string): string | undefined }) {
  const { db, clock, workspaces, box } = deps;
  const connectors = new Map(deps.connectors.map((c) => [c.type, c]));
  const listeners = new Set<(c: Change) => void>();
  const changed = (row: Pick<IntegrationRow, "productId" | "organizationId">) => listeners.forEach((l) => l({ productId: row.productId, organizationId: row.organizationId }));

  const connector = (type: string) => {
    const c = connectors.get(type);
    if (!c) throw unprocessable(`Unknown integration type "${type}"; the types are: ${[...connectors.keys()].join(", ")}`);
    return c;
  };
  const check = (schema: TSchema, value: unknown, what: string) => {
    const e = validatorFor(schema).Errors(value).First();
    if (e) throw unprocessable(problemText(e, what));
  };

  const urlFields = (c: Connector) => c.urlFields ?? ["base_url"];
  /** Where a URL field sends credentials, for comparison ("https://x/" is "https://x"; absent is the default). */
  const destination = (value: unknown) => (value === undefined ? "" : String(value).replace(/\/+$/, ""));
  /** A URL field is an http(s) URL: anything else would only fail at the first call. */
  const checkUrls = (c: Connector, config: Record<string, unknown>) => {
    for (const field of urlFields(c)) {
      const value = config[field];
      if (value === undefined) continue;
      const protocol = typeof value === "string" && URL.canParse(value) ? new URL(value).protocol : undefined;
      if (protocol !== "http:" && protocol !== "https:") throw unprocessable(`config.${field} must be an http or https URL`);
    }
  };

  /**
   * Titles are unique among the integrations one workspace sees (its own and the organization's
   * global ones): a tool two of them offer is told apart by title (`_integration`).
   */
  const requireFreeTitle = (organizationId: string, productId: string | null, title: string, id?: string) => {
    const where = and(eq(integrations.organizationId, organizationId), eq(integrations.title, title), productId ? or(eq(integrations.productId, productId), isNull(integrations.productId)) : undefined);
    const same = db.select({ id: integrations.id }).from(integrations).where(where).all();
    if (same.some((r) => r.id !== id)) throw conflict(`An integration titled "${title}" already exists ${productId ? "in this workspace or globally" : "in this organization"}; integrations a workspace sees need distinct titles`);
  };

  /**
   * A communicator's agent answers from its own workspace's knowledge, so it must be an agent of the
   * integration's workspace (of its organization, for a global integration).
   */
  const checkAgent = (config: Record<string, unknown>, productId: string | null, organizationId: string) => {
    if (config.agent_id === undefined) return;
    const home = typeof config.agent_id === "string" ? deps.agentWorkspace(config.agent_id) : undefined;
    if (!home || (productId ? home !== productId : workspaces.organizationOf(home) !== organizationId)) throw unprocessable(`config.agent_id is not an agent of ${productId ? "this integration's workspace" : "this organization"}`);
  };

  const credentialsOf = (row: IntegrationRow) => (row.credentials ? box.open<Record<string, unknown>>(row.credentials) : {});

  /** Visible: the caller's organization; a local one only to callers who see its workspace. */
  const requireIntegration = (p: Principal, id: string): IntegrationRow => {
    const row = db.select().from(integrations).where(eq(integrations.id, id.toLowerCase())).get();
    if (!row || row.organizationId !== p.organizationId || (row.productId && !workspaces.canSee(p, row.productId))) throw notFound("Integration");
    return row;
  };

  /** Owners/admins manage every integration; a workspace's manager or its SYSTEM token its local ones. */
  const requireManager = (p: Principal, row: Pick<IntegrationRow, "productId">) => {
    if (p.kind === "token") {
      if (p.tokenRole !== "SYSTEM" || !row.productId) throw forbidden("Only owners/admins, or a SYSTEM token for its workspace's local integrations, may change integrations");
      return;
    }
    if (isOrgAdmin(p)) return;
    if (!row.productId || !workspaces.canManage(p, workspaces.requireVisible(p, row.productId))) throw forbidden("Only owners and admins manage global integrations; a workspace's manager its local ones");
  };

  /** A workspace's effective active integrations: its local ones, and the global ones of types it has none of. */
  const effective = (productId: string, organizationId: string): IntegrationRow[] => {
    const rows = db
      .select()
      .from(integrations)
      .where(and(eq(integrations.organizationId, organizationId), eq(integrations.status, "active"), or(eq(integrations.productId, productId), isNull(integrations.productId))))
      .orderBy(integrations.createdAt)
      .all();
    const localTypes = new Set(rows.filter((r) => r.productId).map((r) => r.type));
    return rows.filter((r) => r.productId || !localTypes.has(r.type));
  };

  return {
    requireIntegration,
    effective,
    /** The effective set of a workspace the caller may see (404 otherwise). */
    effectiveFor: (p: Principal, productId: string) => effective(workspaces.requireVisible(p, productId).id, p.organizationId),
    connector: (type: string) => connectors.get(type),
    /** An integration's tools: its type's, or those its config describes (http). */
    toolsOf(row: Pick<IntegrationRow, "type" | "config">) {
      const c = connectors.get(row.type);
      return c ? (c.toolsFor?.(row.config) ?? c.tools) : [];
    },
    onChange: (l: (c: Change) => void) => void listeners.add(l),
    credentialsOf,
    /** Runs one of the integration's tools with its credentials; an error does not repeat them, whatever the service echoed. */
    async run(row: IntegrationRow, tool: ConnectorTool, args: unknown, signal: AbortSignal, allow: AllowList, replyServiceUrl?: string) {
      const credentials = credentialsOf(row);
      try {
        return await tool.run(args, { config: row.config, credentials, signal, allow, replyServiceUrl });
      } catch (e) {
        throw redacted(e, credentials);
      }
    },

    types: () => [...connectors.values()].map((c) => ({ type: c.type, description: c.description, config_schema: c.config, credentials_schema: c.credentials, tools: c.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input })) })),

    list(p: Principal, productId: string | undefined, win: PageWindow) {
      const pid = productId ?? (p.kind === "token" ? p.productId : undefined);
      if (pid) workspaces.requireVisible(p, pid);
      const where = and(eq(integrations.organizationId, p.organizationId), pid ? or(eq(integrations.productId, pid), isNull(integrations.productId)) : undefined);
      const total = db.select({ n: count() }).from(integrations).where(where).get()?.n ?? 0;
      const rows = db.select().from(integrations).where(where).orderBy(desc(integrations.createdAt), integrations.id).limit(win.pageSize).offset(win.offset).all();
      return { rows, total };
    },

    create(p: Principal, input: { title: string; type: string; productId?: string; config?: Record<string, unknown>; credentials?: Record<string, unknown> }): IntegrationRow {
      const title = nonBlank(input.title, "title");
      const c = connector(input.type);
      const productId = input.productId ? workspaces.requireVisible(p, input.productId).id : null;
      requireManager(p, { productId });
      requireFreeTitle(p.organizationId, productId, title);
      check(c.config, input.config ?? {}, "config");
      checkUrls(c, input.config ?? {});
      checkAgent(input.config ?? {}, productId, p.organizationId);
      if (input.credentials) check(c.credentials, input.credentials, "credentials");
      const now = new Date(clock.now());
      const row: IntegrationRow = {
        id: crypto.randomUUID(),
        organizationId: p.organizationId,
        productId,
        title,
        type: input.type,
        scope: productId ? "local" : "global",
        status: input.credentials ? "active" : "template",
        config: input.config ?? {},
        credentials: input.credentials ? box.seal(input.credentials) : null,
        createdBy: p.kind === "token" ? p.tokenId : p.userId,
        createdAt: now,
        updatedAt: now,
      };
      db.insert(integrations).values(row).run();
      changed(row);
      return row;
    },

    /** Renames, reconfigures, gives credentials (which activates a template), or disables/enables. */
    update(p: Principal, id: string, patch: { title?: string; config?: Record<string, unknown>; credentials?: Record<string, unknown>; status?: "active" | "disabled" }): IntegrationRow {
      const row = requireIntegration(p, id);
      requireManager(p, row);
      const title = patch.title === undefined ? row.title : nonBlank(patch.title, "title");
      if (title !== row.title) requireFreeTitle(row.organizationId, row.productId, title, row.id);
      const c = connector(row.type);
      if (patch.config) {
        check(c.config, patch.config, "config");
        checkUrls(c, patch.config);
        checkAgent(patch.config, row.productId, row.organizationId);
      }
      if (patch.credentials) check(c.credentials, patch.credentials, "credentials");
      // Whoever points stored credentials at another server must know them: else a manager who never
      // saw the token could send it to a server of their own.
      const moved = patch.config && urlFields(c).find((f) => destination(row.config[f]) !== destination(patch.config![f]));
      if (moved && row.credentials && !patch.credentials) throw unprocessable(`Changing config.${moved} changes where this integration's credentials are sent: send the credentials again with it`);
      const hasCredentials = Boolean(patch.credentials ?? row.credentials);
      if (patch.status === "active" && !hasCredentials) throw invalid("A template becomes active with its credentials: send credentials");
      const status = patch.status ?? (patch.credentials && row.status === "template" ? "active" : row.status);
      const next = {
        title,
        config: patch.config ?? row.config,
        credentials: patch.credentials ? box.seal(patch.credentials) : row.credentials,
        status,
        updatedAt: new Date(clock.now()),
      };
      db.update(integrations).set(next).where(eq(integrations.id, row.id)).run();
      changed(row);
      return { ...row, ...next };
    },

    /** Proves an integration's config and credentials against its service: a line on success, the service's error otherwise. */
    async test(p: Principal, id: string, signal: AbortSignal, allow: AllowList): Promise<{ ok: boolean; message: string }> {
      const row = requireIntegration(p, id);
      requireManager(p, row);
      if (!row.credentials) return { ok: false, message: "A template has no credentials to check; give it credentials first" };
      const c = connector(row.type);
      if (!c.check) return { ok: true, message: `${row.type} integrations cannot be checked without a real call; their tools will tell` };
      const credentials = credentialsOf(row);
      try {
        return { ok: true, message: redact(await c.check({ config: row.config, credentials, signal, allow }), secretsOf(credentials)) };
      } catch (e) {
        return { ok: false, message: (redacted(e, credentials) as Error).message };
      }
    },

    remove(p: Principal, id: string): IntegrationRow {
      const row = requireIntegration(p, id);
      requireManager(p, row);
      db.delete(integrations).where(eq(integrations.id, row.id)).run();
      changed(row);
      return row;
    },

    /** The organization's active integrations (spec: GET /api/external/integrations). */
    organizationActive: (p: Principal) =>
      db.select().from(integrations).where(and(eq(integrations.organizationId, p.organizationId), eq(integrations.status, "active"))).orderBy(integrations.createdAt).all().filter((r) => !r.productId || workspaces.canSee(p, r.productId)),
  };
}

export type IntegrationsService = ReturnType<typeof createIntegrationsService>;
