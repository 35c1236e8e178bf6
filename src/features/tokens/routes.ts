// HTTP routes of spec §4.9 (token management, JWT only) and the validate endpoint (API token only).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { requestMeta } from "../../platform/http/request-meta";
import { PaginationQuery, pageWindow } from "../../platform/http/pagination";
import { IdParams, errors, iso, ok, okList } from "../../platform/http/schemas";
import { AuditEntry, AuditQuery, CreateTokenBody, RenewTokenBody, Token, TokenWithSecret, UpdateTokenBody, Validation } from "./model";
import type { TokenRow, TokensService } from "./service";
import type { AuditRow } from "./audit-log";

const date = (s: string | null | undefined) => (s === undefined ? undefined : s === null ? null : new Date(s));

export function tokenRoutes({ auth, tokens }: { auth: AuthPlugin; tokens: TokensService }) {
  const view = (r: TokenRow, lastUsedAt: Date | undefined) => ({
    id: r.id,
    token_name: r.tokenName,
    token_prefix: r.tokenPrefix,
    product_id: r.productId,
    role: r.role,
    is_active: r.isActive,
    status: tokens.statusOf(r),
    expires_at: iso(r.expiresAt),
    revoked_at: iso(r.revokedAt),
    last_used_at: iso(lastUsedAt),
    created_by: r.userId,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  });
  const one = (r: TokenRow) => view(r, tokens.lastUsed([r]).get(r.id));
  const many = (rows: TokenRow[]) => {
    const used = tokens.lastUsed(rows);
    return rows.map((r) => view(r, used.get(r.id)));
  };
  const auditView = (a: AuditRow) => ({
    action: a.action,
    ip_address: a.ipAddress,
    user_agent: a.userAgent,
    endpoint: a.endpoint,
    status_code: a.statusCode,
    count: a.count,
    created_at: a.createdAt.toISOString(),
  });
  const info = (request: Request) => {
    const m = requestMeta(request);
    return { ipAddress: m.ip, userAgent: m.userAgent, endpoint: m.path };
  };

  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["API tokens"], security: [{ session: [] }] } })
    .post(
      "/api/api-tokens",
      ({ principal, body, request, set }) => {
        const { row, secret } = tokens.create(
          principal,
          { productId: body.product_id, tokenName: body.token_name, expiresAt: date(body.expires_at), role: body.role },
          info(request),
        );
        set.status = 201;
        return { success: true as const, message: "API token created. Copy it now: it is displayed only once.", data: { ...one(row), token: secret } };
      },
      { auth: "jwt", body: CreateTokenBody, parse: "json", response: { 201: ok(TokenWithSecret, "Created"), ...errors(400, 401, 403, 404, 422, 429) }, detail: { summary: "Create a token" } },
    )
    .get(
      "/api/api-tokens/product/:productId",
      ({ principal, params, query }) => {
        const w = pageWindow(query);
        const { rows, total } = tokens.list(principal, params.productId, w);
        return { success: true as const, data: many(rows), pagination: { page: w.page, pageSize: w.pageSize, total } };
      },
      {
        auth: "jwt",
        params: t.Object({ productId: IdParams.properties.id }),
        query: PaginationQuery,
        response: { 200: okList(Token), ...errors(400, 401, 403, 404, 429) },
        detail: { summary: "List tokens of a workspace" },
      },
    )
    .get("/api/api-tokens/:id", ({ principal, params }) => ({ success: true as const, data: one(tokens.get(principal, params.id)) }), {
      auth: "jwt",
      params: IdParams,
      response: { 200: ok(Token), ...errors(400, 401, 403, 404, 429) },
      detail: { summary: "Get a token" },
    })
    .put(
      "/api/api-tokens/:id",
      ({ principal, params, body, request }) => ({
        success: true as const,
        message: "API token updated",
        data: one(tokens.update(principal, params.id, { tokenName: body.token_name, isActive: body.is_active, expiresAt: date(body.expires_at) }, info(request))),
      }),
      { auth: "jwt", params: IdParams, body: UpdateTokenBody, parse: "json", response: { 200: ok(Token), ...errors(400, 401, 403, 404, 409, 422, 429) }, detail: { summary: "Update name, active flag or expiry" } },
    )
    .post(
      "/api/api-tokens/:id/revoke",
      ({ principal, params, request }) => ({ success: true as const, message: "API token revoked", data: one(tokens.revoke(principal, params.id, info(request))) }),
      { auth: "jwt", params: IdParams, response: { 200: ok(Token), ...errors(400, 401, 403, 404, 429) }, detail: { summary: "Revoke a token" } },
    )
    .post(
      "/api/api-tokens/:id/renew",
      ({ principal, params, body, request }) => ({
        success: true as const,
        message: "API token renewed",
        data: one(tokens.renew(principal, params.id, new Date(body.expires_at), info(request))),
      }),
      { auth: "jwt", params: IdParams, body: RenewTokenBody, parse: "json", response: { 200: ok(Token), ...errors(400, 401, 403, 404, 409, 422, 429) }, detail: { summary: "Move the expiry forward" } },
    )
    .post(
      "/api/api-tokens/:id/regenerate",
      ({ principal, params, request }) => {
        const { row, secret } = tokens.regenerate(principal, params.id, info(request));
        return { success: true as const, message: "API token regenerated; the previous secret no longer works. Copy this one now.", data: { ...one(row), token: secret } };
      },
      { auth: "jwt", params: IdParams, response: { 200: ok(TokenWithSecret), ...errors(400, 401, 403, 404, 409, 429) }, detail: { summary: "Replace the secret, keep id and history" } },
    )
    .delete(
      "/api/api-tokens/:id",
      ({ principal, params, request }) => {
        tokens.remove(principal, params.id, info(request));
        return { success: true as const, message: "API token deleted", data: { id: params.id } };
      },
      { auth: "jwt", params: IdParams, response: { 200: ok(t.Object({ id: IdParams.properties.id })), ...errors(400, 401, 403, 404, 429) }, detail: { summary: "Delete a token; its audit log stays readable" } },
    )
    .get(
      "/api/api-tokens/:id/audit-logs",
      ({ principal, params, query }) => {
        // The spec's `limit` alone (default 100) keeps its meaning; page/pageSize page further back.
        const w = query.page === undefined && query.pageSize === undefined ? { page: 1, pageSize: query.limit ?? 100, offset: 0 } : pageWindow(query);
        const { rows, total } = tokens.auditLogs(principal, params.id, w);
        return { success: true as const, data: rows.map(auditView), pagination: { page: w.page, pageSize: w.pageSize, total } };
      },
      {
        auth: "jwt",
        params: IdParams,
        query: AuditQuery,
        response: { 200: okList(AuditEntry), ...errors(400, 401, 403, 404, 429) },
        detail: { summary: "Audit log, newest first" },
      },
    )
    .get(
      "/api/api-token/auth/validate",
      ({ principal }) => {
        if (principal.kind !== "token") throw new Error("unreachable: auth 'token' admits tokens only");
        return {
          success: true as const,
          authType: "api_token" as const,
          userId: principal.userId,
          productId: principal.productId,
          organizationId: principal.organizationId,
          apiTokenId: principal.tokenId,
          role: principal.tokenRole,
        };
      },
      { auth: "token", response: { 200: Validation, ...errors(401, 429) }, detail: { summary: "Validate the API token sent", security: [{ apiToken: [] }, { apiTokenBearer: [] }] } },
    );
}
