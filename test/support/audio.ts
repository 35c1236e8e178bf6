// Builds WAV files byte by byte for tests: any channel count, rate and sample encoding.

export interface WavSpec {
  rate: number;
  channels?: number;
  bits?: 8 | 16 | 24 | 32 | 64;
  format?: "pcm" | "float";
  /** WAVE_FORMAT_EXTENSIBLE header instead of the plain one. */
  extensible?: boolean;
  /** Overrides the format code (e.g. 7 for μ-law). */
  code?: number;
}

/** A WAV of `signal` (mono, [-1, 1]) copied to every channel. */
export function makeWav(signal: Float32Array, spec: WavSpec): Uint8Array {
  const channels = spec.channels ?? 1;
  const bits = spec.bits ?? 16;
  const format = spec.format ?? "pcm";
  const bytes = bits / 8;
  const dataSize = signal.length * channels * bytes;
  const fmtSize = spec.extensible ? 40 : 16;
  const out = new Uint8Array(12 + 8 + fmtSize + 8 + dataSize);
  const v = new DataView(out.buffer);
  const str = (at: number, s: string) => [...s].forEach((c, i) => (out[at + i] = c.charCodeAt(0)));
  const code = spec.code ?? (format === "float" ? 3 : 1);
  str(0, "RIFF");
  v.setUint32(4, out.length - 8, true);
  str(8, "WAVE");
  str(12, "fmt ");
  v.setUint32(16, fmtSize, true);
  v.setUint16(20, spec.extensible ? 0xfffe : code, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, spec.rate, true);
  v.setUint32(28, spec.rate * channels * bytes, true);
  v.setUint16(32, channels * bytes, true);
  v.setUint16(34, bits, true);
  if (spec.extensible) {
    v.setUint16(36, 22, true);
    v.setUint16(38, bits, true);
    v.setUint32(40, 0, true);
    v.setUint16(44, code, true); // sub-format GUID starts with the format code
    str(46, "\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71");
  }
  const dataAt = 12 + 8 + fmtSize;
  str(dataAt, "data");
  v.setUint32(dataAt + 4, dataSize, true);
  let at = dataAt + 8;
  for (const x of signal) {
    for (let c = 0; c < channels; c++, at += bytes) {
      if (format === "float") bits === 32 ? v.setFloat32(at, x, true) : v.setFloat64(at, x, true);
      else if (bits === 8) out[at] = Math.round(x * 127) + 128;
      else if (bits === 16) v.setInt16(at, Math.round(x * 32767), true);
      else if (bits === 24) {
        const n = Math.round(x * 8388607);
        out[at] = n & 0xff;
        out[at + 1] = (n >> 8) & 0xff;
        out[at + 2] = (n >> 16) & 0xff;
      } else v.setInt32(at, Math.round(x * 2147483647), true);
    }
  }
  return out;
}

/** `seconds` of a sine at `hz`, amplitude `amp`, sampled at `rate`. */
export const sine = (hz: number, seconds: number, rate: number, amp = 0.5) =>
  Float32Array.from({ length: Math.round(seconds * rate) }, (_, i) => amp * Math.sin((2 * Math.PI * hz * i) / rate));
