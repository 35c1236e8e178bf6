// Users over their life in an organization: added, renamed, given another role or password,
// removed; a user's own password change and the command line's reset. Each change is on the
// security trail. Framework-free, callers passed as data.
import { and, count, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { conflict, forbidden, notFound, unauthorized } from "../../platform/errors";
import { nonBlank } from "../../platform/validator";
import type { PageWindow } from "../../platform/http/pagination";
import type { Principal, UserPrincipal, UserRole } from "../../platform/auth/principal";
import { credentialsChanged } from "../../platform/auth/revocations";
import type { ActivityService } from "../activity/service";
import type { ActivityAction } from "../activity/table";
import type { AccountsCore, NewUser, TrailInfo, UserPatch, UserRow } from "./service";
import { organizations, users } from "./table";

/** The email a removed user's row keeps: unique, never a valid address, and still saying who it was. */
const tombstone = (u: { id: string; email: string }) => `removed:${u.id}:${u.email}`;

export function createMembers({ db, clock, activity, core }: { db: Db; clock: Clock; activity: ActivityService; core: AccountsCore }) {
  const { getUser, requireAdminOf, hashPassword, insertUserRow, byEmail } = core;
  /** Work done in the removal's own turn, before the user's row changes (tokens revoke the user's). */
  const removing: ((userId: string, info: TrailInfo) => void)[] = [];

  /** A user of the organization the caller administers; removed users and other tenants' are not found. */
  const requireMember = (principal: Principal, organizationId: string, userId: string): UserRow => {
    const org = requireAdminOf(principal, organizationId);
    const u = getUser(userId.toLowerCase());
    if (!u || u.organizationId !== org.id) throw notFound("User");
    return u;
  };

  /** Only an owner (or a super admin) changes an owner, makes one, or touches a super admin. */
  const requireOwnerPowers = (principal: Principal, target: UserRow, nextRole: UserRole | undefined, what: string) => {
    if (principal.kind !== "user" || principal.isSuperAdmin) return;
    if (target.isSuperAdmin) throw forbidden(`Only super admins may ${what} a super admin`);
    if ((target.role === "owner" || nextRole === "owner") && principal.role !== "owner") throw forbidden(`Only owners may ${what} an owner`);
  };

  /**
   * The caller as they are now, after a slow password hash: a role changed or a removal in the
   * meantime counts (their request was sent with rights they may no longer have).
   */
  const asNow = (principal: Principal): Principal => {
    if (principal.kind !== "user") return principal;
    const u = getUser(principal.userId);
    if (!u || u.sessionVersion !== principal.sessionVersion) throw unauthorized("Invalid or expired session; sign in again at POST /api/auth/login");
    return { ...principal, role: u.role, isSuperAdmin: u.isSuperAdmin };
  };

  /** Refuses a removal that would leave Hearth without a super admin (nobody could create organizations again). */
  const keepASuperAdmin = (target: UserRow) => {
    if (!target.isSuperAdmin) return;
    const left = db.select({ n: count() }).from(users).where(and(eq(users.isSuperAdmin, true), isNull(users.removedAt))).get()?.n ?? 0;
    if (left <= 1) throw conflict(`${target.email} is Hearth's last super admin and cannot be removed`);
  };

  /** Refuses a change that would leave the organization without an owner. */
  const keepAnOwner = (target: UserRow, what: string) => {
    if (target.role !== "owner") return;
    const owners = db.select({ n: count() }).from(users).where(and(eq(users.organizationId, target.organizationId), eq(users.role, "owner"), isNull(users.removedAt))).get()?.n ?? 0;
    if (owners <= 1) throw conflict(`${target.email} is the organization's last owner: make another user owner before ${what}`);
  };

  const trail = (action: ActivityAction, actor: string | null, target: UserRow, info: TrailInfo, detail: string) =>
    activity.record({ action, organizationId: target.organizationId, actorUserId: actor, statusCode: action === "user_added" ? 201 : 200, ...info, detail });

  return {
    async createUser(principal: Principal, organizationId: string, input: NewUser, info: TrailInfo): Promise<UserRow> {
      requireAdminOf(principal, organizationId);
      // Only an owner (or a super admin) can make another owner.
      if (input.role === "owner" && principal.kind === "user" && principal.role !== "owner" && !principal.isSuperAdmin) {
        throw forbidden("Only owners may add owners");
      }
      const hash = await hashPassword(input.password);
      // Checked again as the caller is now: demoted or removed while the hash ran, they may not.
      const caller = asNow(principal);
      requireAdminOf(caller, organizationId);
      if (input.role === "owner" && caller.kind === "user" && caller.role !== "owner" && !caller.isSuperAdmin) throw forbidden("Only owners may add owners");
      const row = insertUserRow(organizationId.toLowerCase(), input, hash);
      trail("user_added", principal.userId, row, info, `${row.email} as ${row.role}`);
      return row;
    },

    /**
     * Renames a user, changes their role or sets a new password (which ends their sessions). An
     * owner is changed, and made, only by owners; the last owner keeps the role.
     */
    async updateUser(principal: Principal, organizationId: string, userId: string, patch: UserPatch, info: TrailInfo): Promise<UserRow> {
      const target = requireMember(principal, organizationId, userId);
      requireOwnerPowers(principal, target, patch.role, "change");
      if (patch.role !== undefined && patch.role !== target.role) keepAnOwner(target, "changing their role");
      const passwordHash = patch.password === undefined ? undefined : await hashPassword(patch.password);
      // The hash took a while: the user, and the caller's own rights, may have changed meanwhile.
      const caller = passwordHash === undefined ? principal : asNow(principal);
      const now = requireMember(caller, organizationId, userId);
      requireOwnerPowers(caller, now, patch.role, "change");
      if (patch.role !== undefined && patch.role !== now.role) keepAnOwner(now, "changing their role");
      const next: Partial<UserRow> = {};
      const changed: string[] = [];
      const name = patch.name === undefined ? undefined : nonBlank(patch.name);
      if (name !== undefined && name !== now.name) {
        next.name = name;
        changed.push("name");
      }
      if (patch.role !== undefined && patch.role !== now.role) {
        next.role = patch.role;
        changed.push(`role ${now.role} → ${patch.role}`);
      }
      if (passwordHash !== undefined) {
        next.passwordHash = passwordHash;
        next.sessionVersion = now.sessionVersion + 1;
        changed.push("password (sessions ended)");
      }
      if (changed.length === 0) return now;
      // The version raised in SQL: a reset in another process (hearth reset-password) counts too.
      const { sessionVersion, ...fields } = next;
      const written = db
        .update(users)
        .set({ ...fields, ...(sessionVersion === undefined ? {} : { sessionVersion: sql`${users.sessionVersion} + 1` }) })
        .where(eq(users.id, now.id))
        .returning({ sessionVersion: users.sessionVersion })
        .get();
      if (sessionVersion !== undefined) {
        next.sessionVersion = written?.sessionVersion ?? sessionVersion;
        credentialsChanged();
      }
      trail("user_updated", principal.userId, now, info, `${now.email}: ${changed.join(", ")}`);
      return { ...now, ...next };
    },

    /**
     * Removes a user: their sessions end and their API tokens are revoked (hooks, first, so a crash
     * in between leaves a user whose tokens no longer work, and the removal can be sent again).
     * The row stays, with a tombstone for its email, because audit logs name it.
     */
    removeUser(principal: Principal, organizationId: string, userId: string, info: TrailInfo): void {
      const target = requireMember(principal, organizationId, userId);
      requireOwnerPowers(principal, target, undefined, "remove");
      keepAnOwner(target, "removing them");
      keepASuperAdmin(target);
      for (const fn of removing) fn(target.id, info);
      const at = new Date(clock.now());
      db.update(users).set({ removedAt: at, email: tombstone(target), sessionVersion: sql`${users.sessionVersion} + 1` }).where(eq(users.id, target.id)).run();
      credentialsChanged();
      trail("user_removed", principal.userId, target, info, target.email);
    },

    /** Work in a removal's own turn before the user's row changes (tokens revoke theirs). */
    onRemoving: (fn: (userId: string, info: TrailInfo) => void) => void removing.push(fn),

    /**
     * The caller's own new password (the current one already checked): other sessions end. Written
     * only if the caller's session still holds: a reset by an admin or the command line while this
     * one was hashed wins, and this request's session ends with the others (401).
     */
    async changeOwnPassword(caller: UserPrincipal, newPassword: string, info: TrailInfo): Promise<UserRow> {
      const hash = await hashPassword(newPassword);
      const ended = () => unauthorized("Your sessions ended while the password was being changed (it was reset meanwhile); sign in again at POST /api/auth/login");
      const u = getUser(caller.userId);
      if (!u || u.sessionVersion !== caller.sessionVersion) throw ended();
      const next = { passwordHash: hash, sessionVersion: caller.sessionVersion + 1 };
      const written = db.update(users).set(next).where(and(eq(users.id, u.id), eq(users.sessionVersion, caller.sessionVersion), isNull(users.removedAt))).returning({ id: users.id }).all();
      if (written.length === 0) throw ended();
      credentialsChanged();
      trail("password_changed", u.id, u, info, u.email);
      return { ...u, ...next };
    },

    /** `hearth reset-password`: a new password for the account with this email, every session ended. */
    async resetPassword(email: string, newPassword: string): Promise<UserRow> {
      const u = byEmail(email);
      if (!u) throw notFound(`User ${email.trim().toLowerCase()}`);
      const passwordHash = await hashPassword(newPassword);
      // Raised in SQL: a password change that landed while this hashed ends too.
      const written = db.update(users).set({ passwordHash, sessionVersion: sql`${users.sessionVersion} + 1` }).where(eq(users.id, u.id)).returning({ sessionVersion: users.sessionVersion }).get();
      const next = { passwordHash, sessionVersion: written?.sessionVersion ?? u.sessionVersion + 1 };
      trail("password_reset", null, u, { method: "CLI", endpoint: "hearth reset-password", ipAddress: null, userAgent: null }, u.email);
      return { ...u, ...next };
    },

    listUsers(principal: Principal, organizationId: string, w: PageWindow) {
      organizationId = organizationId.toLowerCase();
      const org = db.select().from(organizations).where(eq(organizations.id, organizationId)).get();
      const visible = org && principal.kind === "user" && (principal.organizationId === org.id || principal.isSuperAdmin);
      if (!org || !visible) throw notFound("Organization");
      const where = and(eq(users.organizationId, organizationId), isNull(users.removedAt));
      const total = db.select({ n: count() }).from(users).where(where).get()?.n ?? 0;
      const rows = db.select().from(users).where(where).orderBy(users.createdAt, users.id).limit(w.pageSize).offset(w.offset).all();
      return { rows, total };
    },
  };
}

export type Members = ReturnType<typeof createMembers>;
