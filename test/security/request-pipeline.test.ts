// What a request costs before it is known who sent it: credentials and budgets are checked before
// any body byte is read, multipart bodies have a field cap, failed authentication is budgeted per
// client address.
import { afterEach, describe, expect, test } from "bun:test";
import { createHarness, defaultWorkspaceId, type Harness } from "../support/harness";
import { requestFrom } from "../support/from-address";
import net from "node:net";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A body that never ends; `pulls()` says how far the server read into it. */
function endlessBody() {
  let pulls = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      pulls++;
      c.enqueue(new Uint8Array(64 * 1024).fill(0x61));
    },
  });
  return { stream, pulls: () => pulls };
}

/** Sends `endlessBody()` and gives up after 3 s, so a server that reads it fails the test instead of hanging it. */
async function sendEndless(app: Harness["app"], path: string, headers: Record<string, string>) {
  const body = endlessBody();
  const req = new Request(`http://hearth.test${path}`, { method: "POST", headers, body: body.stream, duplex: "half" } as RequestInit);
  const res = await Promise.race([app.handle(req), Bun.sleep(3000).then(() => null)]);
  return { status: res?.status ?? "no answer in 3 s", text: res ? await res.text() : "", pulls: body.pulls() };
}

const MULTIPART = "multipart/form-data; boundary=XyZ";
function manyFields(n: number): Uint8Array {
  const one = (i: number) => `--XyZ\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nx\r\n`;
  return new TextEncoder().encode(Array.from({ length: n }, (_, i) => one(i)).join("") + "--XyZ--\r\n");
}

const PROTECTED = [
  ["/api/assistant/chat", "application/json"],
  ["/api/assistant/chat", MULTIPART],
  ["/api/knowledge-base/storage/upload", MULTIPART],
  ["/api/audio/transcriptions", MULTIPART],
  ["/api/api-tokens", "application/json"],
] as const;

describe("credentials before the body", () => {
  test("no credentials, a bad token or a bad JWT: 401 without reading the body", async () => {
    h = await createHarness();
    for (const [path, type] of PROTECTED) {
      const auths: Record<string, string>[] = [{}, { "x-api-token": "svc_" + "a".repeat(40) }, { authorization: "Bearer not.a.jwt" }];
      for (const auth of auths) {
        const r = await sendEndless(h.app, path, { "content-type": type, ...auth });
        expect({ path, status: r.status }).toEqual({ path, status: 401 });
        // A stream may be pulled once to fill its queue; reading the body would pull hundreds of times.
        expect(r.pulls).toBeLessThanOrEqual(2);
      }
    }
  });

  test("a caller over its budget gets 429 without the body being read", async () => {
    h = await createHarness({ HEARTH_RATE_LIMIT: "100000", HEARTH_RATE_LIMIT_STRICT: "1" });
    const jwt = await h.login();
    const ws = await defaultWorkspaceId(h, jwt);
    const token = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "budget" } })).body.data.token;
    await h.call("POST", "/api/assistant/chat", { token, body: {} }); // spends the strict budget of 1
    const r = await sendEndless(h.app, "/api/assistant/chat", { "content-type": "application/json", "x-api-token": token });
    expect(r.status).toBe(429);
    expect(r.pulls).toBeLessThanOrEqual(2);
  });

  test("login over its per-address budget gets 429 without the body being read", async () => {
    h = await createHarness({ HEARTH_RATE_LIMIT: "1" });
    await h.call("POST", "/api/auth/login", { body: { email: "x@y.test", password: "bad" } });
    const r = await sendEndless(h.app, "/api/auth/login", { "content-type": "application/json" });
    expect(r.status).toBe(429);
    expect(r.pulls).toBeLessThanOrEqual(2);
  });

  test("the reported case: 100,000 tiny fields (6 MB) without credentials answer 401 at once", async () => {
    h = await createHarness();
    const body = manyFields(100_000);
    expect(body.byteLength).toBeGreaterThan(5_000_000);
    const started = performance.now();
    const r = await h.call("POST", "/api/assistant/chat", { raw: body, headers: { "content-type": MULTIPART } });
    expect(r.status).toBe(401);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe("multipart field cap", () => {
  test("more than 1,000 fields is a 413 naming the limit, fast, even with a valid token", async () => {
    h = await createHarness();
    const jwt = await h.login();
    for (const n of [1_001, 20_000]) {
      const started = performance.now();
      const r = await h.call("POST", "/api/assistant/chat", { token: jwt, raw: manyFields(n), headers: { "content-type": MULTIPART } });
      expect(r.status).toBe(413);
      expect(r.body).toMatchObject({ success: false, error: "PayloadTooLarge" });
      expect(r.body.message).toContain("1,000 fields");
      expect(performance.now() - started).toBeLessThan(2000);
    }
  });

  test("the cap holds when the body arrives in small chunks (delimiters split across them)", async () => {
    h = await createHarness();
    const jwt = await h.login();
    for (const [n, refused] of [[1_000, false], [1_001, true]] as const) {
      const bytes = manyFields(n);
      let at = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (at >= bytes.length) return c.close();
          c.enqueue(bytes.subarray(at, (at += 7)));
        },
      });
      const req = new Request("http://hearth.test/api/assistant/chat", { method: "POST", headers: { "content-type": MULTIPART, authorization: `Bearer ${jwt}` }, body: stream, duplex: "half" } as RequestInit);
      const res = await h.app.handle(req);
      expect({ n, status: res.status === 413 }).toEqual({ n, status: refused });
    }
  });

  test("a body within the cap is still parsed (repeated names become a list)", async () => {
    h = await createHarness();
    const jwt = await h.login();
    const form = new FormData();
    form.append("message", "hello");
    for (let i = 0; i < 3; i++) form.append("knowledge_base_ids", crypto.randomUUID());
    const r = await h.call("POST", "/api/assistant/chat", { token: jwt, raw: form });
    // Parsed and validated as an object: a list of ids, not the unknown-field or parse errors.
    expect(r.status).not.toBe(413);
    expect(r.text).not.toContain("could not be parsed");
  });
});

describe("failed authentication is budgeted per client address", () => {
  test("a flood of bad credentials from one address gets 429; another address is unaffected", async () => {
    h = await createHarness({ HEARTH_RATE_LIMIT: "5" });
    const jwt = await h.login();
    const ws = await defaultWorkspaceId(h, jwt);
    const good = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "good" } })).body.data.token;
    const server = h.app.listen({ hostname: "127.0.0.1", port: 0 }).server!;
    const port = server.port!;
    try {
      const bad: Record<string, string>[] = [
        { "x-api-token": "svc_" + "b".repeat(40) },
        { authorization: "Bearer forged.jwt.value" },
        {},
      ];
      const statuses: number[] = [];
      for (let i = 0; i < 9; i++) statuses.push((await requestFrom(port, { from: "127.0.0.2", path: "/api/auth/me", headers: bad[i % 3] })).status);
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses.slice(5)).toEqual([429, 429, 429, 429]);
      const limited = await requestFrom(port, { from: "127.0.0.2", path: "/api/products", headers: bad[0] });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(limited.body).toMatchObject({ success: false, error: "TooManyRequests" });

      // Another address: a good caller works and a mistaken one still gets its plain 401.
      expect((await requestFrom(port, { from: "127.0.0.3", path: "/api/products", headers: { "x-api-token": good } })).status).toBe(200);
      expect((await requestFrom(port, { from: "127.0.0.3", path: "/api/products", headers: bad[0] })).status).toBe(401);
      // Valid credentials from the flooding address still work: only failures are refused.
      expect((await requestFrom(port, { from: "127.0.0.2", path: "/api/products", headers: { "x-api-token": good } })).status).toBe(200);

      h.clock.advance(60_000);
      expect((await requestFrom(port, { from: "127.0.0.2", path: "/api/auth/me", headers: bad[0] })).status).toBe(401);
    } finally {
      server.stop(true);
    }
  });
});

/**
 * Announces a `length`-byte body and sends it in 64 KB pieces until the server closes the
 * connection (or all is sent); resolves with the answer's head and the bytes the socket took.
 */
function uploadUntilClosed(port: number, path: string, headers: Record<string, string>, length: number, piece: Uint8Array = new Uint8Array(64 * 1024).fill(0x61)) {
  return new Promise<{ head: string; sent: number }>((resolve, reject) => {
    const head = `POST ${path} HTTP/1.1\r\nhost: hearth.test\r\ncontent-length: ${length}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`;
    const received: Buffer[] = [];
    let closed = false;
    const timer = setTimeout(() => (sock.destroy(), reject(new Error("no answer in 10 s"))), 10_000);
    const finish = () => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      const text = Buffer.concat(received).toString("latin1");
      resolve({ head: text.slice(0, text.indexOf("\r\n\r\n")), sent: sock.bytesWritten });
    };
    const sock = net.connect({ host: "127.0.0.1", port }, async () => {
      sock.write(head);
      for (let sent = 0; sent < length && !closed; sent += piece.byteLength) {
        if (!sock.write(piece.subarray(0, Math.min(piece.byteLength, length - sent)))) await new Promise((r) => sock.once("drain", r).once("close", r));
      }
    });
    sock.on("data", (d: Buffer) => received.push(d));
    sock.on("error", finish); // EPIPE / ECONNRESET once the server closed: the answer came before
    sock.on("close", finish);
  });
}

describe("a refused body is not received", () => {
  test("401 and 413 close the connection: the client stops sending instead of Hearth draining megabytes", async () => {
    h = await createHarness();
    const jwt = await h.login();
    const server = h.app.listen({ hostname: "127.0.0.1", port: 0 }).server!;
    const body = 40 * 1024 * 1024;
    try {
      const anonymous = await uploadUntilClosed(server.port!, "/api/assistant/chat", { "content-type": MULTIPART }, body);
      expect(anonymous.head).toStartWith("HTTP/1.1 401");
      expect(anonymous.head.toLowerCase()).toContain("connection: close");
      expect(anonymous.sent).toBeLessThan(body / 4);

      // With a valid session the body is read until the field cap, then refused the same way.
      const piece = manyFields(2_000).subarray(0, 64 * 1024); // over 1,000 fields in each piece
      const capped = await uploadUntilClosed(server.port!, "/api/assistant/chat", { "content-type": MULTIPART, authorization: `Bearer ${jwt}` }, body, piece);
      expect(capped.head).toStartWith("HTTP/1.1 413");
      expect(capped.head.toLowerCase()).toContain("connection: close");
      expect(capped.sent).toBeLessThan(body / 4);
    } finally {
      server.stop(true);
    }
  }, 30_000);

  test("an answer after the whole body was read keeps the connection open", async () => {
    h = await createHarness();
    const jwt = await h.login();
    const read = await h.call("POST", "/api/assistant/chat", { token: jwt, body: { not_a_field: 1 } });
    expect(read.status).toBe(422);
    expect(read.headers.get("connection")).toBeNull();
    const refused = await h.call("POST", "/api/assistant/chat", { body: { message: "hi" } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("connection")).toBe("close");
  });
});
