// What Hearth defends against on responses that outlive their request: an event stream opened with
// a token that is then revoked or deactivated, or with a session that then ends (password changed,
// user removed), kept receiving an execution's events, its outputs included, for as long as the
// execution waited (days, for an approval).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BASE, createHarness, defaultWorkspaceId, type Harness } from "../support/harness";
import { readSse } from "../support/sse";

let h: Harness;
let admin: string;
let ws: string;
let orgId: string;

beforeAll(async () => {
  h = await createHarness();
  admin = await h.login();
  ws = await defaultWorkspaceId(h, admin);
  orgId = (await h.call("GET", "/api/auth/me", { token: admin })).body.data.user.organization_id;
  h.services.start();
});
afterAll(() => h.close());

const waiting = { nodes: [{ id: "t", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "go?" } }, { id: "out", type: "output", config: { value: "SECRET-AFTER-REVOKE" } }], edges: [{ from: "t", to: "ask" }, { from: "ask", to: "out" }] };

/** Starts an execution that waits for an approval, and follows it with `credential`. */
async function follow(credential: string) {
  const started = await h.call("POST", "/api/workflow/execute", { token: admin, body: { graph: waiting, product_id: ws, input: {} } });
  expect(started.status).toBe(202);
  const id = started.body.data.id as string;
  const stream = readSse(await h.app.handle(new Request(`${BASE}/api/workflow/${id}/events`, { headers: { authorization: `Bearer ${credential}` } })));
  await stream.until("node_waiting");
  return { id, stream };
}

/** Approves the execution (as the admin) and waits until it has ended. */
async function approve(id: string) {
  expect((await h.call("POST", `/api/workflow/${id}/continue`, { token: admin, body: {} })).status).toBe(200);
  for (let i = 0; i < 200 && (await h.call("GET", `/api/workflow/${id}/status`, { token: admin })).body.data.status !== "succeeded"; i++) await Bun.sleep(10);
}

describe("event streams end when their credentials do", () => {
  for (const change of ["revoke", "deactivate", "delete", "regenerate"] as const) {
    test(`a token's stream gets nothing after a ${change}`, async () => {
      const created = await h.call("POST", "/api/api-tokens", { token: admin, body: { product_id: ws, token_name: `follower ${change}` } });
      const { id, stream } = await follow(created.body.data.token);
      const tokenId = created.body.data.id;
      const r =
        change === "revoke"
          ? await h.call("POST", `/api/api-tokens/${tokenId}/revoke`, { token: admin })
          : change === "deactivate"
            ? await h.call("PUT", `/api/api-tokens/${tokenId}`, { token: admin, body: { is_active: false } })
            : change === "delete"
              ? await h.call("DELETE", `/api/api-tokens/${tokenId}`, { token: admin })
              : await h.call("POST", `/api/api-tokens/${tokenId}/regenerate`, { token: admin });
      expect(r.status).toBe(200);
      await approve(id);
      await stream.ended;
      expect(stream.events.map((e) => e.event)).not.toContain("done");
      expect(JSON.stringify(stream.events)).not.toContain("SECRET-AFTER-REVOKE");
    });
  }

  test("a token that stays valid follows to the end", async () => {
    const created = await h.call("POST", "/api/api-tokens", { token: admin, body: { product_id: ws, token_name: "steady follower" } });
    const other = await h.call("POST", "/api/api-tokens", { token: admin, body: { product_id: ws, token_name: "revoked meanwhile" } });
    const { id, stream } = await follow(created.body.data.token);
    // Another token's revoke makes the stream check again; its own token still holds.
    expect((await h.call("POST", `/api/api-tokens/${other.body.data.id}/revoke`, { token: admin })).status).toBe(200);
    await approve(id);
    expect((await stream.until("done"))?.data).toMatchObject({ status: "succeeded", output: "SECRET-AFTER-REVOKE" });
  });

  test("a session's stream ends with a password change and with the user's removal", async () => {
    const add = await h.call("POST", `/api/organizations/${orgId}/users`, { token: admin, body: { email: "follower@example.test", password: "follower-pass", role: "admin" } });
    expect(add.status).toBe(201);
    const session = await h.login("follower@example.test", "follower-pass");
    const first = await follow(session);
    const changed = await h.call("PUT", "/api/auth/password", { token: session, body: { current_password: "follower-pass", new_password: "follower-pass-2" } });
    expect(changed.status).toBe(200);
    await approve(first.id);
    await first.stream.ended;
    expect(first.stream.events.map((e) => e.event)).not.toContain("done");

    const second = await follow(changed.body.data.token);
    expect((await h.call("DELETE", `/api/organizations/${orgId}/users/${add.body.data.id}`, { token: admin })).status).toBe(200);
    await approve(second.id);
    await second.stream.ended;
    expect(JSON.stringify(second.stream.events)).not.toContain("SECRET-AFTER-REVOKE");
  });
});
