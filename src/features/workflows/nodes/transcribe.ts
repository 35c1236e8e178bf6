// The transcribe node: audio from a knowledge file or a URL, through the workspace's transcriber.
import { t } from "elysia";
import type { KnowledgeService } from "../../knowledge/service";
import { safeFetch, type AllowList } from "../../../platform/net/safe-fetch";
import { workspacePrincipal } from "./principal";
import type { NodeType } from "./node-type";

/** Spec §8: audio of at most 25 MB. */
const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

export interface TranscribeBytes {
  (bytes: Uint8Array, language: string | null, signal: AbortSignal): Promise<{ text: string; language: string; duration: number; segments: { start: number; end: number; text: string }[] }>;
}

export function transcribeNode(deps: { transcribe: TranscribeBytes; knowledge: KnowledgeService; allow: AllowList }): NodeType<{ file_id?: string; url?: string; language?: string }> {
  return {
    type: "transcribe",
    description: "Transcribes audio (a stored file's id, or a URL) with the local Whisper model; output {text, language, duration, segments}.",
    config: t.Object(
      {
        file_id: t.Optional(t.String({ format: "uuid" })),
        url: t.Optional(t.String({ minLength: 1, maxLength: 8192 })),
        language: t.Optional(t.String({ minLength: 2, maxLength: 8, description: "ISO 639-1; detected when left out" })),
      },
      { additionalProperties: false },
    ),
    check: (c) => ((c.file_id === undefined) === (c.url === undefined) ? "set file_id or url (one of them)" : undefined),
    async run(c, ctx) {
      let bytes: Uint8Array;
      if (c.file_id) bytes = await deps.knowledge.bytes(workspacePrincipal(ctx), c.file_id);
      else {
        // Audio is binary: fetched through the same address rule, read as bytes.
        const res = await safeFetch(c.url!, { signal: ctx.signal, allow: deps.allow, maxBytes: MAX_AUDIO_BYTES });
        if (res.status >= 400) throw new Error(`GET ${c.url} answered ${res.status}`);
        bytes = res.bytes;
      }
      if (bytes.byteLength > MAX_AUDIO_BYTES) throw new Error("audio may be at most 25 MB");
      const result = await deps.transcribe(bytes, c.language?.toLowerCase() ?? null, ctx.signal);
      return { output: { text: result.text, language: result.language, duration: result.duration, segments: result.segments.map((s) => ({ start: s.start, end: s.end, text: s.text })) } };
    },
  };
}
