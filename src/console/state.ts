// Who is signed in and which workspace the screens act on.
import { computed, signal } from "@preact/signals";
import { get, setActingOrg, setToken, token } from "./api";
import { stopChats } from "./chat-store";

export interface User {
  id: string;
  email: string;
  name: string | null;
  organization_id: string;
  role: "owner" | "admin" | "member";
  is_super_admin: boolean;
}

export interface Workspace {
  id: string;
  name: string;
  description: string | null;
  organization_id: string;
}

export const user = signal<User | null>(null);
export const actingOrgId = signal<string | null>(null);
export const workspaces = signal<Workspace[]>([]);
export const workspaceId = signal<string | null>(sessionStorage.getItem("hearth.workspace"));
export const workspace = computed(() => workspaces.value.find((w) => w.id === workspaceId.value) ?? workspaces.value[0] ?? null);

export function chooseWorkspace(id: string) {
  workspaceId.value = id;
  sessionStorage.setItem("hearth.workspace", id);
}

/** Loads the signed-in user and their workspaces (after sign-in, a reload or an organization switch). */
export async function loadSession() {
  if (!token.value) return;
  const me = await get<{ user: User; acting_organization_id: string }>("/api/auth/me");
  user.value = me.user;
  actingOrgId.value = me.acting_organization_id;
  workspaces.value = await get<Workspace[]>("/api/products?pageSize=100");
  if (!workspaces.value.some((w) => w.id === workspaceId.value) && workspaces.value[0]) chooseWorkspace(workspaces.value[0].id);
}

export function signOut() {
  stopChats();
  setToken(null);
  setActingOrg(null);
  user.value = null;
  workspaces.value = [];
  sessionStorage.removeItem("hearth.workspace");
}
