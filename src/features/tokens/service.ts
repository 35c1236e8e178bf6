// API token lifecycle: create, read, update, revoke, renew, regenerate, delete, and authentication.
import { and, count, desc, eq, isNull, lte, isNotNull, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { conflict, forbidden, notFound, unprocessable } from "../../platform/errors";
import { nonBlank } from "../../platform/validator";
import type { PageWindow } from "../../platform/http/pagination";
import type { TokenCheck } from "../../platform/auth/authenticator";
import type { Principal, TokenPrincipal, TokenRole } from "../../platform/auth/principal";
import { credentialsChanged } from "../../platform/auth/revocations";
import { isOrgAdmin } from "../../platform/auth/principal";
import type { WorkspacesService } from "../workspaces/service";
import { apiTokens } from "./table";
import { generateToken, hashToken, isWellFormed, sameHash, tokenPrefix } from "./token-format";
import type { AuditAction, RequestInfo, TokenAuditLog } from "./audit-log";

export type TokenRow = typeof apiTokens.$inferSelect;
export type TokenStatus = "active" | "inactive" | "revoked" | "expired";

export interface NewToken {
  productId: string;
  tokenName: string;
  expiresAt?: Date | null;
  role?: TokenRole;
}

export function statusOf(t: TokenRow, now: number): TokenStatus {
  if (t.revokedAt) return "revoked";
  if (!t.isActive) return "inactive";
  if (t.expiresAt && t.expiresAt.getTime() <= now) return "expired";
  return "active";
}

interface Deps {
  db: Db;
  clock: Clock;
  workspaces: WorkspacesService;
  audit: TokenAuditLog;
  /** Looks up the workspace's organization for a token principal. */
  organizationOf: (productId: string) => string | undefined;
}

/** Usable tokens remembered by secret hash; the oldest is dropped past this many. */
const CACHE_SIZE = 10_000;

export function createTokensService({ db, clock, workspaces, audit, organizationOf }: Deps) {
  // Prepared once: authentication runs on every token request.
  const byHash = db.select().from(apiTokens).where(eq(apiTokens.tokenHash, sql.placeholder("hash"))).prepare();

  /**
   * The principal of each usable token by its secret's hash, so a request costs no query. Every
   * change of a token below and the deletion of a workspace empty it in the same synchronous step
   * as their commit, so the next request after a revoke, deactivate, regenerate or delete reads
   * the database again (and fails); an expiry is checked against the clock at each use.
   */
  const usable = new Map<string, { principal: TokenPrincipal; expiresAt: number | null }>();
  const forget = () => {
    usable.clear();
    credentialsChanged();
  };
  workspaces.onRemoved(forget);

  const requireUser = (principal: Principal) => {
    if (principal.kind !== "user") throw forbidden("Token management needs a user session (JWT)");
    return principal;
  };

  /**
   * The token if the caller may do `access` to it; another tenant's token is "not found", and so is
   * a deleted one except for its history. A SYSTEM token's metadata is visible to whoever manages
   * the workspace (it acts there), but only owners and admins change it or read its history: the
   * new secret of a regenerate, a dropped expiry or the admin's own audit trail are theirs alone.
   * A new secret acts as the token's creator, so only the creator or an owner/admin regenerates.
   */
  const requireManageable = (principal: Principal, id: string, access: "read" | "write" | "secret" | "history"): TokenRow => {
    const user = requireUser(principal);
    const token = db.select().from(apiTokens).where(eq(apiTokens.id, id.toLowerCase())).get();
    if (!token || (token.deletedAt && access !== "history")) throw notFound("API token");
    const workspace = workspaces.findVisible(user, token.productId);
    if (!workspace) throw notFound("API token");
    if (!workspaces.canManage(user, workspace)) throw forbidden("Only owners, admins and the workspace's creator may manage its tokens");
    if (token.role === "SYSTEM" && access !== "read" && !isOrgAdmin(user)) {
      throw forbidden("Only owners and admins may change a SYSTEM token or read its audit log");
    }
    if (access === "secret" && token.userId !== user.userId && !isOrgAdmin(user)) {
      throw forbidden("Only the token's creator, owners and admins may regenerate it: the new secret acts as its creator");
    }
    return token;
  };

  const futureDate = (d: Date, field: string) => {
    if (Number.isNaN(d.getTime())) throw unprocessable(`${field} is not a valid date`);
    if (d.getTime() <= clock.now()) throw unprocessable(`${field} must be in the future`);
    return d;
  };

  const now = () => new Date(clock.now());

  /**
   * Whether the token's expiry passed with no `expired` row yet (nobody used it since, and the
   * minute's sweep has not run): a change that ends the expiry writes that row first, so every
   * expiry stays on the log (spec §3).
   */
  const expiryUnlogged = (t: TokenRow) => Boolean(t.expiresAt && t.expiresAt.getTime() <= clock.now() && !t.expiryLoggedAt);


  return {
    statusOf: (t: TokenRow) => statusOf(t, clock.now()),

    /** What a token may say about itself (MCP's get_my_profile): never its secret or hash. */
    describe(id: string) {
      const t = db.select().from(apiTokens).where(eq(apiTokens.id, id)).get();
      return t ? { id: t.id, name: t.tokenName, prefix: t.tokenPrefix, role: t.role, user_id: t.userId, product_id: t.productId, expires_at: t.expiresAt?.toISOString() ?? null } : undefined;
    },

    /** Whether a token still works (not revoked, inactive, expired or deleted): long-lived sessions ask. */
    usable(id: string): boolean {
      const t = db.select().from(apiTokens).where(eq(apiTokens.id, id)).get();
      return Boolean(t && !t.deletedAt && statusOf(t, clock.now()) === "active");
    },
    /** When each token last authenticated a successful request (one query for a page of them). */
    lastUsed: (rows: readonly TokenRow[]) => audit.lastUsed(rows.map((t) => t.id)),

    create(principal: Principal, input: NewToken, info: RequestInfo): { row: TokenRow; secret: string } {
      const user = requireUser(principal);
      const workspace = workspaces.requireVisible(user, input.productId);
      if (!workspaces.canManage(user, workspace)) throw forbidden("Only owners, admins and the workspace's creator may create its tokens");
      if (input.role === "SYSTEM" && !isOrgAdmin(user)) throw forbidden("Only owners and admins may create SYSTEM tokens");
      const tokenName = nonBlank(input.tokenName, "token_name");
      const secret = generateToken();
      const at = now();
      const row: TokenRow = {
        id: crypto.randomUUID(),
        productId: workspace.id,
        userId: user.userId,
        tokenName,
        tokenPrefix: tokenPrefix(secret),
        tokenHash: hashToken(secret),
        role: input.role ?? "USER",
        isActive: true,
        expiresAt: input.expiresAt ? futureDate(input.expiresAt, "expires_at") : null,
        revokedAt: null,
        expiryLoggedAt: null,
        deletedAt: null,
        createdAt: at,
        updatedAt: at,
      };
      audit.transaction((tx) => {
        tx.insert(apiTokens).values(row).run();
        audit.write({ tokenId: row.id, action: "created", statusCode: 201, ...info }, tx);
      });
      return { row, secret };
    },

    list(principal: Principal, productId: string, w: PageWindow) {
      const user = requireUser(principal);
      const workspace = workspaces.requireVisible(user, productId);
      if (!workspaces.canManage(user, workspace)) throw forbidden("Only owners, admins and the workspace's creator may see its tokens");
      const where = and(eq(apiTokens.productId, workspace.id), isNull(apiTokens.deletedAt));
      const total = db.select({ n: count() }).from(apiTokens).where(where).get()?.n ?? 0;
      const rows = db.select().from(apiTokens).where(where).orderBy(desc(apiTokens.createdAt), apiTokens.id).limit(w.pageSize).offset(w.offset).all();
      return { rows, total };
    },

    get: (principal: Principal, id: string) => requireManageable(principal, id, "read"),

    /**
     * Every change is on the audit log: a later expiry (or none) is a renewal, as with renew, so an
     * expired token revived here is `renewed` too; an earlier one or a new name is `updated`, the
     * active flag `activated` or `deactivated`. A field set to what it already is changes nothing.
     */
    update(principal: Principal, id: string, patch: { tokenName?: string; isActive?: boolean; expiresAt?: Date | null }, info: RequestInfo): TokenRow {
      const token = requireManageable(principal, id, "write");
      if (token.revokedAt && patch.isActive === true) throw conflict("A revoked token cannot be activated again; create a new one");
      if (token.revokedAt && patch.expiresAt !== undefined) throw conflict("A revoked token's expiry cannot be changed; create a new one");
      const next: Partial<TokenRow> = {};
      const actions: AuditAction[] = [];
      if (patch.tokenName !== undefined) {
        const name = nonBlank(patch.tokenName, "token_name");
        if (name !== token.tokenName) next.tokenName = name;
      }
      if (patch.expiresAt !== undefined) {
        const to = patch.expiresAt === null ? null : futureDate(patch.expiresAt, "expires_at");
        const from = token.expiresAt;
        if (to?.getTime() !== from?.getTime()) {
          next.expiresAt = to;
          next.expiryLoggedAt = null;
          if (expiryUnlogged(token)) actions.push("expired");
          actions.push(to === null || (from !== null && to.getTime() > from.getTime()) ? "renewed" : "updated");
        }
      }
      if (next.tokenName !== undefined && !actions.includes("updated")) actions.push("updated");
      if (patch.isActive !== undefined && patch.isActive !== token.isActive) {
        next.isActive = patch.isActive;
        actions.push(patch.isActive ? "activated" : "deactivated");
      }
      if (actions.length === 0) return token;
      next.updatedAt = now();
      audit.transaction((tx) => {
        tx.update(apiTokens).set(next).where(eq(apiTokens.id, token.id)).run();
        for (const action of actions) audit.write({ tokenId: token.id, action, statusCode: 200, ...info }, tx);
      });
      forget();
      return { ...token, ...next };
    },

    revoke(principal: Principal, id: string, info: RequestInfo): TokenRow {
      const token = requireManageable(principal, id, "write");
      if (token.revokedAt) return token; // revoking twice changes nothing and logs nothing new
      const next = { revokedAt: now(), isActive: false, updatedAt: now() };
      audit.transaction((tx) => {
        tx.update(apiTokens).set(next).where(eq(apiTokens.id, token.id)).run();
        audit.write({ tokenId: token.id, action: "revoked", statusCode: 200, ...info }, tx);
      });
      forget();
      return { ...token, ...next };
    },

    renew(principal: Principal, id: string, expiresAt: Date, info: RequestInfo): TokenRow {
      const token = requireManageable(principal, id, "write");
      if (token.revokedAt) throw conflict("A revoked token cannot be renewed; create a new one");
      futureDate(expiresAt, "expires_at");
      if (!token.expiresAt) throw conflict("This token never expires; set an expiry with PUT /api/api-tokens/{id} instead");
      if (expiresAt.getTime() <= token.expiresAt.getTime()) {
        throw unprocessable(`expires_at must be later than the current expiry (${token.expiresAt.toISOString()})`);
      }
      const next = { expiresAt, expiryLoggedAt: null, updatedAt: now() };
      audit.transaction((tx) => {
        tx.update(apiTokens).set(next).where(eq(apiTokens.id, token.id)).run();
        if (expiryUnlogged(token)) audit.write({ tokenId: token.id, action: "expired" }, tx);
        audit.write({ tokenId: token.id, action: "renewed", statusCode: 200, ...info }, tx);
      });
      forget();
      return { ...token, ...next };
    },

    /** New secret, same id, name and history; the old secret stops working in the same commit. */
    regenerate(principal: Principal, id: string, info: RequestInfo): { row: TokenRow; secret: string } {
      const token = requireManageable(principal, id, "secret");
      if (token.revokedAt) throw conflict("A revoked token cannot be regenerated; create a new one");
      const secret = generateToken();
      const next = { tokenHash: hashToken(secret), tokenPrefix: tokenPrefix(secret), updatedAt: now() };
      audit.transaction((tx) => {
        tx.update(apiTokens).set(next).where(eq(apiTokens.id, token.id)).run();
        audit.write({ tokenId: token.id, action: "regenerated", statusCode: 200, ...info }, tx);
      });
      forget();
      return { row: { ...token, ...next }, secret };
    },

    /**
     * Revokes every live token the user created (the user is being removed: their tokens act as
     * them), each with its `revoked` row, in one commit; returns how many.
     */
    revokeAllOf(userId: string, info: RequestInfo): number {
      const live = db.select({ id: apiTokens.id }).from(apiTokens).where(and(eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt), isNull(apiTokens.deletedAt))).all();
      if (live.length === 0) return 0;
      const at = now();
      audit.transaction((tx) => {
        for (const { id } of live) {
          tx.update(apiTokens).set({ revokedAt: at, isActive: false, updatedAt: at }).where(eq(apiTokens.id, id)).run();
          audit.write({ tokenId: id, action: "revoked", statusCode: 200, ...info }, tx);
        }
      });
      forget();
      return live.length;
    },

    /** Soft delete: the token stops working and leaves every list; its audit log stays readable. */
    remove(principal: Principal, id: string, info: RequestInfo): void {
      const token = requireManageable(principal, id, "write");
      const at = now();
      audit.transaction((tx) => {
        tx.update(apiTokens).set({ deletedAt: at, isActive: false, updatedAt: at }).where(eq(apiTokens.id, token.id)).run();
        audit.write({ tokenId: token.id, action: "deleted", statusCode: 200, ...info }, tx);
      });
      forget();
    },

    auditLogs(principal: Principal, id: string, w: PageWindow) {
      const token = requireManageable(principal, id, "history");
      return audit.list(token.id, w);
    },

    /** Checks a presented secret. Never throws; the auth plugin turns failures into the spec's 401. */
    check(raw: string): TokenCheck {
      if (raw.length > 64) return { ok: false, reason: "invalid" }; // a token is 42 characters; nothing longer is hashed
      const hash = hashToken(raw);
      // Only a well-formed secret was ever remembered, so a hit needs no format check.
      const known = usable.get(hash);
      if (known && (known.expiresAt === null || known.expiresAt > clock.now())) return { ok: true, principal: known.principal };
      usable.delete(hash);
      if (!isWellFormed(raw)) return { ok: false, reason: "invalid" };
      const token = byHash.get({ hash });
      if (!token || !sameHash(token.tokenHash, hash)) return { ok: false, reason: "invalid" };
      // A deleted token's secret is still recognised, so that attempts with it reach its audit log.
      if (token.deletedAt) return { ok: false, tokenId: token.id, reason: "invalid" };
      const status = statusOf(token, clock.now());
      if (status === "expired") {
        // Only the request that marks the expiry records `expired`; later attempts record `used`.
        const marked = db
          .update(apiTokens)
          .set({ expiryLoggedAt: now() })
          .where(and(eq(apiTokens.id, token.id), isNull(apiTokens.expiryLoggedAt)))
          .returning({ id: apiTokens.id })
          .all();
        return { ok: false, tokenId: token.id, reason: "expired", action: marked.length > 0 ? "expired" : "used" };
      }
      if (status !== "active") return { ok: false, tokenId: token.id, reason: status };
      const organizationId = organizationOf(token.productId);
      if (!organizationId) return { ok: false, reason: "invalid" };
      const principal: TokenPrincipal = { kind: "token", tokenId: token.id, userId: token.userId, productId: token.productId, organizationId, tokenRole: token.role };
      if (usable.size >= CACHE_SIZE) usable.delete(usable.keys().next().value!);
      usable.set(hash, { principal, expiresAt: token.expiresAt?.getTime() ?? null });
      return { ok: true, principal };
    },

    /** Records `expired` for tokens whose expiry passed unseen; run periodically. */
    sweepExpired(): number {
      const at = now();
      const due = db
        .select({ id: apiTokens.id })
        .from(apiTokens)
        .where(and(isNotNull(apiTokens.expiresAt), lte(apiTokens.expiresAt, at), isNull(apiTokens.expiryLoggedAt), isNull(apiTokens.revokedAt), isNull(apiTokens.deletedAt)))
        .all();
      audit.transaction((tx) => {
        for (const { id } of due) {
          const marked = tx
            .update(apiTokens)
            .set({ expiryLoggedAt: at })
            .where(and(eq(apiTokens.id, id), isNull(apiTokens.expiryLoggedAt)))
            .returning({ id: apiTokens.id })
            .all();
          if (marked.length > 0) audit.write({ tokenId: id, action: "expired" }, tx);
        }
      });
      return due.length;
    },
  };
}

export type TokensService = ReturnType<typeof createTokensService>;
