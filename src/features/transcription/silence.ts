// The no-speech gate. Given silence, near-silence or a click, Whisper invents text ("Thank you.",
// lines of Welsh-looking words) and times real lines over long silences; so a window with no sound
// in it is not given to Whisper, and each segment keeps only the sound under it: none, and it is
// dropped; a long silent lead or tail, and its times move to where the sound is.
import type { WindowSegment } from "./segments";
import { TARGET_RATE } from "./wav";

const FRAME_S = 0.02;
const FRAME = FRAME_S * TARGET_RATE;
/**
 * A 20 ms frame louder than -50 dBFS (RMS) may hold speech. Speech recorded at any usable level
 * has frames well above it (the fixtures: median -25 dBFS, loudest -11; soft speech at low gain
 * still peaks near -35), while digital silence, dither (-90) and a quiet room's hiss (-60 to
 * -70) stay below. A noisy room above it is let through to Whisper as before: the gate only
 * removes what holds no sound at all.
 */
export const SPEECH_DBFS = -50;
/** Less sound than this is no speech: even "a" or "I" said alone lasts about 0.1 s; a click or a 10 ms beep is shorter. */
export const MIN_SPEECH_S = 0.1;
/** Sound kept either side of a segment's first and last loud frame. */
const PAD_S = 0.2;

const THRESHOLD = FRAME * 10 ** (SPEECH_DBFS / 10);

/** For each 20 ms frame of `samples`, whether it is louder than SPEECH_DBFS. */
export function loudFrames(samples: Float32Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(samples.length / FRAME));
  for (let f = 0; f < out.length; f++) {
    let energy = 0;
    const end = Math.min((f + 1) * FRAME, samples.length);
    for (let i = f * FRAME; i < end; i++) energy += samples[i]! * samples[i]!;
    out[f] = energy > THRESHOLD ? 1 : 0;
  }
  return out;
}

/** Whether the frames hold enough sound to be worth Whisper's time. */
export function hasSpeech(loud: Uint8Array): boolean {
  let n = 0;
  for (const x of loud) n += x;
  return n * FRAME_S >= MIN_SPEECH_S;
}

/**
 * The segments of a window (seconds from its start) that have sound under them, each starting at
 * most PAD_S before its first loud frame and ending at most PAD_S after its last.
 */
export function heard(segments: readonly WindowSegment[], loud: Uint8Array): WindowSegment[] {
  const length = loud.length * FRAME_S;
  const out: WindowSegment[] = [];
  for (const s of segments) {
    const a = Math.max(0, Math.floor(s.start / FRAME_S));
    const b = Math.min(loud.length, Math.ceil(s.end / FRAME_S));
    let first = -1;
    let last = -1;
    let n = 0;
    for (let f = a; f < b; f++) {
      if (!loud[f]) continue;
      if (first < 0) first = f;
      last = f;
      n++;
    }
    if (n * FRAME_S < MIN_SPEECH_S) continue;
    const start = Math.max(s.start, first * FRAME_S - PAD_S);
    const end = Math.min(s.end, (last + 1) * FRAME_S + PAD_S, length);
    out.push({ start, end, text: s.text });
  }
  return out;
}
