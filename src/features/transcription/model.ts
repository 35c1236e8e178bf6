// Schemas of POST /api/audio/transcriptions: the OpenAI transcription request, so OpenAI's SDKs work unchanged.
import { t } from "elysia";
import { SUPPORTED } from "./audio";

export const TranscriptionBody = t.Object(
  {
    file: t.File({ description: `The audio: ${SUPPORTED}; at most 25 MB` }),
    model: t.Optional(t.String({ maxLength: 200, description: "Accepted for OpenAI compatibility; Hearth uses its configured Whisper model" })),
    language: t.Optional(t.String({ maxLength: 32, description: 'ISO 639-1 code such as "en"; detected when left out' })),
    prompt: t.Optional(t.String({ maxLength: 4000, description: "Accepted for compatibility; not used by this Whisper build" })),
    response_format: t.Optional(t.String({ description: "json (default), text, srt, vtt or verbose_json" })),
    // Its own error names it: Elysia forgets the key of a form's number that is out of range (QueryInt).
    temperature: t.Optional(t.Numeric({ minimum: 0, maximum: 1, description: "Accepted for compatibility; decoding is greedy", error: "temperature must be a number from 0 to 1" })),
    "timestamp_granularities[]": t.Optional(t.Union([t.String(), t.Array(t.String())])),
  },
  { additionalProperties: false },
);

/** The JSON answers (formats.ts): `json` has text alone; `verbose_json` all of these. */
export const TranscriptJson = t.Object({
  text: t.String(),
  task: t.Optional(t.Literal("transcribe")),
  language: t.Optional(t.String({ description: "verbose_json: the language's English name" })),
  duration: t.Optional(t.Number({ description: "verbose_json: seconds" })),
  segments: t.Optional(t.Array(t.Object({ start: t.Number(), end: t.Number(), text: t.String() }, { additionalProperties: true }))),
});
