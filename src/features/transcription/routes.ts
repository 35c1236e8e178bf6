// POST /api/audio/transcriptions: the OpenAI transcription endpoint's request and responses, so
// OpenAI's own SDKs work against Hearth unchanged.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { invalid, tooLarge } from "../../platform/errors";
import { blobBytes } from "../../platform/http/multipart";
import { errors } from "../../platform/http/schemas";
import { prepareAudio, SUPPORTED } from "./audio";
import { render, RESPONSE_FORMATS, type ResponseFormat } from "./formats";
import type { Transcriber } from "./transcriber";

/** Spec §8: audio files of at most 25 MB. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

const TranscriptionBody = t.Object(
  {
    file: t.File({ description: `The audio: ${SUPPORTED}; at most 25 MB` }),
    model: t.Optional(t.String({ maxLength: 200, description: "Accepted for OpenAI compatibility; Hearth uses its configured Whisper model" })),
    language: t.Optional(t.String({ maxLength: 32, description: 'ISO 639-1 code such as "en"; detected when left out' })),
    prompt: t.Optional(t.String({ maxLength: 4000, description: "Accepted for compatibility; not used by this Whisper build" })),
    response_format: t.Optional(t.String({ description: "json (default), text, srt, vtt or verbose_json" })),
    temperature: t.Optional(t.Numeric({ minimum: 0, maximum: 1, description: "Accepted for compatibility; decoding is greedy" })),
    "timestamp_granularities[]": t.Optional(t.Union([t.String(), t.Array(t.String())])),
  },
  { additionalProperties: false },
);

export function transcriptionRoutes({ auth, transcriber }: { auth: AuthPlugin; transcriber: Transcriber }) {
  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["Audio"] } })
    .post(
      "/api/audio/transcriptions",
      async ({ body, request, set }) => {
        const format = (body.response_format ?? "json") as ResponseFormat;
        if (!RESPONSE_FORMATS.includes(format)) throw invalid(`response_format must be one of ${RESPONSE_FORMATS.join(", ")}`);
        const granularities = [body["timestamp_granularities[]"] ?? []].flat();
        if (granularities.some((g) => g !== "segment")) throw invalid('timestamp_granularities: only "segment" is supported');
        if (body.file.size > MAX_AUDIO_BYTES) throw tooLarge("Audio files may be at most 25 MB");
        const audio = await prepareAudio(await blobBytes(body.file), transcriber.maxSeconds);
        const language = body.language?.trim().toLowerCase() || null;
        const transcript = await transcriber.transcribe(audio, language, request.signal);
        const out = render(transcript, format);
        set.headers["content-type"] = out.contentType;
        return out.body;
      },
      {
        auth: "any:strict",
        body: TranscriptionBody,
        parse: "multipart/form-data",
        response: { ...errors(400, 401, 413, 415, 422, 429, 503) },
        detail: { summary: "Transcribe audio (OpenAI-compatible: json, text, srt, vtt, verbose_json)" },
      },
    );
}
