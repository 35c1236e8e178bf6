// WAV decoding: every PCM and float encoding, channels mixed down, any rate resampled to 16 kHz
// without changing pitch or level, and broken or unsupported files refused with 400/415.
import { describe, expect, test } from "bun:test";
import { create, ConverterType } from "@alexanderolsen/libsamplerate-js";
import { decodeWav, mixToMono, parseWav, TARGET_RATE, wavBlocks } from "../../../src/features/transcription/wav";
import { AppError } from "../../../src/platform/errors";
import { makeWav, sine } from "../../support/audio";

/** Zero crossings per second / 2: the frequency of a clean sine. */
const frequency = (x: Float32Array, rate: number) => {
  let crossings = 0;
  for (let i = 1; i < x.length; i++) if ((x[i - 1]! < 0) !== (x[i]! < 0)) crossings++;
  return crossings / 2 / (x.length / rate);
};
const peak = (x: Float32Array) => x.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

const refused = (f: () => unknown, status: number, says: string) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).status).toBe(status);
    expect((e as AppError).message).toContain(says);
    return;
  }
  throw new Error("expected a refusal");
};

describe("WAV decoding", () => {
  const encodings = [
    { bits: 8, format: "pcm", tolerance: 1 / 64 },
    { bits: 16, format: "pcm", tolerance: 1e-4 },
    { bits: 24, format: "pcm", tolerance: 1e-6 },
    { bits: 32, format: "pcm", tolerance: 1e-8 },
    { bits: 32, format: "float", tolerance: 1e-7 },
    { bits: 64, format: "float", tolerance: 1e-7 },
  ] as const;
  for (const e of encodings) {
    test(`${e.bits}-bit ${e.format} keeps the samples`, () => {
      const signal = sine(440, 0.1, 16000, 0.8);
      const wav = parseWav(makeWav(signal, { rate: 16000, bits: e.bits, format: e.format }));
      expect(wav).toMatchObject({ format: e.format, channels: 1, sampleRate: 16000, bitsPerSample: e.bits });
      const mono = mixToMono(wav);
      expect(mono.length).toBe(signal.length);
      for (let i = 0; i < signal.length; i += 97) expect(Math.abs(mono[i]! - signal[i]!)).toBeLessThanOrEqual(e.tolerance);
    });
  }

  test("WAVE_FORMAT_EXTENSIBLE headers are read through their sub-format", () => {
    const wav = parseWav(makeWav(sine(440, 0.05, 48000), { rate: 48000, bits: 24, channels: 2, extensible: true }));
    expect(wav).toMatchObject({ format: "pcm", channels: 2, bitsPerSample: 24, sampleRate: 48000 });
  });

  test("stereo 44.1 kHz becomes 16 kHz mono with the same pitch, level and length", async () => {
    const audio = await decodeWav(makeWav(sine(1000, 2, 44100, 0.5), { rate: 44100, channels: 2 }));
    expect(audio.source).toEqual({ channels: 2, sampleRate: 44100, bitsPerSample: 16, format: "pcm" });
    expect(audio.duration).toBeCloseTo(2, 2);
    expect(Math.abs(audio.samples.length - 2 * TARGET_RATE)).toBeLessThan(32);
    expect(frequency(audio.samples, TARGET_RATE)).toBeCloseTo(1000, -1);
    expect(peak(audio.samples.subarray(1000, -1000))).toBeCloseTo(0.5, 1);
  });

  test("8-bit 8 kHz is upsampled; 16 kHz mono passes through untouched", async () => {
    const low = await decodeWav(makeWav(sine(300, 1, 8000), { rate: 8000, bits: 8 }));
    expect(Math.abs(low.samples.length - TARGET_RATE)).toBeLessThan(64); // libsamplerate trims its filter delay
    expect(frequency(low.samples, TARGET_RATE)).toBeCloseTo(300, -1);
    const same = sine(500, 0.5, 16000);
    const direct = await decodeWav(makeWav(same, { rate: 16000, format: "float", bits: 32 }));
    expect(direct.samples).toEqual(same);
  });

  test("decoded in 10 s blocks, a long WAV is the same as resampled in one piece: no seam at the block edges", async () => {
    const wav = parseWav(makeWav(sine(440, 25, 44100, 0.5), { rate: 44100, channels: 2 }));
    const blocks: Float32Array[] = [];
    for await (const b of wavBlocks(wav)) blocks.push(b);
    expect(blocks.length).toBe(3);
    const streamed = (await decodeWav(makeWav(sine(440, 25, 44100, 0.5), { rate: 44100, channels: 2 }))).samples;
    const src = await create(1, 44100, TARGET_RATE, { converterType: ConverterType.SRC_SINC_FASTEST });
    const whole = src.full(mixToMono(wav));
    src.destroy();
    expect(streamed.length).toBe(whole.length);
    let worst = 0;
    for (let i = 0; i < whole.length; i++) worst = Math.max(worst, Math.abs(streamed[i]! - whole[i]!));
    expect(worst).toBeLessThan(1e-5);
  }, 30_000);

  test("a tone above the new Nyquist frequency is filtered out, not folded back", async () => {
    const audio = await decodeWav(makeWav(sine(11000, 1, 44100, 0.5), { rate: 44100 }));
    expect(peak(audio.samples.subarray(2000, -2000))).toBeLessThan(0.05);
  });

  test("broken files are 400, other encodings 415, each with a reason", () => {
    const good = makeWav(sine(440, 0.1, 16000), { rate: 16000 });
    refused(() => parseWav(new TextEncoder().encode("ID3 this is an mp3, honestly")), 400, "not a WAV file");
    refused(() => parseWav(good.subarray(0, good.length - 1000)), 400, "truncated");
    refused(() => parseWav(good.subarray(0, 30)), 400, "format chunk is cut short");
    refused(() => parseWav(makeWav(new Float32Array(0), { rate: 16000 })), 400, "no samples");
    refused(() => parseWav(makeWav(sine(440, 0.1, 8000), { rate: 8000, bits: 8, code: 7 })), 415, "μ-law");
    refused(() => parseWav(makeWav(sine(440, 0.1, 8000), { rate: 8000, bits: 16, code: 3 })), 415, "16-bit float");
    const noData = good.slice(0, 36);
    new DataView(noData.buffer).setUint32(4, 28, true);
    refused(() => parseWav(noData), 400, "no data chunk");
  });

  test("a streamed WAV (data size 0xFFFFFFFF) reads to the end of the file", () => {
    const bytes = makeWav(sine(440, 0.1, 16000), { rate: 16000 });
    new DataView(bytes.buffer).setUint32(40, 0xffffffff, true);
    expect(mixToMono(parseWav(bytes)).length).toBe(1600);
  });
});
