// The port the auth plugin uses to check credentials; the accounts and tokens features implement it.
import type { Principal, TokenPrincipal, UserPrincipal } from "./principal";

export type TokenCheck =
  | { ok: true; principal: TokenPrincipal }
  /**
   * tokenId is set when the secret matched a known token that may not be used; `action` is what
   * its audit log records for this attempt (`expired` once, for the first use after expiry).
   */
  | { ok: false; tokenId?: string; action?: "used" | "expired"; reason: "invalid" | "inactive" | "revoked" | "expired" };

export interface TokenUse {
  tokenId: string;
  /** `expired` is recorded instead of `used` for the first use after expiry. */
  action: "used" | "expired";
  ipAddress: string | null;
  userAgent: string | null;
  endpoint: string;
  statusCode: number;
}

export interface OverrideUse {
  actor: UserPrincipal;
  targetOrganizationId: string;
  method: string;
  endpoint: string;
  statusCode: number;
  ipAddress: string | null;
  userAgent: string | null;
}

export interface Authenticator {
  checkToken(raw: string): TokenCheck;
  /** The user of a verified session signed at `sessionVersion`, or null when the account is gone or its sessions ended since. */
  userPrincipal(userId: string, sessionVersion: number): UserPrincipal | null;
  organizationExists(id: string): boolean;
  /** Whether a user's session still holds (the user is there and has not changed password since). */
  sessionHolds(user: UserPrincipal): boolean;
  /** Records a use; acknowledge it only once the promise, when one is returned, resolves (a group commit). */
  recordTokenUse(use: TokenUse): Promise<void> | undefined;
  recordOverride(use: OverrideUse): void;
}

export type { Principal };
