// Slows down repeated failed logins from one address: free attempts first, then doubling waits.
const FREE_FAILURES = 5;
const MAX_DELAY_MS = 8000;
const FORGET_AFTER_MS = 15 * 60_000;

export function createLoginThrottle(now: () => number) {
  const failures = new Map<string, { count: number; last: number }>();
  return {
    /** How long this attempt must wait before its password is checked. */
    delayMs(key: string): number {
      const f = failures.get(key);
      if (!f || now() - f.last > FORGET_AFTER_MS) return 0;
      return f.count < FREE_FAILURES ? 0 : Math.min(MAX_DELAY_MS, 250 * 2 ** (f.count - FREE_FAILURES));
    },
    failed(key: string) {
      const f = failures.get(key);
      const count = f && now() - f.last <= FORGET_AFTER_MS ? f.count + 1 : 1;
      failures.set(key, { count, last: now() });
      if (failures.size > 10_000) for (const [k, v] of failures) if (now() - v.last > FORGET_AFTER_MS) failures.delete(k);
    },
    succeeded: (key: string) => void failures.delete(key),
  };
}
