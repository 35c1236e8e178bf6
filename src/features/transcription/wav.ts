// WAV decoding for transcription: RIFF/WAVE with PCM (8, 16, 24, 32 bit) or IEEE float (32, 64
// bit) samples, plain or WAVE_FORMAT_EXTENSIBLE, any channel count, 1-192 kHz, mixed down to mono
// and resampled to the 16 kHz Whisper expects (libsamplerate, compiled to WASM) a block at a time,
// so hours of audio never sit in memory as floats. Anything else is refused with the reason: 415
// for encodings and rates it does not read, 400 for broken files.
import { invalid, unsupportedMedia } from "../../platform/errors";

export const TARGET_RATE = 16_000;

export interface WavInfo {
  format: "pcm" | "float";
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  /** The sample bytes (interleaved frames), a view into the input. */
  data: Uint8Array;
}

export interface DecodedAudio {
  /** Mono samples at 16 kHz in [-1, 1]. */
  samples: Float32Array;
  /** Seconds of audio. */
  duration: number;
  source: { channels: number; sampleRate: number; bitsPerSample: number; format: "pcm" | "float" };
}

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_IEEE_FLOAT = 3;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
/** libsamplerate-js refuses input rates above 192 kHz; below 1 kHz is not speech. */
const MIN_RATE = 1000;
const MAX_RATE = 192_000;
/** Source audio mixed and resampled per call: small enough to bound memory, large enough to keep calls few. */
const BLOCK_SECONDS = 10;
/** Writers that stream set the data size to 0 or 0xFFFFFFFF: the data runs to the end of the file. */
const STREAMED_SIZES = new Set([0, 0xffffffff]);

const ascii = (b: Uint8Array, at: number) => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

/** True when the bytes start like a RIFF/WAVE file (the type is judged by content, not by name). */
export const looksLikeWav = (b: Uint8Array) => b.length >= 12 && (ascii(b, 0) === "RIFF" || ascii(b, 0) === "RF64") && ascii(b, 8) === "WAVE";

/** Reads the format and finds the sample data; throws 400/415 AppErrors a person can act on. */
export function parseWav(bytes: Uint8Array): WavInfo {
  if (!looksLikeWav(bytes)) throw invalid("The file is not a WAV file (no RIFF/WAVE header)");
  if (ascii(bytes, 0) === "RF64") throw unsupportedMedia("RF64 (WAV over 4 GB) is not supported; convert it to a plain WAV");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let fmt: Omit<WavInfo, "data"> | undefined;
  let data: Uint8Array | undefined;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = ascii(bytes, at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === "fmt ") {
      if (size < 16 || body + size > bytes.length) throw invalid("The WAV format chunk is cut short");
      fmt = readFormat(view, body, size);
    } else if (id === "data") {
      if (!fmt) throw invalid("The WAV file has its sample data before its format chunk");
      const available = bytes.length - body;
      if (!STREAMED_SIZES.has(size) && size > available) {
        throw invalid(`The WAV file is truncated: its data chunk declares ${size} bytes, ${available} are there`);
      }
      data = bytes.subarray(body, body + (STREAMED_SIZES.has(size) ? available : size));
      break;
    }
    at = body + size + (size % 2); // chunks are padded to an even length
  }
  if (!fmt) throw invalid("The WAV file has no format chunk");
  if (!data) throw invalid("The WAV file has no data chunk");
  const frame = fmt.channels * (fmt.bitsPerSample / 8);
  const usable = data.length - (data.length % frame);
  if (usable === 0) throw invalid("The WAV file holds no samples");
  return { ...fmt, data: data.subarray(0, usable) };
}

function readFormat(view: DataView, at: number, size: number): Omit<WavInfo, "data"> {
  let code = view.getUint16(at, true);
  const channels = view.getUint16(at + 2, true);
  const sampleRate = view.getUint32(at + 4, true);
  const bitsPerSample = view.getUint16(at + 14, true);
  if (code === WAVE_FORMAT_EXTENSIBLE) {
    if (size < 40) throw invalid("The WAV extensible format chunk is cut short");
    code = view.getUint16(at + 24, true); // the first two bytes of the sub-format GUID
  }
  const format = code === WAVE_FORMAT_PCM ? "pcm" : code === WAVE_FORMAT_IEEE_FLOAT ? "float" : null;
  if (!format) throw unsupportedMedia(`WAV encoding ${code} (compressed, e.g. μ-law or ADPCM) is not supported; use PCM or float WAV, or install ffmpeg for other formats`);
  const bitsOk = format === "pcm" ? [8, 16, 24, 32].includes(bitsPerSample) : [32, 64].includes(bitsPerSample);
  if (!bitsOk) throw unsupportedMedia(`${bitsPerSample}-bit ${format === "pcm" ? "PCM" : "float"} WAV is not supported (PCM 8/16/24/32-bit, float 32/64-bit are)`);
  if (channels < 1 || channels > 32) throw invalid(`The WAV file declares ${channels} channels`);
  if (sampleRate < MIN_RATE || sampleRate > MAX_RATE) throw unsupportedMedia(`A sample rate of ${sampleRate} Hz is not supported; WAV from 1,000 to 192,000 Hz is`);
  return { format, channels, sampleRate, bitsPerSample };
}

/** Frames of sample data in a parsed WAV. */
export const frameCount = (wav: WavInfo) => wav.data.length / ((wav.bitsPerSample / 8) * wav.channels);

/** Seconds of audio in a parsed WAV, from its header alone. */
export const wavDuration = (wav: WavInfo) => frameCount(wav) / wav.sampleRate;

/** One float per frame (frames `from` to `to`): the mean of the frame's channels, scaled to [-1, 1]. */
export function mixToMono(wav: WavInfo, from = 0, to = frameCount(wav)): Float32Array {
  const { data, channels, bitsPerSample, format } = wav;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const bytes = bitsPerSample / 8;
  const frames = to - from;
  const out = new Float32Array(frames);
  const read: (at: number) => number =
    format === "float"
      ? bitsPerSample === 32
        ? (at) => view.getFloat32(at, true)
        : (at) => view.getFloat64(at, true)
      : bitsPerSample === 8
        ? (at) => (data[at]! - 128) / 128 // 8-bit WAV is unsigned
        : bitsPerSample === 16
          ? (at) => view.getInt16(at, true) / 32768
          : bitsPerSample === 24
            ? (at) => ((data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16)) << 8 >> 8) / 8388608
            : (at) => view.getInt32(at, true) / 2147483648;
  for (let f = 0, at = from * bytes * channels; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < channels; c++, at += bytes) sum += read(at);
    const v = sum / channels;
    out[f] = v > 1 ? 1 : v < -1 ? -1 : Number.isFinite(v) ? v : 0;
  }
  return out;
}

/**
 * The WAV as 16 kHz mono blocks (about 10 s of source audio each), mixed and resampled one block
 * at a time through one stateful libsamplerate converter (its fastest sinc: band-limited).
 */
export async function* wavBlocks(wav: WavInfo): AsyncGenerator<Float32Array> {
  const total = frameCount(wav);
  const step = BLOCK_SECONDS * wav.sampleRate;
  if (wav.sampleRate === TARGET_RATE) {
    for (let at = 0; at < total; at += step) yield mixToMono(wav, at, Math.min(at + step, total));
    return;
  }
  // The resampler (WebAssembly) is loaded by the first WAV that needs one.
  const { create, ConverterType } = await import("@alexanderolsen/libsamplerate-js");
  const src = await create(1, wav.sampleRate, TARGET_RATE, { converterType: ConverterType.SRC_SINC_FASTEST });
  try {
    for (let at = 0; at < total; at += step) yield src.full(mixToMono(wav, at, Math.min(at + step, total)));
  } finally {
    src.destroy();
  }
}

/** A WAV file as 16 kHz mono floats, with what it was (short audio: tests and benchmarks; uploads stream through wavBlocks). */
export async function decodeWav(bytes: Uint8Array): Promise<DecodedAudio> {
  const wav = parseWav(bytes);
  const blocks: Float32Array[] = [];
  for await (const block of wavBlocks(wav)) blocks.push(block);
  const samples = concat(blocks);
  return {
    samples,
    duration: samples.length / TARGET_RATE,
    source: { channels: wav.channels, sampleRate: wav.sampleRate, bitsPerSample: wav.bitsPerSample, format: wav.format },
  };
}

/** The arrays end to end in one. */
export function concat(parts: Float32Array[]): Float32Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
