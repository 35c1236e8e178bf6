// The sign-in throttle's bookkeeping: an attempt counts as a failure from the moment it is taken,
// so attempts still being checked see each other; a success gives back its own place only.
import { describe, expect, test } from "bun:test";
import { ACCOUNT_FAILURE_BUDGET, createLoginThrottle } from "../../../src/features/accounts/login-throttle";

describe("login throttle reservations", () => {
  test("attempts in flight count against the address's slow-down and the account's budget", () => {
    const throttle = createLoginThrottle(() => 1_000);
    for (let i = 0; i < ACCOUNT_FAILURE_BUDGET; i++) {
      expect(throttle.accountRefusal("a@x.test").retryAfter).toBe(0);
      throttle.reserve("10.0.0.1", "a@x.test"); // none of them has finished its password check
    }
    expect(throttle.accountRefusal("a@x.test").retryAfter).toBeGreaterThan(0);
    expect(throttle.delayMs("10.0.0.1")).toBeGreaterThan(0);
  });

  test("a success gives back its own attempt, not the failures before it", () => {
    const throttle = createLoginThrottle(() => 1_000);
    for (let i = 0; i < ACCOUNT_FAILURE_BUDGET - 1; i++) throttle.reserve(`10.0.1.${i}`, "a@x.test");
    throttle.succeeded(throttle.reserve("10.0.2.1", "a@x.test"));
    expect(throttle.accountRefusal("a@x.test").retryAfter).toBe(0);
    throttle.reserve("10.0.2.2", "a@x.test"); // the budget's last failure
    expect(throttle.accountRefusal("a@x.test").retryAfter).toBeGreaterThan(0);
  });
});
