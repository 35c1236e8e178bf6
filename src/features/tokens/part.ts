// The tokens feature's part of Hearth's life: the expiry sweep, and the use journal closed last.
import type { Part } from "../../platform/parts";
import type { TokenAuditLog } from "./audit-log";
import type { TokensService } from "./service";

const EXPIRY_SWEEP_MS = 60_000;

/**
 * The tokens' life: `expired` is recorded for tokens whose expiry passed unseen (at start and every
 * minute); at stop the journal of token uses is folded into the database and closed (last of all
 * parts, so that every use acknowledged before is in it).
 */
export function tokensPart(tokens: TokensService, audit: TokenAuditLog): Part {
  let sweeper: ReturnType<typeof setInterval> | undefined;
  return {
    name: "tokens",
    start() {
      tokens.sweepExpired();
      sweeper = setInterval(() => tokens.sweepExpired(), EXPIRY_SWEEP_MS);
      sweeper.unref?.();
    },
    stop() {
      if (sweeper) clearInterval(sweeper);
      audit.close();
    },
  };
}
