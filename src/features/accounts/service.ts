// Organizations, users, sign-in's checks and principals; users over their life are members.ts.
// Framework-free, callers passed as data.
import { and, count, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { conflict, forbidden, notFound } from "../../platform/errors";
import { nonBlank } from "../../platform/validator";
import { isOrgAdmin, type Principal, type UserPrincipal, type UserRole } from "../../platform/auth/principal";
import type { ActivityService } from "../activity/service";
import { createMembers } from "./members";
import { organizations, users } from "./table";

export type UserRow = typeof users.$inferSelect;
export type OrganizationRow = typeof organizations.$inferSelect;

/** Where a change came from, for the security trail. */
export interface TrailInfo {
  method: string;
  endpoint: string;
  ipAddress: string | null;
  userAgent: string | null;
}

export interface UserPatch {
  name?: string;
  role?: UserRole;
  password?: string;
}

export interface NewUser {
  email: string;
  password: string;
  name?: string;
  role: UserRole;
}

// Verified against when an email is unknown, so a login takes as long whether or not it exists.
let dummyHash: Promise<string> | undefined;

/** Organizations and users as they are: what sign-in, sessions and members.ts build on. */
function createAccountsCore({ db, clock }: { db: Db; clock: Clock }) {
  const userPrincipal = (u: UserRow): UserPrincipal => ({
    kind: "user",
    userId: u.id,
    email: u.email,
    organizationId: u.organizationId,
    homeOrganizationId: u.organizationId,
    role: u.role,
    isSuperAdmin: u.isSuperAdmin,
    sessionVersion: u.sessionVersion,
  });

  // Prepared once: every session request loads its user.
  const selectUser = db.select().from(users).where(and(eq(users.id, sql.placeholder("id")), isNull(users.removedAt))).prepare();
  /** A user who has not been removed. */
  const getUser = (id: string) => selectUser.get({ id });

  /** An organization the caller may administer (its own, or any for a super admin acting in it). */
  const requireAdminOf = (principal: Principal, organizationId: string): OrganizationRow => {
    const org = db.select().from(organizations).where(eq(organizations.id, organizationId.toLowerCase())).get();
    const visible = org && principal.kind === "user" && (principal.organizationId === org.id || principal.isSuperAdmin);
    if (!org || !visible) throw notFound("Organization");
    if (!isOrgAdmin(principal)) throw forbidden("Only owners and admins of the organization may manage its users");
    return org;
  };

  const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: "argon2id" });

  /** A user who has not been removed, by email. */
  const byEmail = (email: string) => db.select().from(users).where(and(eq(users.email, email.trim().toLowerCase()), isNull(users.removedAt))).get();

  /** Inserts a user whose password is already hashed; synchronous, so it fits in a transaction. */
  const insertUserRow = (organizationId: string, input: Omit<NewUser, "password">, passwordHash: string, isSuperAdmin = false): UserRow => {
    const email = input.email.trim().toLowerCase();
    if (db.select({ id: users.id }).from(users).where(eq(users.email, email)).get()) {
      throw conflict(`A user with the email ${email} already exists`);
    }
    const row: UserRow = {
      id: crypto.randomUUID(),
      organizationId,
      email,
      name: input.name?.trim() || email.split("@")[0]!,
      passwordHash,
      role: input.role,
      isSuperAdmin,
      sessionVersion: 0,
      removedAt: null,
      createdAt: new Date(clock.now()),
    };
    db.insert(users).values(row).run();
    return row;
  };

  return {
    userPrincipal,
    getUser,

    /** The user of a session that carries `sessionVersion`; null once the user is removed or changed password since. */
    principalFor(userId: string, sessionVersion: number): UserPrincipal | null {
      const u = getUser(userId);
      return u && u.sessionVersion === sessionVersion ? userPrincipal(u) : null;
    },

    organizationExists: (id: string) =>
      db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, id.toLowerCase())).get() !== undefined,

    /**
     * The organization (its id, lower case) whose security trail `principal` may read: its owners
     * and admins, and super admins. Another organization's trail is not found, not forbidden.
     */
    trailOf(principal: Principal, organizationId: string): string {
      const id = organizationId.toLowerCase();
      if (principal.kind !== "user" || (principal.organizationId !== id && !principal.isSuperAdmin)) throw notFound("Organization");
      if (!this.organizationExists(id)) throw notFound("Organization");
      if (!isOrgAdmin(principal)) throw forbidden("Only owners and admins may read the security trail");
      return id;
    },

    organizationOfEmail: (email: string): string | null => byEmail(email)?.organizationId ?? null,

    /** The session version of the account with this email (null: none); a new password raises it. */
    sessionVersionOfEmail: (email: string): number | null => byEmail(email)?.sessionVersion ?? null,

    hasUsers: () => (db.select({ n: count() }).from(users).get()?.n ?? 0) > 0,

    /**
     * The user whose email and password match (`user`), else null with the organization of the
     * account the email names, if any (where the failure is filed).
     */
    async verifyLogin(email: string, password: string): Promise<{ user: UserRow | null; organizationId: string | null }> {
      const u = byEmail(email);
      if (!u) {
        dummyHash ??= Bun.password.hash("not a real password", { algorithm: "argon2id" });
        await Bun.password.verify(password, await dummyHash);
        return { user: null, organizationId: null };
      }
      return (await Bun.password.verify(password, u.passwordHash)) ? { user: u, organizationId: u.organizationId } : { user: null, organizationId: u.organizationId };
    },

    createOrganizationRow(name: string): OrganizationRow {
      const row = { id: crypto.randomUUID(), name: nonBlank(name), createdAt: new Date(clock.now()) };
      db.insert(organizations).values(row).run();
      return row;
    },

    createOrganization(principal: Principal, name: string): OrganizationRow {
      if (principal.kind !== "user" || !principal.isSuperAdmin) throw forbidden("Only super admins may create organizations");
      return this.createOrganizationRow(name);
    },

    hashPassword,
    insertUserRow,
    requireAdminOf,
    byEmail,
  };
}

export type AccountsCore = ReturnType<typeof createAccountsCore>;

export function createAccountsService({ db, clock, activity }: { db: Db; clock: Clock; activity: ActivityService }) {
  const core = createAccountsCore({ db, clock });
  return { ...core, ...createMembers({ db, clock, activity, core }) };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
