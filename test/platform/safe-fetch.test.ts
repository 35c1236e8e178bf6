// safeFetch's redirects: credential headers reach only the origin the caller chose (a redirect to
// another origin keeps a safe list of headers, as browsers' fetch drops Authorization), and methods
// change the way fetch changes them (303 and a POST's 301/302 become GET without body; 307/308 keep both).
import { afterAll, expect, test } from "bun:test";
import { parseAllowList, safeFetch } from "../../src/platform/net/safe-fetch";

const seen: { server: string; method: string; path: string; headers: Record<string, string>; body: string }[] = [];
const record = (server: string) => async (req: Request) => {
  const url = new URL(req.url);
  seen.push({ server, method: req.method, path: url.pathname, headers: Object.fromEntries(req.headers), body: await req.text() });
  const to = url.searchParams.get("to");
  return to ? new Response(null, { status: Number(url.searchParams.get("status") ?? 302), headers: { location: to } }) : Response.json({ ok: true });
};
// Two ports of one address are two origins.
const home = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: record("home") });
const thief = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: record("thief") });
afterAll(() => {
  home.stop(true);
  thief.stop(true);
});

const allow = parseAllowList("127.0.0.1");
const credentials = { authorization: "Bearer s3cret", "private-token": "glpat-s3cret", cookie: "session=s3cret", "x-api-key": "s3cret", accept: "application/json" };
const hop = (to: string, status = 302) => `${home.url.origin}/start?status=${status}&to=${encodeURIComponent(to)}`;

test("a redirect to another origin delivers no credential header there; the safe ones go on", async () => {
  seen.length = 0;
  const res = await safeFetch(hop(`${thief.url.origin}/loot`), { headers: credentials, allow, maxBytes: 1000 });
  expect(res.status).toBe(200);
  const there = seen.find((s) => s.server === "thief")!;
  expect(there.path).toBe("/loot");
  expect(JSON.stringify(there.headers)).not.toContain("s3cret");
  expect(there.headers.accept).toBe("application/json");
});

test("once dropped, credentials stay dropped when a later hop comes back to the first origin", async () => {
  seen.length = 0;
  await safeFetch(hop(`${thief.url.origin}/bounce?to=${encodeURIComponent(`${home.url.origin}/back`)}`), { headers: credentials, allow, maxBytes: 1000 });
  expect(seen.map((s) => s.path)).toEqual(["/start", "/bounce", "/back"]);
  expect(JSON.stringify(seen.slice(1).map((s) => s.headers))).not.toContain("s3cret");
});

test("a redirect within the origin keeps the caller's headers", async () => {
  seen.length = 0;
  await safeFetch(hop(`${home.url.origin}/next`), { headers: credentials, allow, maxBytes: 1000 });
  const next = seen.find((s) => s.path === "/next")!;
  expect(next.headers).toMatchObject({ authorization: "Bearer s3cret", "private-token": "glpat-s3cret", "x-api-key": "s3cret" });
});

test("307/308 keep method and body; 303 and a POST's 301/302 become a GET without body", async () => {
  for (const [status, method, expected] of [
    [307, "POST", "POST"],
    [308, "PUT", "PUT"],
    [303, "PUT", "GET"],
    [302, "POST", "GET"],
    [301, "POST", "GET"],
    [302, "PUT", "PUT"],
  ] as const) {
    seen.length = 0;
    await safeFetch(hop(`${home.url.origin}/next`, status), { method, headers: { "content-type": "application/json" }, body: '{"a":1}', allow, maxBytes: 1000 });
    const next = seen.find((s) => s.path === "/next")!;
    expect([status, next.method]).toEqual([status, expected]);
    expect(next.body).toBe(expected === "GET" ? "" : '{"a":1}');
    if (expected === "GET") expect(next.headers["content-type"]).toBeUndefined();
  }
});

test("a host that does not resolve is named in the error, which keeps its code (a retry policy still sees a network error)", async () => {
  const failed = await safeFetch("http://no-such-host.invalid/x", { allow, maxBytes: 1000 }).catch((e) => e as Error & { code?: string });
  // Before: "getaddrinfo ENOTFOUND", without the host.
  expect((failed as Error).message).toStartWith("no-such-host.invalid could not be resolved: ");
  expect(["ENOTFOUND", "EAI_AGAIN"]).toContain((failed as { code?: string }).code!);
});
