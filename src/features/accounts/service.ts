// Organizations, users, passwords and the first owner: framework-free, callers passed as data.
import { count, eq, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { conflict, forbidden, notFound } from "../../platform/errors";
import { nonBlank } from "../../platform/validator";
import type { PageWindow } from "../../platform/http/pagination";
import { isOrgAdmin, type Principal, type UserPrincipal, type UserRole } from "../../platform/auth/principal";
import { organizations, users } from "./table";

export type UserRow = typeof users.$inferSelect;
export type OrganizationRow = typeof organizations.$inferSelect;

export interface NewUser {
  email: string;
  password: string;
  name?: string;
  role: UserRole;
}

// Verified against when an email is unknown, so a login takes as long whether or not it exists.
let dummyHash: Promise<string> | undefined;

export function createAccountsService({ db, clock }: { db: Db; clock: Clock }) {
  const userPrincipal = (u: UserRow): UserPrincipal => ({
    kind: "user",
    userId: u.id,
    email: u.email,
    organizationId: u.organizationId,
    homeOrganizationId: u.organizationId,
    role: u.role,
    isSuperAdmin: u.isSuperAdmin,
  });

  // Prepared once: every session request loads its user.
  const selectUser = db.select().from(users).where(eq(users.id, sql.placeholder("id"))).prepare();
  const getUser = (id: string) => selectUser.get({ id });

  /** An organization the caller may administer (its own, or any for a super admin acting in it). */
  const requireAdminOf = (principal: Principal, organizationId: string): OrganizationRow => {
    const org = db.select().from(organizations).where(eq(organizations.id, organizationId)).get();
    const visible = org && principal.kind === "user" && (principal.organizationId === org.id || principal.isSuperAdmin);
    if (!org || !visible) throw notFound("Organization");
    if (!isOrgAdmin(principal)) throw forbidden("Only owners and admins of the organization may manage its users");
    return org;
  };

  const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: "argon2id" });

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
      createdAt: new Date(clock.now()),
    };
    db.insert(users).values(row).run();
    return row;
  };

  return {
    userPrincipal,
    getUser,

    principalFor(userId: string): UserPrincipal | null {
      const u = getUser(userId);
      return u ? userPrincipal(u) : null;
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

    organizationOfEmail: (email: string): string | null =>
      db.select({ organizationId: users.organizationId }).from(users).where(eq(users.email, email.trim().toLowerCase())).get()?.organizationId ?? null,

    hasUsers: () => (db.select({ n: count() }).from(users).get()?.n ?? 0) > 0,

    /**
     * The user whose email and password match (`user`), else null with the organization of the
     * account the email names, if any (where the failure is filed).
     */
    async verifyLogin(email: string, password: string): Promise<{ user: UserRow | null; organizationId: string | null }> {
      const u = db.select().from(users).where(eq(users.email, email.trim().toLowerCase())).get();
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

    async createUser(principal: Principal, organizationId: string, input: NewUser): Promise<UserRow> {
      requireAdminOf(principal, organizationId);
      // Only an owner (or a super admin) can make another owner.
      if (input.role === "owner" && principal.kind === "user" && principal.role !== "owner" && !principal.isSuperAdmin) {
        throw forbidden("Only owners may add owners");
      }
      return insertUserRow(organizationId, input, await hashPassword(input.password));
    },

    hashPassword,
    insertUserRow,

    listUsers(principal: Principal, organizationId: string, w: PageWindow) {
      const org = db.select().from(organizations).where(eq(organizations.id, organizationId)).get();
      const visible = org && principal.kind === "user" && (principal.organizationId === org.id || principal.isSuperAdmin);
      if (!org || !visible) throw notFound("Organization");
      const where = eq(users.organizationId, organizationId);
      const total = db.select({ n: count() }).from(users).where(where).get()?.n ?? 0;
      const rows = db.select().from(users).where(where).orderBy(users.createdAt, users.id).limit(w.pageSize).offset(w.offset).all();
      return { rows, total };
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
