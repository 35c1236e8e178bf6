// The checks an upload passes on the HTTP thread before it is queued: here, the duration cap's refusal.
import { describe, expect, test } from "bun:test";
import { prepareAudio } from "../../../src/features/transcription/audio";
import { makeWav } from "../../support/audio";

const wavOf = (seconds: number) => makeWav(new Float32Array(Math.round(seconds * 16000)), { rate: 16000 });
const refusal = (bytes: Uint8Array, maxSeconds: number) => prepareAudio(bytes, maxSeconds).then(() => "", (e: Error & { status?: number }) => `${e.status} ${e.message}`);

describe("the duration cap", () => {
  test("a WAV just over the cap is refused with a duration that is plainly over it", async () => {
    const message = await refusal(wavOf(60.01), 60);
    expect(message).toStartWith("413 Audio may be at most 1 minute long");
    expect(message).toEndWith("this WAV file is 1 min 0.01 s");
    expect(await refusal(wavOf(90), 60)).toEndWith("this WAV file is 1 min 30 s");
  });

  test("a WAV of exactly the cap is accepted", async () => {
    expect(await refusal(wavOf(60), 60)).toBe("");
  });
});
