// ffmpeg as a decoder Hearth can trust with an upload: the demuxer pinned to the type judged from
// the bytes and no protocol but the pipe (an upload is never read as a playlist that fetches
// URLs), and its output capped in duration (the process is killed past the cap, then 413).
import { invalid, tooLarge } from "../../platform/errors";
import { TARGET_RATE } from "./wav";

/** ffmpeg demuxers by file-type's extension, with the name a person knows the format by. */
export const FFMPEG_FORMATS = new Map([
  ["mp3", { demuxer: "mp3", name: "MP3" }],
  ["mpga", { demuxer: "mp3", name: "MP3" }],
  ["m4a", { demuxer: "mov", name: "M4A" }],
  ["mp4", { demuxer: "mov", name: "MP4 audio" }],
  ["aac", { demuxer: "aac", name: "AAC" }],
  ["ogg", { demuxer: "ogg", name: "Ogg" }],
  ["oga", { demuxer: "ogg", name: "Ogg" }],
  ["opus", { demuxer: "ogg", name: "Opus" }],
  ["webm", { demuxer: "matroska", name: "WebM" }],
  ["flac", { demuxer: "flac", name: "FLAC" }],
]);

/** The measuring pass reads the whole upload; it is bounded by the duration cap, so this only stops a stuck decoder. */
const MEASURE_TIMEOUT_MS = 120_000;

/** The command line after the ffmpeg path: pinned input, 16 kHz mono `sample` ("f32le" or "s16le") on stdout. */
export function ffmpegArgs(demuxer: string, sample: "f32le" | "s16le" = "f32le"): string[] {
  return ["-hide_banner", "-loglevel", "error", "-nostdin", "-protocol_whitelist", "pipe", "-f", demuxer, "-i", "pipe:0", "-vn", "-f", sample, "-ac", "1", "-ar", String(TARGET_RATE), "pipe:1"];
}

export interface FfmpegLimits {
  maxSeconds: number;
}

/** "2 hours", "90 minutes", "1 minute": the cap as the error message names it. */
export function describeLimit(seconds: number): string {
  const minutes = Math.round(seconds / 60);
  if (minutes % 60 === 0) return minutes === 60 ? "1 hour" : `${minutes / 60} hours`;
  return minutes === 1 ? "1 minute" : `${minutes} minutes`;
}

export const overCap = (maxSeconds: number, what: string) =>
  tooLarge(`Audio may be at most ${describeLimit(maxSeconds)} long once decoded (HEARTH_AUDIO_MAX_MINUTES); ${what}`);

const failed = (name: string, stderr: string, code: number | null) =>
  invalid(`The ${name} file could not be decoded: ${stderr.trim().split("\n").at(-1) || (code === 0 ? "no audio in it" : `ffmpeg exit ${code}`)}`);

/** One upload decoded by ffmpeg: `measure` counts its decoded seconds (a cheap first pass), `blocks` streams the samples. */
export function openFfmpegStream(ffmpeg: string, bytes: Uint8Array, format: string, limits: FfmpegLimits) {
  const known = FFMPEG_FORMATS.get(format);
  const demuxer = known?.demuxer ?? format;
  const name = known?.name ?? format.toUpperCase();
  const cap = limits.maxSeconds * TARGET_RATE; // samples
  const spawn = (sample: "f32le" | "s16le", timeout?: number) =>
    Bun.spawn([ffmpeg, ...ffmpegArgs(demuxer, sample)], { stdin: new Blob([bytes]), stdout: "pipe", stderr: "pipe", ...(timeout ? { timeout, killSignal: "SIGKILL" } : {}) });

  return {
    /** Decoded seconds; 413 as soon as the output passes the cap (ffmpeg killed), 400 when it cannot be decoded. */
    async measure(): Promise<number> {
      const proc = spawn("s16le", MEASURE_TIMEOUT_MS);
      const stderr = new Response(proc.stderr).text();
      let bytesOut = 0;
      for await (const chunk of proc.stdout) {
        bytesOut += chunk.length;
        if (bytesOut / 2 > cap) {
          proc.kill("SIGKILL"); // ffmpeg finishes its current write on SIGTERM, which a full pipe never lets it do
          throw overCap(limits.maxSeconds, `this ${name} file decodes to more`);
        }
      }
      const code = await proc.exited;
      if (code !== 0 || bytesOut < 2) throw failed(name, await stderr, code);
      return bytesOut / 2 / TARGET_RATE;
    },

    /** 16 kHz mono blocks as ffmpeg writes them; ffmpeg waits on the pipe between reads, and is killed when the caller stops. */
    async *blocks(): AsyncGenerator<Float32Array> {
      const proc = spawn("f32le");
      const stderr = new Response(proc.stderr).text();
      let samples = 0;
      let carry = new Uint8Array(0);
      try {
        for await (const chunk of proc.stdout) {
          const all = carry.length ? new Uint8Array([...carry, ...chunk]) : chunk;
          const whole = all.length - (all.length % 4);
          const block = new Float32Array(all.slice(0, whole).buffer); // a copy, aligned for the floats
          carry = all.slice(whole);
          samples += block.length;
          if (samples > cap) throw overCap(limits.maxSeconds, `this ${name} file decodes to more`);
          if (block.length) yield block;
        }
        const code = await proc.exited;
        if (code !== 0) throw failed(name, await stderr, code);
      } finally {
        if (proc.exitCode === null) proc.kill("SIGKILL");
      }
    },
  };
}
