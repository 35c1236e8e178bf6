// Who is signed in and which workspace the screens act on.
import { computed, signal } from "@preact/signals";
import { get, setActingOrg, setToken, token } from "./api";
import { stopChats } from "./chat-store";
import { forget } from "./ui/kit";

export interface User {
  id: string;
  email: string;
  name: string | null;
  organization_id: string;
  role: "owner" | "admin" | "member";
  is_super_admin: boolean;
  created_at: string;
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

/** Forgets everything of this session: its chats, lists, user and workspaces. */
export function signOut() {
  user.value = null;
  stopChats();
  forget();
  setToken(null);
  setActingOrg(null);
  workspaces.value = [];
  sessionStorage.removeItem("hearth.workspace");
}

/** A session ended by Hearth (a 401) is cleaned up like a sign-out, so the next person to sign in
 * in this tab sees nothing of it. Called once by main.tsx; answers the unsubscribe. */
export const followSession = () => token.subscribe((t) => !t && user.peek() && signOut());
