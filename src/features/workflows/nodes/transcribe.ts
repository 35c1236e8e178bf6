// The transcribe node: audio from a URL, through the workspace's transcriber. (Knowledge bases hold
// documents only, so a stored file cannot be audio; a recording on a laptop goes through
// POST /api/audio/transcriptions, whose text a workflow takes as input.)
import { t } from "elysia";
import { safeFetch, type AllowList } from "../../../platform/net/safe-fetch";
import type { NodeType } from "./node-type";

/** Spec §8: audio of at most 25 MB. */
const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

export interface TranscribeBytes {
  (bytes: Uint8Array, language: string | null, signal: AbortSignal): Promise<{ text: string; language: string; duration: number; segments: { start: number; end: number; text: string }[] }>;
}

export function transcribeNode(deps: { transcribe: TranscribeBytes; allow: AllowList }): NodeType<{ url: string; language?: string }> {
  return {
    type: "transcribe",
    description: "Transcribes audio at an http(s) URL (at most 25 MB) with the local Whisper model; output {text, language, duration, segments}.",
    config: t.Object(
      {
        url: t.String({ minLength: 1, maxLength: 8192 }),
        language: t.Optional(t.String({ minLength: 2, maxLength: 8, description: "ISO 639-1; detected when left out" })),
      },
      { additionalProperties: false },
    ),
    async run(c, ctx) {
      // Audio is binary: fetched through the same address rule, read as bytes.
      const res = await safeFetch(c.url, { signal: ctx.signal, allow: deps.allow, maxBytes: MAX_AUDIO_BYTES });
      if (res.status >= 400) throw new Error(`GET ${c.url} answered ${res.status}`);
      const bytes = res.bytes;
      if (bytes.byteLength > MAX_AUDIO_BYTES) throw new Error("audio may be at most 25 MB");
      const result = await deps.transcribe(bytes, c.language?.toLowerCase() ?? null, ctx.signal);
      return { output: { text: result.text, language: result.language, duration: result.duration, segments: result.segments.map((s) => ({ start: s.start, end: s.end, text: s.text })) } };
    },
  };
}
