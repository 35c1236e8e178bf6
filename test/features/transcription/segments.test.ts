// Placing a window's segments in the recording: what Whisper returned for real windows, made into
// cues that start in order, end after they start and stay inside the audio.
import { describe, expect, test } from "bun:test";
import { placeSegments } from "../../../src/features/transcription/segments";

describe("placing a window's segments", () => {
  test("a line Whisper timed after the window's audio ended is dropped, not turned into a cue ending before it starts", () => {
    // whisper-tiny's answer for the window [52.6 s, 79.375 s) of the espeak recording in transcription.test.ts.
    const placed = placeSegments(
      [
        { start: 24, end: 26, text: "I have a lot of work to do with this." },
        { start: 26, end: 28, text: "I have a lot of work to do with this." },
        { start: 28, end: 30, text: "Thank you." },
      ],
      52.6,
      79.375,
    );
    expect(placed).toEqual([
      { start: 76.6, end: 78.6, text: "I have a lot of work to do with this." },
      { start: 78.6, end: 79.38, text: "I have a lot of work to do with this." },
    ]);
  });

  test("starts never go back before the window or the previous segment; ends never precede starts", () => {
    const placed = placeSegments(
      [
        { start: -1, end: 2, text: "before the window" },
        { start: 1, end: 0.5, text: "ends before it starts" },
        { start: 0.1, end: 3, text: "starts before the one above" },
      ],
      10,
      20,
      10.2,
    );
    expect(placed).toEqual([
      { start: 10.2, end: 12, text: "before the window" },
      { start: 10.2, end: 13, text: "starts before the one above" },
    ]);
    for (const [i, s] of placed.entries()) {
      expect(s.end).toBeGreaterThan(s.start);
      expect(s.start).toBeGreaterThanOrEqual(i ? placed[i - 1]!.start : 10);
      expect(s.end).toBeLessThanOrEqual(20);
    }
  });

  test("empty text is dropped", () => {
    expect(placeSegments([{ start: 0, end: 1, text: "  " }], 0, 5)).toEqual([]);
  });
});
