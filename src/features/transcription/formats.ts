// A transcript in the response formats of the OpenAI transcription endpoint.
import type { Transcript } from "./transcriber";

export const RESPONSE_FORMATS = ["json", "text", "srt", "vtt", "verbose_json"] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

const languageName = (code: string) => {
  try {
    return (new Intl.DisplayNames(["en"], { type: "language" }).of(code) ?? code).toLowerCase();
  } catch {
    return code;
  }
};

/** h:mm:ss,mmm (SRT) or hh:mm:ss.mmm (WebVTT). */
export function timestamp(seconds: number, separator: "," | "."): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

/** The body and content type of a transcript in `format`. */
export function render(t: Transcript, format: ResponseFormat): { body: string; contentType: string } {
  switch (format) {
    case "json":
      return { body: JSON.stringify({ text: t.text }), contentType: "application/json; charset=utf-8" };
    case "verbose_json":
      return {
        body: JSON.stringify({ task: "transcribe", language: languageName(t.language), duration: t.duration, text: t.text, segments: t.segments }),
        contentType: "application/json; charset=utf-8",
      };
    case "text":
      return { body: `${t.text}\n`, contentType: "text/plain; charset=utf-8" };
    case "srt":
      return {
        body: t.segments.map((s, i) => `${i + 1}\n${timestamp(s.start, ",")} --> ${timestamp(s.end, ",")}\n${s.text}\n`).join("\n"),
        contentType: "application/x-subrip; charset=utf-8",
      };
    case "vtt":
      return {
        body: `WEBVTT\n\n${t.segments.map((s) => `${timestamp(s.start, ".")} --> ${timestamp(s.end, ".")}\n${s.text}\n`).join("\n")}`,
        contentType: "text/vtt; charset=utf-8",
      };
  }
}
