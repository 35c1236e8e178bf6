// HEARTH_LLM_TIMEOUT_S: a model server that says nothing for that long, before an answer starts or
// within one, ends the answer with a message naming the server; a slow but steady one does not, and
// the caller's own abort stays the caller's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { systemClock } from "../../src/platform/clock";
import { createLlm } from "../../src/platform/llm/create";
import { LlmSilenceError, type LlmPiece } from "../../src/platform/llm/llm";
import { startOllamaFake, type OllamaFake } from "../support/ollama-fake";

let fake: OllamaFake;
beforeAll(() => {
  fake = startOllamaFake({ respond: () => "one two three four five six" });
});
afterAll(() => fake.stop());

const llm = () => createLlm({ provider: "ollama", ollamaUrl: fake.url, llmUrl: undefined, llmApiKey: undefined, model: "llama3.2", silenceMs: 1000, clock: systemClock });
const ask = (signal = new AbortController().signal) => ({ model: "llama3.2", messages: [{ role: "user" as const, content: "hi" }], contextLength: 2048, maxAnswerTokens: 64, signal });

/** The text streamed, and what ended the stream if it failed. */
async function collect(pieces: AsyncGenerator<LlmPiece>, onPiece?: () => void) {
  let text = "";
  try {
    for await (const p of pieces) {
      if ("delta" in p) text += p.delta;
      onPiece?.();
    }
    return { text, error: undefined };
  } catch (e) {
    return { text, error: e as Error };
  }
}

describe("a silent model server", () => {
  test("one that does not start answering is given up after the timeout, with a message naming it", async () => {
    Object.assign(fake, { firstByteDelayMs: 3000, pieceDelayMs: 0 });
    const started = performance.now();
    const client = llm();
    const { text, error } = await collect(client.stream(ask()));
    expect(performance.now() - started).toBeLessThan(2500);
    expect(text).toBe("");
    expect(error).toBeInstanceOf(LlmSilenceError);
    expect(error!.message).toBe(`Ollama at ${fake.url} said nothing for 1 s before starting to answer (HEARTH_LLM_TIMEOUT_S)`);
    expect(client.describeFailure(error, "llama3.2")).toBe(error!.message);
  });

  test("one that stalls in the middle of an answer is given up too; the server sees the hang-up", async () => {
    Object.assign(fake, { firstByteDelayMs: 0, pieceDelayMs: 100 });
    const hangUps = fake.hangUps;
    const { text, error } = await collect(llm().stream(ask()), () => void (fake.pieceDelayMs = 5000));
    expect(text.length).toBeGreaterThan(0);
    expect(error?.message).toContain("said nothing for 1 s in the middle of an answer");
    await Bun.sleep(50);
    expect(fake.hangUps).toBe(hangUps + 1);
  });

  test("a slow but steady answer, longer in all than the timeout, is not cut", async () => {
    Object.assign(fake, { firstByteDelayMs: 400, pieceDelayMs: 300 });
    const { text, error } = await collect(llm().stream(ask()));
    expect(error).toBeUndefined();
    expect(text).toBe("one two three four five six");
  });

  test("the caller's own abort stays the caller's", async () => {
    Object.assign(fake, { firstByteDelayMs: 3000, pieceDelayMs: 0 });
    const caller = new AbortController();
    setTimeout(() => caller.abort(new Error("the client went away")), 200);
    const { error } = await collect(llm().stream(ask(caller.signal)));
    expect(error).not.toBeInstanceOf(LlmSilenceError);
  });
});
