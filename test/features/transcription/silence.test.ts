// The no-speech gate on made-up frames: which windows go to Whisper, which segments stay, and where.
import { describe, expect, test } from "bun:test";
import { hasSpeech, heard, loudFrames } from "../../../src/features/transcription/silence";
import { sine } from "../../support/audio";

/** `seconds` of 16 kHz audio with a 200 Hz tone (amplitude 0.3) from `from` to `to`. */
const toneIn = (seconds: number, from: number, to: number) => {
  const out = new Float32Array(seconds * 16000);
  out.set(sine(200, to - from, 16000, 0.3), from * 16000);
  return out;
};

describe("the no-speech gate", () => {
  test("silence, -60 dBFS and a 10 ms beep are no speech; 0.2 s at -47.5 dBFS is", () => {
    expect(hasSpeech(loudFrames(new Float32Array(16000 * 30)))).toBe(false);
    expect(hasSpeech(loudFrames(sine(200, 10, 16000, 0.0014)))).toBe(false); // RMS 0.001: -60 dBFS
    expect(hasSpeech(loudFrames(toneIn(5, 2, 2.01)))).toBe(false);
    expect(hasSpeech(loudFrames(toneIn(5, 2, 2.2).map((x) => x * 0.02)))).toBe(true); // RMS 0.0042: -47.5 dBFS
  });

  test("a segment with no sound under it is dropped; one with a long silent lead starts at its sound", () => {
    const loud = loudFrames(toneIn(30, 20, 23));
    expect(heard([{ start: 0, end: 19, text: "invented" }, { start: 0, end: 24, text: "late" }, { start: 23, end: 30, text: "after" }], loud)).toEqual([
      { start: 19.8, end: 23.2, text: "late" },
    ]);
  });
});
