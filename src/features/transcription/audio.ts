// Any uploaded audio as 16 kHz mono samples: WAV natively, other formats through ffmpeg when it
// is on the PATH. The type is judged by the bytes, never by the name or the declared type.
import { fileTypeFromBuffer } from "file-type";
import { AppError } from "../../platform/errors";
import { decodeWav, looksLikeWav, TARGET_RATE } from "./wav";

/** Formats ffmpeg decodes for Hearth (by file-type's extension). */
const VIA_FFMPEG = new Map([
  ["mp3", "MP3"],
  ["m4a", "M4A"],
  ["mp4", "MP4 audio"],
  ["aac", "AAC"],
  ["ogg", "Ogg"],
  ["oga", "Ogg"],
  ["opus", "Opus"],
  ["webm", "WebM"],
  ["flac", "FLAC"],
  ["mpga", "MP3"],
]);
const FFMPEG_TIMEOUT_MS = 120_000;

export const SUPPORTED = "WAV (PCM or float); MP3, M4A, Ogg, Opus, WebM and FLAC when ffmpeg is installed";

const ffmpegPath = () => Bun.which("ffmpeg", { PATH: process.env.PATH ?? "" });

export interface Audio {
  samples: Float32Array;
  duration: number;
}

/** Decodes an upload; 400 for broken audio, 415 for what is not audio or needs a missing ffmpeg. */
export async function decodeAudio(bytes: Uint8Array): Promise<Audio> {
  if (bytes.length === 0) throw new AppError(400, "ValidationError", "The file is empty");
  if (looksLikeWav(bytes)) {
    const wav = await decodeWav(bytes);
    return { samples: wav.samples, duration: wav.duration };
  }
  const type = await fileTypeFromBuffer(bytes);
  const name = type ? VIA_FFMPEG.get(type.ext) : undefined;
  if (!name) {
    throw new AppError(415, "UnsupportedMediaType", `${type ? `A ${type.ext.toUpperCase()} file` : "The file"} is not audio Hearth can read; send ${SUPPORTED}`);
  }
  const ffmpeg = ffmpegPath();
  if (!ffmpeg) throw new AppError(415, "UnsupportedMediaType", `${name} needs ffmpeg, which is not installed on this server; send WAV, or install ffmpeg`);
  return viaFfmpeg(ffmpeg, bytes, name);
}

async function viaFfmpeg(ffmpeg: string, bytes: Uint8Array, name: string): Promise<Audio> {
  const proc = Bun.spawn([ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-i", "pipe:0", "-vn", "-f", "f32le", "-ac", "1", "-ar", String(TARGET_RATE), "pipe:1"], {
    stdin: new Blob([bytes]),
    stdout: "pipe",
    stderr: "pipe",
    timeout: FFMPEG_TIMEOUT_MS,
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).arrayBuffer(), new Response(proc.stderr).text(), proc.exited]);
  const usable = out.byteLength - (out.byteLength % 4);
  if (code !== 0 || usable === 0) {
    const reason = err.trim().split("\n").at(-1) || (code === 0 ? "no audio in it" : `ffmpeg exit ${code}`);
    throw new AppError(400, "ValidationError", `The ${name} file could not be decoded: ${reason}`);
  }
  const samples = new Float32Array(out, 0, usable / 4);
  return { samples, duration: samples.length / TARGET_RATE };
}
