// Login, the caller's profile, organizations, their users and their security trail.
import { Elysia, t } from "elysia";
import { signSession, type AuthPlugin } from "../../platform/auth/plugin";
import type { Clock } from "../../platform/clock";
import { unauthorized } from "../../platform/errors";
import { requestMeta } from "../../platform/http/request-meta";
import { PaginationQuery, pageWindow } from "../../platform/http/pagination";
import { IdParams, errors, ok, okList } from "../../platform/http/schemas";
import type { ActivityRow, ActivityService } from "../activity/service";
import { ActivityEntry, ActivityQuery, CreateOrganizationBody, CreateUserBody, LoginBody, Me, Organization, Session, User } from "./model";
import type { AccountsService, UserRow } from "./service";
import { createSignIn } from "./sign-in";

export const userView = (u: UserRow) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  organization_id: u.organizationId,
  role: u.role,
  is_super_admin: u.isSuperAdmin,
  created_at: u.createdAt.toISOString(),
});

const activityView = (a: ActivityRow) => ({
  action: a.action,
  actor_user_id: a.actorUserId,
  target_organization_id: a.targetOrganizationId,
  method: a.method,
  endpoint: a.endpoint,
  status_code: a.statusCode,
  ip_address: a.ipAddress,
  user_agent: a.userAgent,
  detail: a.detail,
  created_at: a.createdAt.toISOString(),
});

export function accountRoutes({ auth, accounts, activity, clock }: { auth: AuthPlugin; accounts: AccountsService; activity: ActivityService; clock: Clock }) {
  const signIn = createSignIn({ accounts, activity, now: () => clock.now() });

  return new Elysia()
    .use(auth)
    .post(
      "/api/auth/login",
      async ({ body, request, sessionJwt }) => {
        const meta = requestMeta(request);
        const user = await signIn({ ...body, method: meta.method, endpoint: meta.path, ipAddress: meta.ip, userAgent: meta.userAgent });
        const session = await signSession(sessionJwt, user.id, clock.now());
        return { success: true as const, data: { token: session.token, expires_at: session.expiresAt.toISOString(), user: userView(user) } };
      },
      {
        auth: "none",
        body: LoginBody, parse: "json",
        response: { 200: ok(Session), ...errors(400, 401, 422, 429) },
        detail: {
          tags: ["Authentication"],
          summary: "Sign in; returns a JWT for 12 hours",
          description: "Limited per client address (slowing down after repeated failures) and per account: after 10 failed sign-ins in 15 minutes the account answers 429 until the window ends.",
          security: [],
        },
      },
    )
    .get(
      "/api/auth/me",
      ({ principal }) => {
        const user = accounts.getUser(principal.userId);
        if (!user) throw unauthorized("Invalid or expired session; sign in again at POST /api/auth/login");
        return {
          success: true as const,
          data: {
            auth_type: principal.kind === "token" ? ("api_token" as const) : ("jwt" as const),
            user: userView(user),
            acting_organization_id: principal.organizationId,
            ...(principal.kind === "token" ? { product_id: principal.productId, api_token_id: principal.tokenId } : {}),
          },
        };
      },
      { auth: "any", response: { 200: ok(Me), ...errors(400, 401, 403, 404, 429) }, detail: { tags: ["Authentication"], summary: "Who am I" } },
    )
    .guard({ detail: { tags: ["Organizations"] } })
    .post(
      "/api/organizations",
      ({ principal, body, set }) => {
        const org = accounts.createOrganization(principal, body.name);
        set.status = 201;
        return { success: true as const, message: "Organization created", data: { id: org.id, name: org.name, created_at: org.createdAt.toISOString() } };
      },
      { auth: "jwt", body: CreateOrganizationBody, parse: "json", response: { 201: ok(Organization, "Created"), ...errors(400, 401, 403, 422, 429) }, detail: { summary: "Create an organization (super admin)" } },
    )
    .get(
      "/api/organizations/:id/users",
      ({ principal, params, query }) => {
        const w = pageWindow(query);
        const { rows, total } = accounts.listUsers(principal, params.id, w);
        return { success: true as const, data: rows.map(userView), pagination: { page: w.page, pageSize: w.pageSize, total } };
      },
      { auth: "jwt", params: IdParams, query: PaginationQuery, response: { 200: okList(User), ...errors(400, 401, 403, 404, 429) }, detail: { summary: "List users of an organization" } },
    )
    .post(
      "/api/organizations/:id/users",
      async ({ principal, params, body, set }) => {
        const user = await accounts.createUser(principal, params.id, body);
        set.status = 201;
        return { success: true as const, message: "User created", data: userView(user) };
      },
      {
        auth: "jwt",
        params: IdParams,
        body: CreateUserBody, parse: "json",
        response: { 201: ok(User, "Created"), ...errors(400, 401, 403, 404, 409, 422, 429) },
        detail: { summary: "Add a user (owner/admin of that organization, or super admin)" },
      },
    )
    .get(
      "/api/organizations/:id/activity",
      ({ principal, params, query }) => {
        const id = accounts.trailOf(principal, params.id);
        return { success: true as const, data: activity.list(id, query.action, query.limit ?? 100).map(activityView) };
      },
      {
        auth: "jwt",
        params: IdParams,
        query: ActivityQuery,
        response: { 200: ok(t.Array(ActivityEntry)), ...errors(400, 401, 403, 404, 429) },
        detail: { summary: "Security trail: super-admin overrides and sign-ins, newest first" },
      },
    );
}
