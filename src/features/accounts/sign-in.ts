// Sign-in with password: both throttles, the password check, and the security trail.
import { forbidden, tooManyRequests, unauthorized } from "../../platform/errors";
import { createLogger, type Logger } from "../../platform/log";
import { storageFailure, writeFailures } from "../../platform/db/write-failures";
import type { ActivityEvent, ActivityService } from "../activity/service";
import { createLoginThrottle } from "./login-throttle";
import type { AccountsService, UserRow } from "./service";

export interface SignInAttempt {
  email: string;
  password: string;
  method: string;
  endpoint: string;
  ipAddress: string | null;
  userAgent: string | null;
}

/**
 * Sign-in, and the check of a signed-in user's current password before it changes: the same
 * budgets, so a stolen session cannot guess the password at speed either. A wrong current password
 * is 403 (the session itself is fine).
 */
export function createSignIn({ accounts, activity, now, log = createLogger() }: { accounts: AccountsService; activity: ActivityService; now: () => number; log?: Pick<Logger, "error"> }) {
  const throttle = createLoginThrottle(now);

  /**
   * The trail row of a sign-in. A database that refuses it (a full disk) must not lock everyone
   * out, the operator who would free the space first: the sign-in goes on, the lost row is logged.
   * (The throttles count in memory either way.)
   */
  const trail = (event: ActivityEvent) => {
    try {
      activity.record(event);
      writeFailures.cleared();
    } catch (e) {
      if (storageFailure(e)) writeFailures.note(e);
      log.error("sign-in not recorded in the security trail", { action: event.action, email: event.detail ?? null, user: event.actorUserId ?? null, ip: event.ipAddress, error: String(e) });
    }
  };

  const signIn = async (a: SignInAttempt, refuse = () => unauthorized("Wrong email or password"), actorUserId: string | null = null): Promise<UserRow> => {
    const email = a.email.trim().slice(0, 320).toLowerCase();
    const address = a.ipAddress ?? "unknown";
    const facts = { method: a.method, endpoint: a.endpoint, ipAddress: a.ipAddress, userAgent: a.userAgent, detail: email, actorUserId };

    // A password set since the window's failures began (hearth reset-password, an admin) lifts
    // the account's lock: the guesses were against a password that no longer exists.
    const version = accounts.sessionVersionOfEmail(email);
    const refusal = throttle.accountRefusal(email, version);
    if (refusal.retryAfter > 0) {
      // Recorded once per window: a flood of refused attempts must not flood the trail.
      if (refusal.first) trail({ action: "login_throttled", organizationId: accounts.organizationOfEmail(email), statusCode: 429, ...facts });
      throw tooManyRequests(`Too many failed sign-ins for this account; retry in ${refusal.retryAfter} s`, { "retry-after": String(refusal.retryAfter) });
    }
    const wait = throttle.delayMs(address);
    // Counted as failed from here (in the same synchronous step as the checks above) until the
    // password proves right, so concurrent guesses cannot all pass the budget before one is counted.
    const reservation = throttle.reserve(address, email, version);
    if (wait > 0) await Bun.sleep(wait);

    const { user, organizationId } = await accounts.verifyLogin(email, a.password);
    if (!user) {
      // Filed under the account's organization, so its admins see guessing; unknown emails under none.
      const refusal = refuse();
      trail({ action: "login_failed", organizationId, statusCode: refusal.status, ...facts });
      throw refusal;
    }
    throttle.succeeded(reservation);
    return user;
  };

  return {
    async signIn(a: SignInAttempt): Promise<UserRow> {
      const user = await signIn(a);
      trail({ action: "login_succeeded", organizationId: user.organizationId, actorUserId: user.id, statusCode: 200, method: a.method, endpoint: a.endpoint, ipAddress: a.ipAddress, userAgent: a.userAgent });
      return user;
    },
    /** The signed-in user's current password, checked like a sign-in (its failures count alike, filed with the user as actor). */
    confirmPassword: (a: SignInAttempt, userId: string) => signIn(a, () => forbidden("current_password is not your password"), userId),
  };
}
