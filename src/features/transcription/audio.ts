// What an upload is, checked on the HTTP thread before any decoding: WAV by its header (format,
// rate, and duration against the cap), other formats by their bytes and then measured by ffmpeg
// in a child process. The decoding itself happens in the transcription worker (decode.ts).
import { invalid, unsupportedMedia } from "../../platform/errors";
import { FFMPEG_FORMATS, openFfmpegStream, overCap } from "./ffmpeg";
import { looksLikeWav, parseWav, wavDuration } from "./wav";

export const SUPPORTED = "WAV (PCM or float, 1-192 kHz); MP3, M4A, Ogg, Opus, WebM and FLAC when ffmpeg is installed";

const ffmpegPath = () => Bun.which("ffmpeg", { PATH: process.env.PATH ?? "" });

/** How the worker decodes an upload; plain data, so it crosses to the worker as it is. */
export type AudioSource = { kind: "wav" } | { kind: "ffmpeg"; ffmpeg: string; format: string; maxSeconds: number };

export interface PreparedAudio {
  bytes: Uint8Array;
  source: AudioSource;
  /** Seconds of audio (from the WAV header, or as ffmpeg decoded it). */
  duration: number;
}

/** Checks an upload; 400 for broken audio, 413 past the duration cap, 415 for what is not audio or needs a missing ffmpeg. */
export async function prepareAudio(bytes: Uint8Array, maxSeconds: number): Promise<PreparedAudio> {
  if (bytes.length === 0) throw invalid("The file is empty");
  if (looksLikeWav(bytes)) {
    const duration = wavDuration(parseWav(bytes));
    if (duration > maxSeconds) throw overCap(maxSeconds, `this WAV file is ${hours(duration)}`);
    return { bytes, source: { kind: "wav" }, duration };
  }
  // Loaded at the first upload that is not WAV: the library is large and an idle Hearth needs none of it.
  const { fileTypeFromBuffer } = await import("file-type");
  const type = await fileTypeFromBuffer(bytes);
  const known = type ? FFMPEG_FORMATS.get(type.ext) : undefined;
  if (!type || !known) {
    throw unsupportedMedia(`${type ? `A ${type.ext.toUpperCase()} file` : "The file"} is not audio Hearth can read; send ${SUPPORTED}`);
  }
  const ffmpeg = ffmpegPath();
  if (!ffmpeg) throw unsupportedMedia(`${known.name} needs ffmpeg, which is not installed on this server; send WAV, or install ffmpeg`);
  // A first pass in ffmpeg's own process (only its output is counted here): the cap is known before the queue.
  const duration = await openFfmpegStream(ffmpeg, bytes, type.ext, { maxSeconds }).measure();
  return { bytes, source: { kind: "ffmpeg", ffmpeg, format: type.ext, maxSeconds }, duration };
}

/**
 * "1 min 0.01 s", "7 h 16 min 0 s", "2 h 0 min 5.5 s": to the hundredth of a second, rounded up, so
 * a file refused for being over the cap never reads as within it (60.01 s is not "1 min").
 */
function hours(seconds: number): string {
  const cs = Math.ceil(Math.round(seconds * 1e6) / 1e4); // whole hundredths, without float noise (60.01 * 100 = 6000.999...)
  const h = Math.floor(cs / 360_000);
  const min = Math.floor(cs / 6000) % 60;
  const s = `${(cs % 6000) / 100} s`;
  return h ? `${h} h ${min} min ${s}` : `${min} min ${s}`;
}
