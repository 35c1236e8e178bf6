// Users over their life: roles changed, passwords set by an admin or changed by the user, users
// removed. Sessions signed before a password change or a removal end at once; a removed user's
// API tokens are revoked on their audit logs; the last owner stays an owner; the trail says who did it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_EMAIL, ADMIN_PASSWORD, createHarness, defaultWorkspaceId, secondTenant, type Harness } from "../../support/harness";

let h: Harness;
let ownerJwt: string;
let orgId: string;
let ws: string;

const addUser = async (role: "owner" | "admin" | "member", password = "first-password") => {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const r = await h.call("POST", `/api/organizations/${orgId}/users`, { token: ownerJwt, body: { email, password, role } });
  expect(r.status).toBe(201);
  return { id: r.body.data.id as string, email, jwt: await h.login(email, password) };
};
const me = (jwt: string) => h.call("GET", "/api/auth/me", { token: jwt });
const put = (jwt: string, userId: string, body: unknown) => h.call("PUT", `/api/organizations/${orgId}/users/${userId}`, { token: jwt, body });
const remove = (jwt: string, userId: string) => h.call("DELETE", `/api/organizations/${orgId}/users/${userId}`, { token: jwt });

beforeAll(async () => {
  h = await createHarness();
  ownerJwt = await h.login();
  orgId = (await me(ownerJwt)).body.data.user.organization_id;
  ws = await defaultWorkspaceId(h, ownerJwt);
});
afterAll(() => h.close());

describe("roles", () => {
  test("a member made admin may manage users at once; made member again, may not", async () => {
    const m = await addUser("member");
    const other = await addUser("member");
    expect((await put(m.jwt, other.id, { name: "Renamed" })).status).toBe(403);
    const promoted = await put(ownerJwt, m.id, { role: "admin" });
    expect(promoted.status).toBe(200);
    expect(promoted.body.data).toMatchObject({ id: m.id, role: "admin" });
    // The same session, no new sign-in: the role is read on every request.
    const renamed = await put(m.jwt, other.id, { name: "Renamed" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.name).toBe("Renamed");
    expect((await put(ownerJwt, m.id, { role: "member" })).status).toBe(200);
    expect((await put(m.jwt, other.id, { name: "Again" })).status).toBe(403);
  });

  test("an admin neither changes an owner nor makes one; an owner does both", async () => {
    const admin = await addUser("admin");
    const owner2 = await addUser("owner");
    const m = await addUser("member");
    expect((await put(admin.jwt, owner2.id, { name: "x" })).status).toBe(403);
    expect((await put(admin.jwt, m.id, { role: "owner" })).status).toBe(403);
    expect((await remove(admin.jwt, owner2.id)).status).toBe(403);
    expect((await put(ownerJwt, m.id, { role: "owner" })).body.data.role).toBe("owner");
    expect((await put(owner2.jwt, m.id, { role: "member" })).body.data.role).toBe("member");
  });

  test("the last owner can be neither demoted nor removed (409); with a second owner they can", async () => {
    const org = await secondTenant(h, ownerJwt, "Lonely Org");
    const path = `/api/organizations/${org.orgId}/users/${org.userId}`;
    const demote = await h.call("PUT", path, { token: org.jwt, body: { role: "admin" } });
    expect(demote.status).toBe(409);
    expect(demote.body.message).toMatch(/last owner/);
    expect((await h.call("DELETE", path, { token: org.jwt })).status).toBe(409);
    const second = await h.call("POST", `/api/organizations/${org.orgId}/users`, { token: org.jwt, body: { email: "second-owner@other.test", password: "second-password", role: "owner" } });
    expect(second.status).toBe(201);
    expect((await h.call("PUT", path, { token: org.jwt, body: { role: "admin" } })).body.data.role).toBe("admin");
  });

  test("another organization's user is not found; bad bodies are 4xx; API tokens may not manage users", async () => {
    const other = await secondTenant(h, ownerJwt, "Neighbour Org");
    const m = await addUser("member");
    // The other org's owner cannot reach this org's users, nor this org's owner theirs through this org's path.
    expect((await h.call("PUT", `/api/organizations/${orgId}/users/${m.id}`, { token: other.jwt, body: { name: "x" } })).status).toBe(404);
    expect((await put(ownerJwt, other.userId, { name: "x" })).status).toBe(404);
    expect((await remove(ownerJwt, other.userId)).status).toBe(404);
    expect((await put(ownerJwt, m.id, {})).status).toBe(422);
    expect((await put(ownerJwt, m.id, { role: "emperor" })).status).toBe(422);
    expect((await put(ownerJwt, m.id, { password: "short" })).status).toBe(422);
    expect((await put(ownerJwt, m.id, { name: "   " })).status).toBe(422);
    expect((await put(ownerJwt, "not-a-uuid", { name: "x" })).status).toBe(400);
    const token = await h.call("POST", "/api/api-tokens", { token: ownerJwt, body: { product_id: ws, token_name: "ci" } });
    expect((await put(token.body.data.token, m.id, { name: "x" })).status).toBe(403);
  });
});

describe("passwords", () => {
  test("a password set by an admin ends the user's sessions; the new one signs in, the old one not", async () => {
    const m = await addUser("member");
    const second = await h.login(m.email, "first-password");
    expect((await me(m.jwt)).status).toBe(200);
    expect((await put(ownerJwt, m.id, { password: "second-password" })).status).toBe(200);
    expect((await me(m.jwt)).status).toBe(401);
    expect((await me(second)).status).toBe(401);
    expect((await h.call("POST", "/api/auth/login", { body: { email: m.email, password: "first-password" } })).status).toBe(401);
    expect((await me(await h.login(m.email, "second-password"))).status).toBe(200);
  });

  test("a user changes their own password: a new session comes back, every other one ends", async () => {
    const m = await addUser("member");
    const laptop = await h.login(m.email, "first-password");
    const r = await h.call("PUT", "/api/auth/password", { token: m.jwt, body: { current_password: "first-password", new_password: "better-password" } });
    expect(r.status).toBe(200);
    expect(r.body.data.user.id).toBe(m.id);
    expect((await me(r.body.data.token)).status).toBe(200);
    expect((await me(m.jwt)).status).toBe(401);
    expect((await me(laptop)).status).toBe(401);
    expect((await me(await h.login(m.email, "better-password"))).status).toBe(200);
  });

  test("a wrong current password is 403, changes nothing and counts like a failed sign-in", async () => {
    const m = await addUser("member");
    const wrong = await h.call("PUT", "/api/auth/password", { token: m.jwt, body: { current_password: "not-it", new_password: "whatever-password" } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.message).toMatch(/current_password/);
    expect((await me(m.jwt)).status).toBe(200);
    const short = await h.call("PUT", "/api/auth/password", { token: m.jwt, body: { current_password: "first-password", new_password: "short" } });
    expect(short.status).toBe(422);
    // The account's budget of failed sign-ins is shared: 9 more wrong guesses and even the right
    // password waits for the window (a stolen session cannot guess the password at speed).
    for (let i = 0; i < 9; i++) {
      await h.call("PUT", "/api/auth/password", { token: m.jwt, body: { current_password: `guess-${i}`, new_password: "whatever-password" } });
      h.clock.advance(10_000); // past the address's slow-down, inside the account's 15 minutes
    }
    const locked = await h.call("PUT", "/api/auth/password", { token: m.jwt, body: { current_password: "first-password", new_password: "whatever-password" } });
    expect(locked.status).toBe(429);
    expect((await h.call("POST", "/api/auth/login", { body: { email: m.email, password: "first-password" } })).status).toBe(429);
    // The window passes: the password is unchanged and signs in again (and the address's slow-down is forgotten).
    h.clock.advance(16 * 60_000);
    expect((await me(await h.login(m.email, "first-password"))).status).toBe(200);
  }, 30_000);

  test("sessions signed before session versions existed still work", async () => {
    // Tokens signed by earlier Hearths carry no `sv` claim: version 0, which every user starts at.
    const secret = h.services.storage.sqlite.query("SELECT value FROM settings WHERE key = 'jwt_secret'").get() as { value: string } | null;
    const { jwt } = await import("@elysiajs/jwt");
    const { Elysia } = await import("elysia");
    const signer = new Elysia().use(jwt({ name: "j", secret: secret!.value }));
    const old = await signer.decorator.j.sign({ sub: (await me(ownerJwt)).body.data.user.id, exp: Math.floor(Date.now() / 1000) + 3600 });
    expect((await me(old)).status).toBe(200);
  });
});

describe("removal", () => {
  test("a removed user's sessions and API tokens stop at once; tokens are revoked on their audit logs", async () => {
    const m = await addUser("member");
    const theirs = await h.call("POST", "/api/products", { token: m.jwt, body: { name: "Their workspace" } });
    const created = await h.call("POST", "/api/api-tokens", { token: m.jwt, body: { product_id: theirs.body.data.id, token_name: "their ci" } });
    expect(created.status).toBe(201);
    const secret = created.body.data.token as string;
    expect((await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": secret } })).status).toBe(200);
    const r = await remove(ownerJwt, m.id);
    expect(r.status).toBe(200);
    expect(r.body.data.id).toBe(m.id);
    expect((await me(m.jwt)).status).toBe(401);
    expect((await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": secret } })).status).toBe(401);
    expect((await h.call("POST", "/api/auth/login", { body: { email: m.email, password: "first-password" } })).status).toBe(401);
    const token = await h.call("GET", `/api/api-tokens/${created.body.data.id}`, { token: ownerJwt });
    expect(token.body.data.revoked_at).not.toBeNull();
    const log = await h.call("GET", `/api/api-tokens/${created.body.data.id}/audit-logs`, { token: ownerJwt });
    expect(log.body.data.map((e: { action: string }) => e.action)).toContain("revoked");
    const listed = await h.call("GET", `/api/organizations/${orgId}/users?pageSize=100`, { token: ownerJwt });
    expect(listed.body.data.map((u: { id: string }) => u.id)).not.toContain(m.id);
    // Removed twice: not found. The address may be added again, as a new user.
    expect((await remove(ownerJwt, m.id)).status).toBe(404);
    const again = await h.call("POST", `/api/organizations/${orgId}/users`, { token: ownerJwt, body: { email: m.email, password: "fresh-password", role: "member" } });
    expect(again.status).toBe(201);
    expect(again.body.data.id).not.toBe(m.id);
    expect((await me(await h.login(m.email, "fresh-password"))).status).toBe(200);
  });

  test("the trail names who added, changed and removed users and who changed a password", async () => {
    const m = await addUser("member");
    await put(ownerJwt, m.id, { role: "admin" });
    await h.call("PUT", "/api/auth/password", { token: m.jwt, body: { current_password: "first-password", new_password: "another-password" } });
    await remove(ownerJwt, m.id);
    const trail = await h.call("GET", `/api/organizations/${orgId}/activity`, { token: ownerJwt });
    const mine = trail.body.data.filter((e: { detail: string | null }) => e.detail?.includes(m.email));
    expect(mine.map((e: { action: string }) => e.action)).toEqual(["user_removed", "password_changed", "user_updated", "user_added"]);
    const owner = (await me(ownerJwt)).body.data.user.id;
    expect(mine.find((e: { action: string }) => e.action === "user_updated").detail).toContain("role member → admin");
    expect(mine.filter((e: { action: string }) => e.action !== "password_changed").every((e: { actor_user_id: string }) => e.actor_user_id === owner)).toBe(true);
    const filtered = await h.call("GET", `/api/organizations/${orgId}/activity?action=user_removed`, { token: ownerJwt });
    expect(filtered.body.data.every((e: { action: string }) => e.action === "user_removed")).toBe(true);
  });

  test("the last super admin cannot be removed; an address like admin@localhost can be added", async () => {
    const superAdmin = (await me(ownerJwt)).body.data.user;
    await addUser("owner"); // so the last-owner rule is not what refuses
    const r = await remove(ownerJwt, superAdmin.id);
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(/last super admin/);
    // Before: the default first owner's kind of address was refused by the email format (422).
    const local = await h.call("POST", `/api/organizations/${orgId}/users`, { token: ownerJwt, body: { email: "ops@localhost", password: "local-password", role: "member" } });
    expect(local.status).toBe(201);
    expect((await h.call("POST", `/api/organizations/${orgId}/users`, { token: ownerJwt, body: { email: "no-at-sign", password: "local-password", role: "member" } })).status).toBe(422);
  });

  test("a removed user's tombstone address neither signs in nor takes a reset", async () => {
    const m = await addUser("member");
    expect((await remove(ownerJwt, m.id)).status).toBe(200);
    const tomb = `removed:${m.id}:${m.email}`;
    expect((await h.call("POST", "/api/auth/login", { body: { email: tomb, password: "first-password" } })).status).toBe(401);
    await expect(h.services.accounts.resetPassword(tomb, "new-password-1")).rejects.toMatchObject({ status: 404 });
  });

  test("an organization id in capitals names the same organization", async () => {
    expect((await h.call("GET", `/api/organizations/${orgId.toUpperCase()}/users`, { token: ownerJwt })).status).toBe(200);
    const m = await addUser("member");
    expect((await h.call("PUT", `/api/organizations/${orgId.toUpperCase()}/users/${m.id.toUpperCase()}`, { token: ownerJwt, body: { name: "Caps" } })).status).toBe(200);
  });
});

describe("races", () => {
  test("a password change that was hashing when an admin reset the password loses: 401, the reset stands", async () => {
    const m = await addUser("member");
    const before = h.services.accounts.principalFor(m.id, 0)!;
    expect((await put(ownerJwt, m.id, { password: "reset-by-admin" })).status).toBe(200);
    // The user's change, checked against the session it was sent with (version 0), comes after.
    const info = { method: "PUT", endpoint: "/api/auth/password", ipAddress: null, userAgent: null };
    await expect(h.services.accounts.changeOwnPassword(before, "users-own-choice", info)).rejects.toMatchObject({ status: 401 });
    expect((await h.call("POST", "/api/auth/login", { body: { email: m.email, password: "users-own-choice" } })).status).toBe(401);
    expect((await me(await h.login(m.email, "reset-by-admin"))).status).toBe(200);
  });

  test("an owner demoted or removed while their request hashed a password has it refused", async () => {
    const owner2 = await addUser("owner");
    const target = await addUser("member");
    const stale = h.services.accounts.principalFor(owner2.id, 0)!;
    const info = { method: "PUT", endpoint: "/api/organizations", ipAddress: null, userAgent: null };
    expect((await put(ownerJwt, owner2.id, { role: "admin" })).status).toBe(200);
    // Sent as an owner, arriving after the demotion: making an owner is refused (before: applied).
    await expect(h.services.accounts.updateUser(stale, orgId, target.id, { role: "owner", password: "promoted-pass" }, info)).rejects.toMatchObject({ status: 403 });
    await expect(h.services.accounts.createUser(stale, orgId, { email: "late-owner@example.test", password: "late-password", role: "owner" }, info)).rejects.toMatchObject({ status: 403 });
    expect((await remove(ownerJwt, owner2.id)).status).toBe(200);
    await expect(h.services.accounts.updateUser(stale, orgId, target.id, { password: "changed-by-ghost" }, info)).rejects.toMatchObject({ status: 401 });
    expect((await me(target.jwt)).status).toBe(200);
  });

  test("a reset lifts the account's sign-in lock: the guesses were against a password that is gone", async () => {
    const m = await addUser("member");
    for (let i = 0; i < 10; i++) {
      await h.call("POST", "/api/auth/login", { body: { email: m.email, password: `guess-${i}` } });
      h.clock.advance(10_000);
    }
    expect((await h.call("POST", "/api/auth/login", { body: { email: m.email, password: "first-password" } })).status).toBe(429);
    await h.services.accounts.resetPassword(m.email, "after-the-reset");
    expect((await h.call("POST", "/api/auth/login", { body: { email: m.email, password: "after-the-reset" } })).status).toBe(200);
    h.clock.advance(16 * 60_000);
  }, 30_000);

  test("a wrong current password is filed with the session's user as the actor", async () => {
    const m = await addUser("member");
    await h.call("PUT", "/api/auth/password", { token: m.jwt, body: { current_password: "wrong-one", new_password: "whatever-password" } });
    const failed = (await h.call("GET", `/api/organizations/${orgId}/activity?action=login_failed`, { token: ownerJwt })).body.data.find((e: { detail: string }) => e.detail === m.email);
    expect(failed).toMatchObject({ actor_user_id: m.id, status_code: 403 });
    h.clock.advance(16 * 60_000);
  });
});

describe("the first owner", () => {
  test("the first owner is still there and signs in", async () => {
    expect((await me(await h.login(ADMIN_EMAIL, ADMIN_PASSWORD))).status).toBe(200);
  });
});
