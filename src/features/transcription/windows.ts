// Long audio cut into Whisper's 30 s windows at quiet moments, so no word is cut in two: over a
// whole buffer, or over a stream of blocks holding only the window being cut.
import { concat, TARGET_RATE } from "./wav";

/** Whisper's window. */
export const WINDOW_S = 30;
/** A window ends at the quietest moment of its last few seconds. */
const SEARCH_S = 5;
const FRAME_S = 0.05;

/** Where a window starting at `start` ends: the middle of the quietest 50 ms frame in its last 5 s. */
function cutPoint(samples: Float32Array, start: number, rate: number): number {
  const max = WINDOW_S * rate;
  const frame = Math.round(FRAME_S * rate);
  let best = start + max;
  let quietest = Infinity;
  for (let f = start + max - SEARCH_S * rate; f + frame <= start + max; f += frame) {
    let energy = 0;
    for (let i = f; i < f + frame; i++) energy += samples[i]! * samples[i]!;
    if (energy < quietest) {
      quietest = energy;
      best = f + Math.floor(frame / 2);
    }
  }
  return best;
}

/**
 * Window boundaries (sample offsets) for `samples`: each window at most 30 s, ending at the
 * quietest 50 ms frame within its last 5 s (or at 30 s when the audio is over by then).
 */
export function windows(samples: Float32Array, rate = TARGET_RATE): [number, number][] {
  const out: [number, number][] = [];
  for (let start = 0; start < samples.length; ) {
    if (samples.length - start <= WINDOW_S * rate) {
      out.push([start, samples.length]);
      break;
    }
    const end = cutPoint(samples, start, rate);
    out.push([start, end]);
    start = end;
  }
  return out;
}

export interface Window {
  /** Sample offset of the window in the whole recording. */
  from: number;
  samples: Float32Array;
}

/** The same windows as `windows`, from a stream of 16 kHz blocks, reading only as far as the next cut needs. */
export async function* windowStream(blocks: AsyncIterable<Float32Array>, rate = TARGET_RATE): AsyncGenerator<Window> {
  const max = WINDOW_S * rate;
  let pending: Float32Array = new Float32Array(0);
  let from = 0;
  const source = blocks[Symbol.asyncIterator]();
  let done = false;
  try {
    yield* cut();
  } finally {
    await source.return?.(); // frees the decoder (libsamplerate state, an ffmpeg process) when the caller stops early
  }

  async function* cut(): AsyncGenerator<Window> {
    for (;;) {
      const parts: Float32Array[] = [pending];
      let length = pending.length;
      while (!done && length <= max) {
        const next = await source.next();
        if (next.done) done = true;
        else {
          parts.push(next.value);
          length += next.value.length;
        }
      }
      pending = concat(parts);
      if (pending.length <= max) {
        if (pending.length > 0) yield { from, samples: pending };
        return;
      }
      const end = cutPoint(pending, 0, rate);
      yield { from, samples: pending.slice(0, end) };
      pending = pending.slice(end);
      from += end;
    }
  }
}
