// Windowing: the streamed cut (what the worker does with decoded blocks) gives exactly the
// windows of the whole-buffer cut, whatever the block sizes, and keeps every sample once.
import { describe, expect, test } from "bun:test";
import { windowStream, windows } from "../../../src/features/transcription/windows";

/** Speech-like audio: bursts of noise with pauses at irregular places. */
const bursts = (seconds: number, rate = 16000) =>
  Float32Array.from({ length: seconds * rate }, (_, i) => (Math.floor(i / (rate * 1.7)) % 3 === 2 ? 0.001 : Math.sin(i * 0.37) * Math.sin(i / 5000)));

async function* inBlocks(x: Float32Array, size: number) {
  for (let at = 0; at < x.length; at += size) yield x.slice(at, at + size);
}

describe("windows over a stream", () => {
  for (const size of [1000, 160_000, 480_000, 1_000_000]) {
    test(`blocks of ${size} samples cut where the whole buffer is cut`, async () => {
      const audio = bursts(200);
      const streamed: [number, number][] = [];
      let joined = 0;
      for await (const w of windowStream(inBlocks(audio, size))) {
        streamed.push([w.from, w.from + w.samples.length]);
        expect(w.samples[0]).toBe(audio[w.from]!);
        joined += w.samples.length;
      }
      expect(streamed).toEqual(windows(audio));
      expect(joined).toBe(audio.length);
    });
  }

  test("stopping early closes the source", async () => {
    let closed = false;
    async function* source() {
      try {
        for (;;) yield new Float32Array(16000);
      } finally {
        closed = true;
      }
    }
    for await (const w of windowStream(source())) if (w.from === 0) break;
    expect(closed).toBe(true);
  });
});
