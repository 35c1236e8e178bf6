// A request worked on for longer than Bun's idle timeout is answered, not reset (long-request.ts).
// With a real Bun.serve and a short timeout: the same wait without whileWorking is cut.
import { expect, test } from "bun:test";
import { whileWorking } from "../../src/platform/http/long-request";

// uWebSockets counts timeouts in ticks of 4 s: 8 s is the shortest that measures cleanly.
const IDLE_S = 8;
const WORK_MS = 11_000;

test("a request worked on past the idle timeout is answered; without whileWorking it is reset", async () => {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: IDLE_S,
    fetch(request, srv) {
      const work = async () => {
        await Bun.sleep(WORK_MS);
        return new Response("done");
      };
      return new URL(request.url).pathname === "/kept" ? whileWorking(srv, request, work, IDLE_S) : work();
    },
  });
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const [kept, cut] = await Promise.all([
      fetch(`${base}/kept`).then(async (r) => ({ status: r.status, text: await r.text() })),
      fetch(`${base}/plain`).then(
        (r) => ({ status: r.status }),
        (e: Error & { code?: string }) => ({ error: e.code ?? e.message }),
      ),
    ]);
    expect(kept).toEqual({ status: 200, text: "done" });
    expect(cut).toEqual({ error: "ECONNRESET" });
  } finally {
    server.stop(true);
  }
}, 20_000);
