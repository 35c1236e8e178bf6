// Login, the caller's profile, organizations, their users and their security trail.
import { Elysia, t } from "elysia";
import { signSession, type AuthPlugin } from "../../platform/auth/plugin";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/log";
import { unauthorized } from "../../platform/errors";
import { requestMeta } from "../../platform/http/request-meta";
import { PaginationQuery, pageWindow } from "../../platform/http/pagination";
import { IdParams, errors, ok, okList } from "../../platform/http/schemas";
import type { ActivityRow, ActivityService } from "../activity/service";
import { ActivityEntry, ActivityQuery, ChangePasswordBody, CreateOrganizationBody, CreateUserBody, LoginBody, Me, Organization, Session, UpdateUserBody, User, UserParams } from "./model";
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

export function accountRoutes({ auth, accounts, activity, clock, log }: { auth: AuthPlugin; accounts: AccountsService; activity: ActivityService; clock: Clock; log: Logger }) {
  const { signIn, confirmPassword } = createSignIn({ accounts, activity, now: () => clock.now(), log });
  const trailInfo = (request: Request) => {
    const meta = requestMeta(request);
    return { method: meta.method, endpoint: meta.path, ipAddress: meta.ip, userAgent: meta.userAgent };
  };

  return new Elysia()
    .use(auth)
    .post(
      "/api/auth/login",
      async ({ body, request, sessionJwt }) => {
        const user = await signIn({ ...body, ...trailInfo(request) });
        const session = await signSession(sessionJwt, user, clock.now());
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
    .put(
      "/api/auth/password",
      async ({ principal, body, request, sessionJwt }) => {
        const user = accounts.getUser(principal.userId);
        if (!user || principal.kind !== "user") throw unauthorized("Invalid or expired session; sign in again at POST /api/auth/login");
        const info = trailInfo(request);
        await confirmPassword({ email: user.email, password: body.current_password, ...info }, user.id);
        const changed = await accounts.changeOwnPassword(principal, body.new_password, info);
        const session = await signSession(sessionJwt, changed, clock.now());
        return { success: true as const, message: "Password changed; every other session ended", data: { token: session.token, expires_at: session.expiresAt.toISOString(), user: userView(changed) } };
      },
      {
        auth: "jwt",
        body: ChangePasswordBody, parse: "json",
        response: { 200: ok(Session), ...errors(400, 401, 403, 422, 429) },
        detail: {
          tags: ["Authentication"],
          summary: "Change your password; returns a new session, every other one ends",
          description: "A wrong current_password is 403 and counts against the account's sign-in budget like a failed sign-in.",
        },
      },
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
      async ({ principal, params, body, set, request }) => {
        const user = await accounts.createUser(principal, params.id, body, trailInfo(request));
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
    .put(
      "/api/organizations/:id/users/:user_id",
      async ({ principal, params, body, request }) => {
        const user = await accounts.updateUser(principal, params.id, params.user_id, body, trailInfo(request));
        return { success: true as const, message: "User updated", data: userView(user) };
      },
      {
        auth: "jwt",
        params: UserParams,
        body: UpdateUserBody, parse: "json",
        response: { 200: ok(User), ...errors(400, 401, 403, 404, 409, 422, 429) },
        detail: {
          summary: "Rename a user, change their role or set a new password (owner/admin, or super admin)",
          description: "A new password ends every session of the user. Owners are changed, and made, only by owners; the last owner keeps the role (409).",
        },
      },
    )
    .delete(
      "/api/organizations/:id/users/:user_id",
      ({ principal, params, request }) => {
        accounts.removeUser(principal, params.id, params.user_id, trailInfo(request));
        return { success: true as const, message: "User removed; their sessions ended and their API tokens are revoked", data: { id: params.user_id.toLowerCase() } };
      },
      {
        auth: "jwt",
        params: UserParams,
        response: { 200: ok(t.Object({ id: UserParams.properties.user_id })), ...errors(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Remove a user (owner/admin, or super admin)",
          description: "Their sessions end at once and every API token they created is revoked (on its audit log). The last owner cannot be removed (409). The email can be added again later.",
        },
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
        detail: { summary: "Security trail: super-admin overrides, sign-ins, users and passwords changed, newest first" },
      },
    );
}
