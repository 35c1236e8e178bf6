// Sign-in with password: both throttles, the password check, and the security trail.
import { tooManyRequests, unauthorized } from "../../platform/errors";
import type { ActivityService } from "../activity/service";
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

export function createSignIn({ accounts, activity, now }: { accounts: AccountsService; activity: ActivityService; now: () => number }) {
  const throttle = createLoginThrottle(now);

  return async function signIn(a: SignInAttempt): Promise<UserRow> {
    const email = a.email.trim().slice(0, 320).toLowerCase();
    const address = a.ipAddress ?? "unknown";
    const trail = { method: a.method, endpoint: a.endpoint, ipAddress: a.ipAddress, userAgent: a.userAgent, detail: email };

    const refusal = throttle.accountRefusal(email);
    if (refusal.retryAfter > 0) {
      // Recorded once per window: a flood of refused attempts must not flood the trail.
      if (refusal.first) activity.record({ action: "login_throttled", organizationId: accounts.organizationOfEmail(email), statusCode: 429, ...trail });
      throw tooManyRequests(`Too many failed sign-ins for this account; retry in ${refusal.retryAfter} s`, { "retry-after": String(refusal.retryAfter) });
    }
    const wait = throttle.delayMs(address);
    // Counted as failed from here (in the same synchronous step as the checks above) until the
    // password proves right, so concurrent guesses cannot all pass the budget before one is counted.
    const reservation = throttle.reserve(address, email);
    if (wait > 0) await Bun.sleep(wait);

    const { user, organizationId } = await accounts.verifyLogin(email, a.password);
    if (!user) {
      // Filed under the account's organization, so its admins see guessing; unknown emails under none.
      activity.record({ action: "login_failed", organizationId, statusCode: 401, ...trail });
      throw unauthorized("Wrong email or password");
    }
    throttle.succeeded(reservation);
    activity.record({ action: "login_succeeded", organizationId: user.organizationId, actorUserId: user.id, statusCode: 200, ...trail, detail: null });
    return user;
  };
}
