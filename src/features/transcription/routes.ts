// POST /api/audio/transcriptions: the OpenAI transcription endpoint's request and responses, so
// OpenAI's own SDKs work against Hearth unchanged.
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { invalid, tooLarge } from "../../platform/errors";
import { whileWorking } from "../../platform/http/long-request";
import { blobBytes } from "../../platform/http/multipart";
import { otherResponses } from "../../platform/http/schemas";
import { prepareAudio } from "./audio";
import { TranscriptJson, TranscriptionBody } from "./model";
import { render, RESPONSE_FORMATS, type ResponseFormat } from "./formats";
import type { Transcriber } from "./transcriber";

/** Spec §8: audio files of at most 25 MB. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

export function transcriptionRoutes({ auth, transcriber }: { auth: AuthPlugin; transcriber: Transcriber }) {
  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["Audio"] } })
    .post(
      "/api/audio/transcriptions",
      ({ body, request, server, set }) => whileWorking(server, request, async () => {
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
      }),
      {
        auth: "any:strict",
        body: TranscriptionBody,
        parse: "multipart/form-data",
        detail: {
          summary: "Transcribe audio (OpenAI-compatible: json, text, srt, vtt, verbose_json)",
          responses: otherResponses(
            {
              200: {
                description: "The transcript in the response_format asked for: JSON for json and verbose_json, text for text, srt and vtt",
                content: {
                  "application/json": { schema: TranscriptJson },
                  "text/plain": { schema: { type: "string", description: "text" } },
                  "application/x-subrip": { schema: { type: "string", description: "srt" } },
                  "text/vtt": { schema: { type: "string", description: "vtt" } },
                },
              },
            },
            400, 401, 413, 415, 422, 429, 503,
          ),
        },
      },
    );
}
