// Who is calling: a signed-in user (JWT) or an API token acting inside one workspace.
export type UserRole = "owner" | "admin" | "member";
export type TokenRole = "USER" | "SYSTEM";

export interface UserPrincipal {
  readonly kind: "user";
  readonly userId: string;
  readonly email: string;
  /** The organization this request acts in (the user's own, or X-Organization-Id for super admins). */
  readonly organizationId: string;
  readonly homeOrganizationId: string;
  readonly role: UserRole;
  readonly isSuperAdmin: boolean;
  /** The user's session version the session was signed at (a password change or removal raises it). */
  readonly sessionVersion: number;
}

export interface TokenPrincipal {
  readonly kind: "token";
  readonly userId: string;
  readonly organizationId: string;
  readonly productId: string;
  readonly tokenId: string;
  readonly tokenRole: TokenRole;
}

export type Principal = UserPrincipal | TokenPrincipal;

/** Owners and admins manage their organization; super admins manage any they act in. */
export const isOrgAdmin = (p: Principal) => p.kind === "user" && (p.role === "owner" || p.role === "admin" || p.isSuperAdmin);
