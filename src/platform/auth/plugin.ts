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
import { chargeRequest, type LimitClass, type LimitDecision, type RateLimiter } from "../rate-limit";
import { requestMeta, settleRequest, type RequestMeta } from "../http/request-meta";
import { PendingBody } from "../http/body";
import type { Authenticator } from "./authenticator";
import { credentialsEpoch } from "./revocations";
import type { Principal, TokenPrincipal, UserPrincipal } from "./principal";

type Via = "jwt" | "token" | "any" | "none" | "optional";
export type AuthSpec = Via | `${Via}:strict` | "token:raw";

export const SESSION_SECONDS = 12 * 60 * 60;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const INVALID_TOKEN = "Invalid API token";
/** How often a long-lived response re-checks its caller's credentials without a known change. */
const RECHECK_MS = 5_000;
const overBudget = (d: LimitDecision) => `Rate limit of ${d.limit} requests per minute exceeded; retry in ${d.reset} s`;

type SessionJwt = { verify(t: string): Promise<false | { sub?: string; sv?: unknown; exp?: number }> };
/** A verified session: its user, the user's session version it was signed at, and when it expires. */
type SessionClaims = { sub: string; sv: number; exp: number };

export interface AuthDeps {
  authenticator: Authenticator;
  limiter: RateLimiter;
  jwtSecret: string;
  /** Distinguishes the plugin of one app from another's in the same process (tests). */
  seed: string;
}

function credentials(headers: Headers): { token?: string; session?: string } {
  const apiToken = headers.get("x-api-token")?.trim();
  if (apiToken) return { token: apiToken };
  const authz = headers.get("authorization")?.trim();
  const bearer = authz && /^bearer\s+/i.test(authz) ? authz.replace(/^bearer\s+/i, "").trim() : undefined;
  if (bearer?.startsWith("svc_")) return { token: bearer };
  if (bearer) return { session: bearer };
  return {};
}

export function authPlugin(deps: AuthDeps) {
  const { authenticator, limiter } = deps;

  const limit = (key: string, cls: LimitClass, set: { headers: Record<string, unknown> }) => chargeRequest(limiter, key, cls, set.headers, overBudget);

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
  const verified = new Map<string, SessionClaims>();
  /** The claims of a remembered session: null when it expired, undefined when it was never verified. */
  const rememberedSession = (session: string): SessionClaims | null | undefined => {
    const hit = verified.get(session);
    if (!hit) return undefined;
    if (hit.exp * 1000 > Date.now()) return hit;
    verified.delete(session);
    return null;
  };
  const verifySession = async (session: string, sessionJwt: SessionJwt): Promise<SessionClaims | null> => {
    const claims = await sessionJwt.verify(session);
    if (!claims || typeof claims.sub !== "string" || typeof claims.exp !== "number") return null;
    // Sessions signed before session versions existed carry none: version 0, the first.
    const sv = claims.sv === undefined ? 0 : claims.sv;
    if (typeof sv !== "number") return null;
    const checked = { sub: claims.sub, sv, exp: claims.exp };
    if (verified.size >= 10_000) verified.delete(verified.keys().next().value!);
    verified.set(session, checked);
    return checked;
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

  /**
   * Who sent the request, by the credentials `via` accepts; undefined only for "optional" without
   * any. A promise only while a session seen for the first time has its signature checked: a token
   * or a remembered session is answered at once, so their requests wait for no turn of the
   * microtask queue here.
   */
  const identify = (
    via: Exclude<Via, "none">,
    headers: Headers,
    sessionJwt: SessionJwt,
    meta: RequestMeta,
    set: { headers: Record<string, unknown> },
    budget: LimitClass,
  ): Principal | undefined | Promise<Principal> => {
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
      const claims = rememberedSession(session);
      if (claims !== undefined) return sessionUser(claims, orgHeader, meta);
      return verifySession(session, sessionJwt).then((c) => sessionUser(c, orgHeader, meta));
    }
    if (via === "optional") return undefined;
    throw unauthorized(
      via === "jwt"
        ? "Authentication required: send Authorization: Bearer <JWT> from POST /api/auth/login"
        : "Authentication required: send an API token (X-API-Token or Authorization: Bearer svc_...) or a session JWT",
    );
  };

  /** The user of a verified session (null: none), acting as the organization it names, if any. */
  const sessionUser = (claims: SessionClaims | null, orgHeader: string | null, meta: RequestMeta): UserPrincipal => {
    const user = claims ? authenticator.userPrincipal(claims.sub, claims.sv) : null;
    if (!user) throw unauthorized("Invalid or expired session; sign in again at POST /api/auth/login");
    meta.principal = user; // so that a refused X-Organization-Id is audited with its actor
    return actAs(user, orgHeader, meta);
  };

  /** A caller who failed authentication also pays from its address's failure budget (429 past it). */
  const refused = (e: unknown, meta: RequestMeta, set: { headers: Record<string, unknown> }): never => {
    if (e instanceof AppError && e.status === 401) refuseRepeatedFailures(meta, set);
    throw e;
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

  /**
   * For a response that outlives its request (an event stream): whether its caller's credentials
   * still hold, asked again after any change of credentials in this process and every
   * RECHECK_MS (changes made by another process: `hearth reset-password`).
   */
  const credentialsLive = (request: Request, principal: Principal) => {
    // The token as presented: a regenerated token keeps its id, but this secret no longer works.
    const { token } = credentials(request.headers);
    const holds = () => {
      if (principal.kind === "user") return authenticator.sessionHolds(principal);
      const check = token === undefined ? undefined : authenticator.checkToken(token);
      return check?.ok === true && check.principal.tokenId === principal.tokenId;
    };
    let seen = -1;
    let checkedAt = 0;
    let valid = true;
    return () => {
      const now = Date.now();
      if (valid && (seen !== credentialsEpoch() || now - checkedAt >= RECHECK_MS)) {
        seen = credentialsEpoch();
        checkedAt = now;
        valid = holds();
      }
      return valid;
    };
  };

  return new Elysia({ name: "hearth-auth", seed: deps.seed })
    .use(jwt({ name: "sessionJwt", secret: deps.jwtSecret, alg: "HS256" }))
    .decorate("credentialsLive", credentialsLive)
    .macro({
      auth: (spec: AuthSpec) => {
        // Read once per route, not per request.
        const [via, cls] = spec.split(":") as [Via, "strict" | "raw" | undefined];
        const budget: LimitClass = cls === "strict" ? "strict" : "default";
        /** Lets an authenticated caller in and pays its budget; false when the handler reads the body itself ("raw"). */
        const admit = (principal: Principal | undefined, meta: RequestMeta, set: { headers: Record<string, unknown> }): boolean => {
          meta.principal = principal;
          if (cls === "raw") {
            // The handler records each operation's use itself; the HTTP request is not one.
            meta.tokenUse = undefined;
            return false;
          }
          // Optional credentials (/health) are never budgeted, like the anonymous call.
          if (principal && via !== "optional") limit(principal.kind === "token" ? `token:${principal.tokenId}` : `user:${principal.userId}`, budget, set);
          return true;
        };
        return {
          // Runs at the transform stage, the first one that knows the route; the body is still a
          // PendingBody then (app.ts), and is read only after the caller passed authentication and
          // its budget. So a bad credential is a 401 (and a token's use is audited and budgeted)
          // whatever the body holds, and costs Hearth no body read. Not an async function: a token
          // or a remembered session is checked at once, and only a body to read or a new
          // session's signature make Elysia wait (it awaits a hook that returns a call).
          // (Only named properties of the context are read here: Elysia fills in every property
          // for a hook that hands the whole context on.)
          transform(context) {
            const { request, sessionJwt, set } = context;
            const meta = requestMeta(request);
            meta.onSettle = audit;
            const readBody = () => {
              const body = context.body;
              if (body instanceof PendingBody) return body.read().then((value) => void (context.body = value));
            };
            if (via === "none") {
              limit(`ip:${meta.ip ?? "unknown"}`, budget, set);
              return readBody();
            }
            let who: ReturnType<typeof identify>;
            try {
              who = identify(via, request.headers, sessionJwt, meta, set, budget);
            } catch (e) {
              return refused(e, meta, set);
            }
            if (!(who instanceof Promise)) return admit(who, meta, set) ? readBody() : undefined;
            return who.then(
              (principal) => (admit(principal, meta, set) ? readBody() : undefined),
              (e) => refused(e, meta, set),
            );
          },
          resolve: ({ request }) => ({ principal: requestMeta(request).principal as Principal }),
        };
      },
    })
    // Settles the request (its audit rows) before the response leaves; errors are settled by the
    // error handler. No onAfterResponse fallback: a full test run with one logging found no
    // request it settled, and Elysia ran it in a setImmediate for every request. Not an async
    // function: Elysia awaits what it returns (a call), which is a promise only while the request's
    // row waits for its group; the promise resolves to nothing, so the response stays the handler's.
    .onAfterHandle({ as: "global" }, ({ request, set }) => settleRequest(request, typeof set.status === "number" ? set.status : 200));
}

export type AuthPlugin = ReturnType<typeof authPlugin>;

/** A session for the user; it carries their session version (`sv`), so a password change or removal ends it. */
export async function signSession(sessionJwt: { sign(v: Record<string, string | number>): Promise<string> }, user: { id: string; sessionVersion: number }, now: number) {
  const exp = Math.floor(now / 1000) + SESSION_SECONDS;
  return { token: await sessionJwt.sign({ sub: user.id, sv: user.sessionVersion, exp }), expiresAt: new Date(exp * 1000) };
}
