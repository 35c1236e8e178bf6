// Bounds password guessing twice: per address (free attempts first, then doubling waits) and per
// account (a fixed budget of failures per window, whatever addresses they come from).
const FREE_FAILURES = 5;
const MAX_DELAY_MS = 8000;
const FORGET_AFTER_MS = 15 * 60_000;
/** Failed sign-ins one account takes per window; past it the password is not even checked. */
export const ACCOUNT_FAILURE_BUDGET = 10;
export const ACCOUNT_WINDOW_MS = 15 * 60_000;
/** Keys kept per map; under a flood of distinct emails or addresses the oldest go first. */
const MAX_KEYS = 50_000;

/** `version`: an account's session version when its failures began (a new password starts afresh). */
type Entry = { count: number; first: number; last: number; refused?: boolean; version?: number | null };
/** One attempt taken from the budgets; `window` is when the account's window it counts in began. */
export type Reservation = { address: string; email: string; window: number };

export function createLoginThrottle(now: () => number) {
  const byAddress = new Map<string, Entry>();
  const byAccount = new Map<string, Entry>();

  /** Counts a failure of `key`; its entry starts afresh when stale, or (accounts) when its version is not `version`. */
  const note = (map: Map<string, Entry>, key: string, stale: (e: Entry) => boolean, version?: number | null) => {
    const e = map.get(key);
    const t = now();
    const current = e && !stale(e) && (version === undefined || (e.version ?? null) === version);
    const next = current ? { ...e, count: e.count + 1, last: t } : { count: 1, first: t, last: t, version };
    map.delete(key); // re-inserted last, so eviction below drops the least recently failed
    map.set(key, next);
    if (map.size > MAX_KEYS) {
      for (const [k, v] of map) if (stale(v)) map.delete(k);
      for (const k of map.keys()) {
        if (map.size <= MAX_KEYS) break;
        map.delete(k);
      }
    }
  };
  const addressStale = (e: Entry) => now() - e.last > FORGET_AFTER_MS;
  const accountStale = (e: Entry) => now() - e.first >= ACCOUNT_WINDOW_MS;

  return {
    /** How long an attempt from this address must wait before its password is checked. */
    delayMs(address: string): number {
      const f = byAddress.get(address);
      if (!f || addressStale(f)) return 0;
      return f.count < FREE_FAILURES ? 0 : Math.min(MAX_DELAY_MS, 250 * 2 ** (f.count - FREE_FAILURES));
    },
    /**
     * Seconds until this account takes sign-in attempts again (0: now), and whether this is the
     * first refusal of its window (the one the security trail records).
     */
    accountRefusal(email: string, version: number | null = null): { retryAfter: number; first: boolean } {
      const e = byAccount.get(email);
      // The password was set anew since these failures (a reset): they no longer count.
      if (e && (e.version ?? null) !== version) byAccount.delete(email);
      if (!e || byAccount.get(email) !== e || accountStale(e) || e.count < ACCOUNT_FAILURE_BUDGET) return { retryAfter: 0, first: false };
      const first = !e.refused;
      e.refused = true;
      return { retryAfter: Math.max(1, Math.ceil((e.first + ACCOUNT_WINDOW_MS - now()) / 1000)), first };
    },
    /**
     * Counts this attempt as a failure of the address and the account before its password is
     * checked: the check is slow (argon2), and attempts in flight must see each other, or a burst
     * of concurrent guesses all pass the budget test above before any of them is counted.
     * `succeeded` takes the attempt back.
     */
    reserve(address: string, email: string, version: number | null = null): Reservation {
      note(byAddress, address, addressStale);
      note(byAccount, email, accountStale, version);
      return { address, email, window: byAccount.get(email)!.first };
    },
    /**
     * Clears the address's slow-down and gives back this attempt's place in the account's budget;
     * the failures before it are kept, so a success between guesses does not refill the budget.
     */
    succeeded(r: Reservation) {
      byAddress.delete(r.address);
      const e = byAccount.get(r.email);
      if (!e || e.first !== r.window) return; // its window ended meanwhile: nothing of it is left to give back
      if (e.count <= 1) byAccount.delete(r.email);
      else e.count -= 1;
    },
  };
}
