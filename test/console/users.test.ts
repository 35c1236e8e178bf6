// The console's user management in chromium against a real Hearth: the Users screen (add, role,
// password, remove, each refusal by its action; members read only), Settings › My account (a
// password change keeps this console signed in and signs out the others), and the organization's
// security trail. Each change costs one request: no list is read again after it, nothing polls.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page, Route } from "playwright-core";
import { browserMissing, openBrowser, startHearth, type Browser, type Hearth } from "./browser";

const missing = browserMissing();
if (missing && process.env.CI === "true") throw new Error(`console browser tests cannot run under CI: ${missing}`);

let adminPassword = "users-test-admin-password";
let hearth: Hearth;
let a: Browser; // the owner's console
let b: Browser; // another user's console, in another browser profile
const pageErrors: string[] = [];
const dialogs: string[] = [];
/** API requests the owner's console made (method and path), to count what each action costs. */
const sent: string[] = [];

const jwtOf = (p: Page) => p.evaluate("sessionStorage.getItem('hearth.session')") as Promise<string | null>;
const api = async (jwt: string | null, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${hearth.url}${path}`, { method, headers: { authorization: `Bearer ${jwt}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};
const go = (p: Page, label: string) => p.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: label }).click();
const signedIn = (p: Page) => p.getByRole("navigation", { name: "Sections" }).waitFor();
const signInPage = (p: Page) => p.getByRole("form", { name: "Sign in" }).waitFor();

const SHOTS = join(import.meta.dir, "screenshots");
const shot = (p: Page, name: string) => p.screenshot({ path: join(SHOTS, `users-${name}-1440.png`), fullPage: true });

/** Signs in on the page as it is (no reload: what the tab held before must be gone by itself). */
async function signInHere(p: Page, email: string, password: string) {
  await p.getByLabel("Email").fill(email);
  await p.getByLabel("Password").fill(password);
  await p.getByRole("button", { name: "Sign in" }).click();
  await signedIn(p);
}

async function signIn(p: Page, email: string, password: string) {
  await p.goto(`${hearth.url}/users`);
  await signInHere(p, email, password);
}

/** The requests `action` makes in the owner's console, once the page has settled. */
async function costOf(action: () => Promise<unknown>): Promise<string[]> {
  const from = sent.length;
  await action();
  await a.page.waitForTimeout(500);
  return sent.slice(from);
}

describe.skipIf(Boolean(missing))("console: users, my password, the security trail", () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    hearth = await startHearth({ HEARTH_ADMIN_PASSWORD: adminPassword, HEARTH_OFFLINE: "1" });
    a = await openBrowser(hearth.url);
    b = await openBrowser(hearth.url);
    for (const p of [a.page, b.page]) {
      p.on("pageerror", (e) => pageErrors.push(e.message));
      p.on("dialog", (d) => (dialogs.push(d.message()), void d.accept()));
    }
    a.page.on("request", (r) => r.url().includes("/api/") && sent.push(`${r.method()} ${new URL(r.url()).pathname}`));
    await signIn(a.page, "admin@localhost", adminPassword);
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await hearth?.stop();
  }, 60_000);

  const users = () => a.page.getByRole("region", { name: /^Users \(/ });
  const row = (p: Page, email: string) => p.getByRole("row").filter({ has: p.getByRole("cell", { name: email, exact: true }) });
  const manage = async (email: string) => {
    await row(a.page, email).getByRole("button", { name: `Manage ${email}` }).click();
  };

  test("Users: add, change a role, set a password, remove; refusals shown by their action; a member reads only", async () => {
    const p = a.page;
    await go(p, "Users");
    await row(p, "admin@localhost").getByText("owner", { exact: true }).waitFor();
    expect(await row(p, "admin@localhost").textContent()).toContain("you");

    const add = p.getByRole("form", { name: "Add a user" });
    const addUser = async (email: string, name: string, role: string, password?: string) => {
      await add.getByLabel("Email").fill(email);
      await add.getByLabel("Name").fill(name);
      await add.getByLabel("Role").selectOption(role);
      if (password) await add.getByLabel("Initial password").fill(password);
      else await add.getByRole("button", { name: "Generate" }).click();
      await add.getByRole("button", { name: "Add user" }).click();
      await add.getByText(`Added ${email} as ${role}.`).waitFor();
    };
    // One request per addition: the list takes the server's answer, it is not read again.
    expect(await costOf(() => addUser("erin@example.com", "Erin", "member", "erin-first-password"))).toEqual(["POST /api/organizations/" + (await orgId()) + "/users"]);
    await row(p, "erin@example.com").getByText("member", { exact: true }).waitFor();
    await addUser("dana@example.com", "Dana", "admin");
    await users().getByRole("heading", { name: "Users (3)" }).waitFor();
    // The same email again: the server's 409, by the form.
    await add.getByLabel("Email").fill("erin@example.com");
    await add.getByLabel("Initial password").fill("another-password");
    await add.getByRole("button", { name: "Add user" }).click();
    await add.getByRole("alert").filter({ hasText: "A user with the email erin@example.com already exists" }).waitFor();

    // Erin, a member, sees the users but no action, no add form, no trail.
    await signIn(b.page, "erin@example.com", "erin-first-password");
    await row(b.page, "dana@example.com").waitFor();
    expect(await b.page.getByRole("button", { name: /^Manage / }).count()).toBe(0);
    expect(await b.page.getByRole("form", { name: "Add a user" }).count()).toBe(0);
    expect(await b.page.getByRole("tab", { name: "Security trail" }).count()).toBe(0);
    await b.page.getByText("Only owners and admins of the organization add, change or remove users.").waitFor();

    // Role: Erin becomes admin (one PUT, the row takes the answer).
    await manage("erin@example.com");
    const erinRole = p.getByRole("form", { name: "Role of erin@example.com" });
    await erinRole.getByLabel("Role").selectOption("admin");
    expect(await costOf(() => erinRole.getByRole("button", { name: "Change role" }).click())).toEqual([`PUT /api/organizations/${await orgId()}/users/${await idOf("erin@example.com")}`]);
    await row(p, "erin@example.com").getByText("admin", { exact: true }).waitFor();
    await p.getByText("erin@example.com is now admin.").waitFor();
    await shot(p, "manage");

    // A new password for Erin ends her open console at its next request; the new one works.
    const erinPassword = p.getByRole("form", { name: "Password of erin@example.com" });
    await erinPassword.getByLabel("New password").fill("erin-second-password");
    await erinPassword.getByRole("button", { name: "Set password" }).click();
    await p.getByText("New password set for erin@example.com; their sessions were signed out.").waitFor();
    await go(b.page, "Agents");
    await signInPage(b.page);
    await b.page.getByText("Your session has ended").waitFor();
    await shot(b.page, "session-ended");
    // Signed in again in the same tab, Erin sees the list as it is now (she is an admin), not
    // the one her ended session had loaded.
    await signInHere(b.page, "erin@example.com", "erin-second-password");
    await go(b.page, "Users");
    await row(b.page, "erin@example.com").getByText("admin", { exact: true }).waitFor();

    // Erin, now an admin, is offered nothing that only owners may do: the owner's row has no
    // Manage button and the roles she may give exclude owner.
    await row(b.page, "admin@localhost").getByText(/Only (super admins|owners) change/).waitFor();
    expect(await b.page.getByRole("form", { name: "Add a user" }).getByLabel("Role").locator("option").allTextContents()).toEqual(["admin", "member"]);
    // Demoted while her screen is open, her next change is refused (403) beside the action,
    // and she stays signed in (403 is not 401).
    await row(b.page, "dana@example.com").getByRole("button", { name: "Manage dana@example.com" }).click();
    const adminJwt = await jwtOf(p);
    expect((await api(adminJwt, "PUT", `/api/organizations/${await orgId()}/users/${await idOf("erin@example.com")}`, { role: "member" })).status).toBe(200);
    const danaName = b.page.getByRole("form", { name: "Name of dana@example.com" });
    await danaName.getByLabel("Name").fill("Dana S.");
    await danaName.getByRole("button", { name: "Rename" }).click();
    await b.page.getByRole("alert").filter({ hasText: "Only owners and admins of the organization may manage its users" }).waitFor();
    await signedIn(b.page);
    await row(p, "erin@example.com").getByText("admin", { exact: true }).waitFor(); // the owner's list is not re-read by itself

    // Erin holds an API token; removing her says what happens and does it: her console is sent
    // to sign-in at its next request, her token stops working.
    const erinJwt = await jwtOf(b.page);
    const ws = (await api(erinJwt, "GET", "/api/products")).body.data[0].id;
    expect((await api(adminJwt, "PUT", `/api/organizations/${await orgId()}/users/${await idOf("erin@example.com")}`, { role: "admin" })).status).toBe(200);
    const created = await api(erinJwt, "POST", "/api/api-tokens", { product_id: ws, token_name: "erin's script" });
    expect(created.status).toBe(201);
    const secret = created.body.data.token as string;
    expect((await fetch(`${hearth.url}/api/api-token/auth/validate`, { headers: { "x-api-token": secret } })).status).toBe(200);
    const removal = await costOf(() => p.getByRole("button", { name: "Remove user" }).click());
    expect(removal).toEqual([`DELETE /api/organizations/${await orgId()}/users/${await idOf("erin@example.com", adminJwt, true)}`]);
    expect(dialogs.at(-1)).toBe("Remove erin@example.com? Their sessions end at once and every API token they created is revoked. Audit log entries that name them stay.");
    await p.getByText("Removed erin@example.com: their sessions ended and their API tokens are revoked.").waitFor();
    expect(await row(p, "erin@example.com").count()).toBe(0);
    await users().getByRole("heading", { name: "Users (2)" }).waitFor();
    expect((await fetch(`${hearth.url}/api/api-token/auth/validate`, { headers: { "x-api-token": secret } })).status).toBe(401);
    await go(b.page, "Integrations");
    await signInPage(b.page);
    await b.page.getByText("Your session has ended").waitFor();
    // Nothing of Erin's session is left in that tab.
    expect(await b.page.evaluate("sessionStorage.getItem('hearth.session')")).toBeNull();

    // The last owner keeps the role: the server's 409, beside the role.
    await manage("admin@localhost");
    const mine = p.getByRole("form", { name: "Role of admin@localhost" });
    await mine.getByLabel("Role").selectOption("admin");
    await mine.getByRole("button", { name: "Change role" }).click();
    await p.getByRole("alert").filter({ hasText: "admin@localhost is the organization's last owner" }).waitFor();
    await shot(p, "last-owner");
    await row(p, "admin@localhost").getByText("owner", { exact: true }).waitFor();
    // One's own row offers no admin password reset (it would end this session): My account does it.
    expect(await p.getByRole("form", { name: "Password of admin@localhost" }).count()).toBe(0);
    await p.getByRole("link", { name: "Settings › My account" }).waitFor();
    await signedIn(p);
    expect(pageErrors).toEqual([]);
  }, 180_000);

  test("Change my password: a wrong current password is refused in place, the right one keeps this console signed in and ends the others", async () => {
    const p = a.page;
    // Another console of the same account, which the change must sign out.
    await signIn(b.page, "admin@localhost", adminPassword);
    await p.getByRole("link", { name: "admin@localhost" }).click();
    const form = p.getByRole("form", { name: "Change my password" });
    await form.waitFor();
    const before = await jwtOf(p);

    await form.getByLabel("Current password").fill("not my password");
    await form.getByLabel(/^New password/).fill("a-new-admin-password");
    await form.getByLabel("Confirm new password").fill("a-new-admin-password");
    await form.getByRole("button", { name: "Change password" }).click();
    await form.getByRole("alert").filter({ hasText: "current_password is not your password" }).waitFor();
    await signedIn(p);
    expect(await jwtOf(p)).toBe(before);

    // The account's budget of failed sign-ins (429, minutes long) is said at once, not waited out.
    await p.route("**/api/auth/password", (route) =>
      route.fulfill({
        status: 429,
        headers: { "content-type": "application/json", "retry-after": "840" },
        body: JSON.stringify({ success: false, error: "TooManyRequests", message: "Too many failed sign-ins for this account; retry in 840 s" }),
      }),
    );
    await form.getByRole("button", { name: "Change password" }).click();
    await form.getByRole("alert").filter({ hasText: "Too many failed sign-ins for this account; retry in 840 s" }).waitFor();
    expect(await p.getByText("Waiting for the rate limit").count()).toBe(0);
    await p.unroute("**/api/auth/password");

    // A request sent with the old session is answered after the change (here held until then):
    // its 401 is about a session this console no longer uses, so it must not sign out.
    let held: Route | undefined;
    await p.route(/\/api\/integrations-base\/types/, (route) => void (held = route));
    await go(p, "Integrations");
    while (!held) await p.waitForTimeout(50);
    await p.getByRole("link", { name: "admin@localhost" }).click();

    // A confirmation that differs is caught before anything is sent.
    await form.getByLabel("Current password").fill(adminPassword);
    await form.getByLabel(/^New password/).fill("a-new-admin-password");
    await form.getByLabel("Confirm new password").fill("a-new-admin-passwort");
    await form.getByText("Does not match the new password.").waitFor();
    expect(await form.getByRole("button", { name: "Change password" }).isDisabled()).toBe(true);
    await form.getByLabel("Confirm new password").fill("a-new-admin-password");
    await form.getByRole("button", { name: "Change password" }).click();
    await form.getByText("Password changed. Every other session of yours (other tabs, browsers and devices) was signed out; this one stays signed in.").waitFor();
    adminPassword = "a-new-admin-password";
    await shot(p, "password-changed");
    await held.continue();
    await p.waitForTimeout(1000);
    await signedIn(p);
    await p.unroute(/\/api\/integrations-base\/types/);

    // This console now carries the new session: the old token is refused, the new one works,
    // and the next screens load without a trip to sign-in.
    const after = await jwtOf(p);
    expect(after).not.toBe(before);
    expect((await api(before, "GET", "/api/auth/me")).status).toBe(401);
    expect((await api(after, "GET", "/api/auth/me")).status).toBe(200);
    await go(p, "Agents");
    await p.getByRole("button", { name: "Install Knowledge assistant" }).waitFor();
    await go(p, "Workflows");
    await p.getByText("No workflows yet.").waitFor();
    await signedIn(p);
    // The other console is sent to sign-in at its next request.
    await go(b.page, "Agents");
    await signInPage(b.page);
    await signIn(b.page, "admin@localhost", adminPassword);
    expect(pageErrors).toEqual([]);
  }, 120_000);

  test("the security trail: newest first, who, what, when and from where, filtered by action", async () => {
    const p = a.page;
    await go(p, "Users");
    // Reading the trail costs one request: the names of who acted come from the list already loaded.
    const opened = await costOf(() => p.getByRole("tab", { name: "Security trail" }).click());
    expect(opened).toEqual([`GET /api/organizations/${await orgId()}/activity`]);
    const table = p.getByRole("table", { name: "Security trail, newest first" });
    await table.waitFor();
    const rows = table.locator("tbody tr");
    await shot(p, "trail");
    const first = (await rows.first().locator("td").allTextContents()).map((s) => s.trim());
    // The newest entry is the last thing done: a sign-in of the other console, after the change.
    expect(first[1]).toBe("Signed in");
    expect(first[2]).toBe("you (admin@localhost)");
    expect(first[4]).toStartWith("127.0.0.1");
    expect(first[4]).toContain("Chrome");
    expect(first[5]).toBe("200");
    const times = await Promise.all((await rows.all()).map(async (r) => Date.parse((await r.locator("td").first().textContent())!)));
    for (let i = 1; i < times.length; i++) expect(times[i]!).toBeLessThanOrEqual(times[i - 1]!);

    const removed = rows.filter({ hasText: "User removed" });
    expect((await removed.first().locator("td").allTextContents()).slice(1, 4)).toEqual(["User removed", "you (admin@localhost)", "erin@example.com"]);
    expect(await rows.filter({ hasText: "Changed own password" }).count()).toBe(1);

    const filter = p.getByLabel("Action", { exact: true });
    expect(await costOf(() => filter.selectOption({ label: "User added" }))).toEqual([`GET /api/organizations/${await orgId()}/activity`]);
    await table.getByRole("cell", { name: "erin@example.com as member" }).waitFor();
    await shot(p, "trail-filtered");
    expect(await rows.locator("td:nth-child(2)").allTextContents()).toEqual(["User added", "User added"]);
    expect(await rows.locator("td:nth-child(4)").allTextContents()).toEqual(["dana@example.com as admin", "erin@example.com as member"]);
    await filter.selectOption({ label: "Sign-in failed" });
    await table.getByRole("cell", { name: "Sign-in failed" }).first().waitFor();
    // The wrong current password was recorded as a failed sign-in (it spends the same budget).
    expect(await rows.locator("td:nth-child(5)").first().textContent()).toStartWith("127.0.0.1");
    expect(await rows.locator("td:nth-child(6)").allTextContents()).toContain("403");

    // Back to Users and to the trail: both are remembered, nothing is asked again; a change
    // makes the trail be read afresh, with the change on top.
    await filter.selectOption({ label: "All actions" });
    await table.waitFor();
    expect(await costOf(async () => {
      await p.getByRole("tab", { name: "Users" }).click();
      await row(p, "dana@example.com").waitFor();
      await p.getByRole("tab", { name: "Security trail" }).click();
      await table.waitFor();
    })).toEqual([]);
    await p.getByRole("tab", { name: "Users" }).click();
    await manage("dana@example.com");
    const danaRole = p.getByRole("form", { name: "Role of dana@example.com" });
    await danaRole.getByLabel("Role").selectOption("member");
    await danaRole.getByRole("button", { name: "Change role" }).click();
    await p.getByText("dana@example.com is now member.").waitFor();
    await p.getByRole("tab", { name: "Security trail" }).click();
    await table.getByRole("cell", { name: "dana@example.com: role admin → member" }).waitFor();
    expect(await rows.first().locator("td:nth-child(2)").textContent()).toBe("User changed");
    expect(pageErrors).toEqual([]);
  }, 120_000);
});

let org: string | undefined;
async function orgId(): Promise<string> {
  org ??= (await api(await jwtOf(a.page), "GET", "/api/auth/me")).body.data.acting_organization_id as string;
  return org!;
}

const ids = new Map<string, string>();
/** A user's id, read once while they exist (`cached` for one already removed). */
async function idOf(email: string, jwt?: string | null, cached = false): Promise<string> {
  if (!ids.has(email) && !cached) {
    const list = (await api(jwt ?? (await jwtOf(a.page)), "GET", `/api/organizations/${await orgId()}/users?pageSize=200`)).body.data as { id: string; email: string }[];
    for (const u of list) ids.set(u.email, u.id);
  }
  return ids.get(email)!;
}
