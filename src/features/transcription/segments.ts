// Whisper's segments of one window placed in the whole recording: each inside the audio its
// window holds, starting no earlier than the one before it, never ending before it starts.

export interface WindowSegment {
  /** Seconds from the start of the window, as Whisper timed them. */
  start: number;
  end: number;
  text: string;
}

/**
 * The segments of the window [`from`, `to`) (seconds in the recording) in recording time,
 * rounded to 10 ms. Whisper times its text on a 30 s grid whatever the window holds, and at the
 * end of a shorter window it often adds a line ("Thank you.") timed after the audio has ended:
 * such a segment starts at or past `to`, has no audio under it and is dropped, as is any that
 * clamping leaves without duration. `after` is the start of the recording's previous segment.
 */
export function placeSegments(segments: readonly WindowSegment[], from: number, to: number, after = 0): WindowSegment[] {
  const out: WindowSegment[] = [];
  let floor = Math.max(round(from), round(after));
  const last = round(to);
  for (const s of segments) {
    const start = Math.min(Math.max(round(from + s.start), floor), last);
    const end = Math.min(Math.max(round(from + s.end), start), last);
    if (end <= start || s.text.trim() === "") continue;
    out.push({ start, end, text: s.text });
    floor = start;
  }
  return out;
}

export const round = (x: number) => Math.round(x * 100) / 100;
