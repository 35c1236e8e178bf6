// The organization's users as the console knows them: what the signed-in user may do to them, and
// the list (one page, remembered like every list; the Users screen and the trail share it).
import { call, qs } from "./api";
import type { User } from "./state";
import { useLoad } from "./ui/kit";

const ROLES = ["owner", "admin", "member"] as const;
export type Role = (typeof ROLES)[number];
export const PAGE = 200;

/** What the signed-in user may do, decided as Hearth does (accounts/service.ts), so no button is
 * offered that can only answer 403: owners and admins manage users; only owners (and super
 * admins) change, make or remove an owner; only super admins touch a super admin. */
export function powers(me: User) {
  const manage = me.is_super_admin || me.role === "owner" || me.role === "admin";
  const ownerPowers = me.is_super_admin || me.role === "owner";
  return {
    manage,
    roles: ROLES.filter((r) => r !== "owner" || ownerPowers),
    canEdit: (u: User) => manage && (u.is_super_admin ? me.is_super_admin : u.role !== "owner" || ownerPowers),
  };
}

/** The organization's users, first page (shared with the trail, which names who acted). */
export const useUsers = (org: string, page = 1) =>
  useLoad(() => call<User[]>("GET", `/api/organizations/${org}/users${qs({ page, pageSize: PAGE })}`), [org, page], `users:${org}:${page}`);
