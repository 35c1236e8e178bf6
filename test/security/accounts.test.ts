// Password guessing: each account has its own budget of failed sign-ins whatever addresses they
// come from, and failed sign-ins are on the account's organization trail (bounded).
import { afterEach, describe, expect, test } from "bun:test";
import { ADMIN_EMAIL, ADMIN_PASSWORD, createHarness, type Harness } from "../support/harness";
import { requestFrom } from "../support/from-address";

let h: Harness | undefined;
let stopServer: (() => void) | undefined;
afterEach(async () => {
  stopServer?.();
  await h?.close();
  h = undefined;
});

const VICTIM = "victim@example.test";
const VICTIM_PASSWORD = "victim-password-1";

async function setup() {
  h = await createHarness();
  const admin = await h.login();
  const orgId = (await h.call("GET", "/api/auth/me", { token: admin })).body.data.user.organization_id as string;
  const created = await h.call("POST", `/api/organizations/${orgId}/users`, { token: admin, body: { email: VICTIM, password: VICTIM_PASSWORD, role: "member" } });
  expect(created.status).toBe(201);
  const server = h.app.listen({ hostname: "127.0.0.1", port: 0 }).server!;
  stopServer = () => server.stop(true);
  const port = server.port!;
  const login = (from: string, email: string, password: string) => requestFrom(port, { from, method: "POST", path: "/api/auth/login", body: { email, password } });
  return { h, admin, orgId, login };
}

describe("per-account login budget", () => {
  test("guesses from many addresses against one account get 429 after 10 failures; other accounts are unaffected", async () => {
    const { h, login } = await setup();
    const statuses: number[] = [];
    // One guess per address: the per-address slow-down never starts, only the account's budget counts.
    for (let i = 0; i < 14; i++) statuses.push((await login(`127.0.0.${10 + i}`, VICTIM, `guess-${i}`)).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual([429, 429, 429, 429]);

    // Past the budget the password is not checked at all: a right guess is refused as well.
    const refused = await login("127.0.0.40", VICTIM.toUpperCase(), VICTIM_PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, error: "TooManyRequests" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(15 * 60);

    expect((await login("127.0.0.41", ADMIN_EMAIL, ADMIN_PASSWORD)).status).toBe(200);

    h.clock.advance(15 * 60_000 + 1);
    expect((await login("127.0.0.42", VICTIM, VICTIM_PASSWORD)).status).toBe(200);
  }, 30_000);

  test("concurrent guesses from many addresses: at most 10 passwords are checked, the rest get 429, and then the right one too", async () => {
    const { login } = await setup();
    // 8 guesses from each of 8 addresses at once: under the per-address limit, far over the account's budget.
    const replies = await Promise.all(
      Array.from({ length: 64 }, (_, i) => login(`127.0.4.${10 + (i % 8)}`, VICTIM, `guess-${i}`)),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);

    // The budget is spent: the right password is refused until the window ends (README, Sign-in).
    const right = await login("127.0.4.40", VICTIM, VICTIM_PASSWORD);
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
  }, 60_000);

  test("unknown emails have the same budget, so the 429 tells nothing about which accounts exist", async () => {
    const { login } = await setup();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await login(`127.0.1.${10 + i}`, "nobody@example.test", "guess")).status);
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
  }, 30_000);
});

describe("failed sign-ins on the organization's trail", () => {
  test("each failed sign-in of an account is listed in its organization's activity; the refused ones once", async () => {
    const { h, admin, orgId, login } = await setup();
    for (let i = 0; i < 3; i++) expect((await login(`127.0.2.${10 + i}`, VICTIM, `wrong-${i}`)).status).toBe(401);
    const trail = await h.call("GET", `/api/organizations/${orgId}/activity?action=login_failed`, { token: admin });
    expect(trail.status).toBe(200);
    expect(trail.body.data).toHaveLength(3);
    expect(trail.body.data[0]).toMatchObject({ action: "login_failed", detail: VICTIM, status_code: 401, ip_address: "127.0.2.12", endpoint: "/api/auth/login" });

    // A flood past the budget: the trail grows by the budget and one throttled row, not per attempt.
    for (let i = 0; i < 40; i++) await login(`127.0.3.${10 + i}`, VICTIM, "wrong");
    const all = await h.call("GET", `/api/organizations/${orgId}/activity?limit=1000`, { token: admin });
    const failed = all.body.data.filter((e: { action: string }) => e.action === "login_failed");
    const throttled = all.body.data.filter((e: { action: string }) => e.action === "login_throttled");
    expect(failed).toHaveLength(10);
    expect(throttled).toHaveLength(1);
    expect(throttled[0]).toMatchObject({ detail: VICTIM, status_code: 429 });
  }, 30_000);
});
