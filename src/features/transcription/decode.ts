// The worker side of decoding: an upload prepared by audio.ts as 16 kHz mono blocks, WAV in
// Hearth's own decoder, other formats streamed out of ffmpeg, never the whole recording at once.
import type { AudioSource } from "./audio";
import { openFfmpegStream } from "./ffmpeg";
import { parseWav, wavBlocks } from "./wav";

export function decodeBlocks(bytes: Uint8Array, source: AudioSource): AsyncGenerator<Float32Array> {
  if (source.kind === "wav") return wavBlocks(parseWav(bytes));
  return openFfmpegStream(source.ffmpeg, bytes, source.format, { maxSeconds: source.maxSeconds }).blocks();
}
