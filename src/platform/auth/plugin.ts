// The `auth` route option: who may call a route and from which rate budget it is paid.
//   auth: "jwt"   user session only (token management, organization admin)
//   auth: "token" API token only (the validate endpoint)
//   auth: "any"   API token or user session (everything a workspace integration may call)
//   auth: "none"  public, limited per client address (login)
//   auth: "optional" public and unlimited; credentials, when sent, must be valid and give `principal`
//                  (/health shows details to admins)
// Append ":strict" for the strict budget (upload, chat, transcription, executions).
//   auth: "token:raw" API token only; the handler budgets and audits each operation itself and
//                  reads the raw body (the MCP transport, where one HTTP request is not one call)
import { Elysia } from "elysia";
import { jwt } from "@elysiajs/jwt";
import { AppError, forbidden, invalid, notFound, unauthorized } from "../errors";
import { rateLimitHeaders, type LimitClass, type RateLimiter } from "../rate-limit";
import { requestMeta, settleRequest, type RequestMeta } from "../http/request-meta";
import { PendingBody } from "../http/body";
import type { Authenticator } from "./authenticator";
import type { Principal, TokenPrincipal, UserPrincipal } from "./principal";

type Via = "jwt" | "token" | "any" | "none" | "optional";
export type AuthSpec = Via | `${Via}:strict` | "token:raw";

export const SESSION_SECONDS = 12 * 60 * 60;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const INVALID_TOKEN = "Invalid API token";

type SessionJwt = { verify(t: string): Promise<false | { sub?: string; exp?: number }> };

export interface AuthDeps {
  authenticator: Authenticator;
  limiter: RateLimiter;
  jwtSecret: string;
  /** Distinguishes the plugin of one app from another's in the same process (tests). */
  seed: string;
}

function credentials(headers: Headers): { token?: string; session?: string } {
  const apiToken = headers.get("x-api-token")?.trim();
  const authz = headers.get("authorization")?.trim();
  const bearer = authz && /^bearer\s+/i.test(authz) ? authz.replace(/^bearer\s+/i, "").trim() : undefined;
  if (apiToken) return { token: apiToken };
  if (bearer?.startsWith("svc_")) return { token: bearer };
  if (bearer) return { session: bearer };
  return {};
}

export function authPlugin(deps: AuthDeps) {
  const { authenticator, limiter } = deps;

  const limit = (key: string, cls: LimitClass, set: { headers: Record<string, unknown> }) => {
    const decision = limiter.hit(key, cls);
    const headers = rateLimitHeaders(decision);
    Object.assign(set.headers, headers);
    if (!decision.allowed) {
      throw new AppError(429, "TooManyRequests", `Rate limit of ${decision.limit} requests per minute exceeded; retry in ${decision.reset} s`, undefined, headers);
    }
  };

  const checkToken = (raw: string, meta: RequestMeta): TokenPrincipal => {
    const result = authenticator.checkToken(raw);
    if (result.ok) {
      meta.tokenUse = { tokenId: result.principal.tokenId, action: "used" };
      return result.principal;
    }
    // A known token that may not be used still gets its attempt in its audit log.
    if (result.tokenId) meta.tokenUse = { tokenId: result.tokenId, action: result.action ?? "used" };
    throw unauthorized(INVALID_TOKEN);
  };

  // A verified session string always verifies the same way until it expires, so its signature is
  // checked once and remembered (bounded); the user is still loaded on every request.
  const verified = new Map<string, { sub: string; exp: number }>();
  const verifySession = async (session: string, sessionJwt: SessionJwt) => {
    const hit = verified.get(session);
    if (hit) {
      if (hit.exp * 1000 > Date.now()) return hit.sub;
      verified.delete(session);
      return null;
    }
    const claims = await sessionJwt.verify(session);
    if (!claims || typeof claims.sub !== "string" || typeof claims.exp !== "number") return null;
    if (verified.size >= 10_000) verified.delete(verified.keys().next().value!);
    verified.set(session, { sub: claims.sub, exp: claims.exp });
    return claims.sub;
  };

  const actAs = (user: UserPrincipal, header: string | null, meta: RequestMeta): UserPrincipal => {
    if (header === null) return user;
    const orgId = header.trim();
    if (!UUID.test(orgId)) throw invalid("X-Organization-Id must be a UUID");
    // Recorded before the checks, so refused attempts are on the trail too.
    meta.overrideOrganizationId = orgId.toLowerCase();
    if (!user.isSuperAdmin) throw forbidden("Only super admins may send X-Organization-Id");
    if (!authenticator.organizationExists(orgId)) throw notFound("Organization");
    return { ...user, organizationId: orgId.toLowerCase() };
  };

  /**
   * Failed authentication is paid from the client address's default budget; past it, failures
   * answer 429 instead of 401. Valid credentials from that address still pass (one bad client
   * behind a shared address or a proxy cannot lock the others out), and the success path pays
   * nothing for this.
   */
  const refuseRepeatedFailures = (meta: RequestMeta, set: { headers: Record<string, unknown> }) => {
    limit(`auth-failure:${meta.ip ?? "unknown"}`, "default", set);
  };

  /** Who sent the request, by the credentials `via` accepts; undefined only for "optional" without any. */
  const identify = async (
    via: Exclude<Via, "none">,
    headers: Headers,
    sessionJwt: SessionJwt,
    meta: RequestMeta,
    set: { headers: Record<string, unknown> },
    budget: LimitClass,
  ): Promise<Principal | undefined> => {
    const orgHeader = headers.get("x-organization-id");
    const { token, session } = credentials(headers);
    if (token !== undefined) {
      const principal = checkToken(token, meta);
      if (orgHeader !== null) throw forbidden("X-Organization-Id is for super-admin sessions, not API tokens");
      if (via === "jwt") {
        limit(`token:${principal.tokenId}`, budget, set);
        throw forbidden("This endpoint needs a user session (JWT); API tokens cannot manage tokens or accounts");
      }
      return principal;
    }
    if (session !== undefined) {
      if (via === "token") throw unauthorized("This endpoint validates API tokens; send one in X-API-Token or Authorization: Bearer svc_...");
      const userId = await verifySession(session, sessionJwt);
      const user = userId ? authenticator.userPrincipal(userId) : null;
      if (!user) throw unauthorized("Invalid or expired session; sign in again at POST /api/auth/login");
      meta.principal = user; // so that a refused X-Organization-Id is audited with its actor
      return actAs(user, orgHeader, meta);
    }
    if (via === "optional") return undefined;
    throw unauthorized(
      via === "jwt"
        ? "Authentication required: send Authorization: Bearer <JWT> from POST /api/auth/login"
        : "Authentication required: send an API token (X-API-Token or Authorization: Bearer svc_...) or a session JWT",
    );
  };

  /** Writes the request's audit rows; the response waits for the promise when there is one. */
  const audit = (meta: RequestMeta, statusCode: number): Promise<void> | undefined => {
    let durable: Promise<void> | undefined;
    if (meta.tokenUse) {
      durable = authenticator.recordTokenUse({
        tokenId: meta.tokenUse.tokenId,
        action: meta.tokenUse.action,
        ipAddress: meta.ip,
        userAgent: meta.userAgent,
        endpoint: meta.path,
        statusCode,
      });
    }
    if (meta.overrideOrganizationId && meta.principal?.kind === "user") {
      authenticator.recordOverride({
        actor: meta.principal,
        targetOrganizationId: meta.overrideOrganizationId,
        method: meta.method,
        endpoint: meta.path,
        statusCode,
        ipAddress: meta.ip,
        userAgent: meta.userAgent,
      });
    }
    return durable;
  };

  return new Elysia({ name: "hearth-auth", seed: deps.seed })
    .use(jwt({ name: "sessionJwt", secret: deps.jwtSecret, alg: "HS256" }))
    .macro({
      auth: (spec: AuthSpec) => {
        // Read once per route, not per request.
        const [via, cls] = spec.split(":") as [Via, "strict" | "raw" | undefined];
        const budget: LimitClass = cls === "strict" ? "strict" : "default";
        return {
          // Runs at the transform stage, the first one that knows the route; the body is still a
          // PendingBody then (app.ts), and is read only after the caller passed authentication and
          // its budget. So a bad credential is a 401 (and a token's use is audited and budgeted)
          // whatever the body holds, and costs Hearth no body read.
          async transform(context) {
            const { request, sessionJwt, set } = context;
            const meta = requestMeta(request);
            meta.onSettle = (statusCode) => audit(meta, statusCode);

            if (via === "none") {
              limit(`ip:${meta.ip ?? "unknown"}`, budget, set);
            } else {
              let principal: Principal | undefined;
              try {
                principal = await identify(via, request.headers, sessionJwt, meta, set, budget);
              } catch (e) {
                if (e instanceof AppError && e.status === 401) refuseRepeatedFailures(meta, set);
                throw e;
              }
              meta.principal = principal;
              if (cls === "raw") {
                // The handler records each operation's use itself; the HTTP request is not one.
                meta.tokenUse = undefined;
                return;
              }
              // Optional credentials (/health) are never budgeted, like the anonymous call.
              if (principal && via !== "optional") limit(principal.kind === "token" ? `token:${principal.tokenId}` : `user:${principal.userId}`, budget, set);
            }
            if (context.body instanceof PendingBody) context.body = await context.body.read();
          },
          resolve: ({ request }) => ({ principal: requestMeta(request).principal as Principal }),
        };
      },
    })
    // Settles the request (its audit rows) before the response leaves; errors are settled by the
    // error handler. No onAfterResponse fallback: a full test run with one logging found no
    // request it settled, and Elysia ran it in a setImmediate for every request.
    .onAfterHandle({ as: "global" }, async ({ request, set }) => {
      await settleRequest(request, typeof set.status === "number" ? set.status : 200);
    });
}

export type AuthPlugin = ReturnType<typeof authPlugin>;

/** Signs a user session; used by the login route. */
export async function signSession(sessionJwt: { sign(v: Record<string, string | number>): Promise<string> }, userId: string, now: number) {
  const exp = Math.floor(now / 1000) + SESSION_SECONDS;
  return { token: await sessionJwt.sign({ sub: userId, exp }), expiresAt: new Date(exp * 1000) };
}
