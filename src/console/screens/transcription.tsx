// Transcription: send an audio file to the OpenAI-compatible endpoint, read the text with its
// timed segments, and download subtitles (SRT, WebVTT) made by Hearth.
import { useState } from "preact/hooks";
import { request, saveBlob } from "../api";
import { ErrorNote, Field, Note, Section } from "../ui/kit";

interface Result {
  text: string;
  language?: string;
  duration?: number;
  segments?: { start: number; end: number; text: string }[];
}

const clock = (s: number) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, "0")}`;

async function transcribe(file: File, format: string, language: string): Promise<Response> {
  const form = new FormData();
  form.append("file", file);
  form.append("response_format", format);
  if (language) form.append("language", language);
  return request("/api/audio/transcriptions", { method: "POST", body: form });
}

export function Transcription() {
  const [file, setFile] = useState<File | null>(null);
  const [language, setLanguage] = useState("");
  const [result, setResult] = useState<Result | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  const run = async (format: string) => {
    if (!file) return;
    setBusy(format);
    setError(null);
    try {
      const res = await transcribe(file, format, language);
      if (format === "verbose_json") setResult(await res.json());
      else saveBlob(await res.blob(), file.name.replace(/\.[^.]+$/, "") + `.${format}`);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };

  return (
    <>
      <Section title="Audio">
        <form
          class="grid-form"
          onSubmit={(e) => {
            e.preventDefault();
            void run("verbose_json");
          }}
        >
          <Field label="Recording" hint="WAV, MP3, M4A, Ogg, Opus, WebM or FLAC; up to 25 MB.">
            {(id, hint) => <input id={id} type="file" accept="audio/*,video/webm" required aria-describedby={hint} onChange={(e) => (setFile(e.currentTarget.files?.[0] ?? null), setResult(null))} />}
          </Field>
          <Field label="Language (optional)" hint="ISO 639-1 code such as en or de; detected when empty.">
            {(id, hint) => <input id={id} maxLength={8} size={6} aria-describedby={hint} value={language} onInput={(e) => setLanguage(e.currentTarget.value.trim())} />}
          </Field>
          <button class="primary" type="submit" disabled={!file || Boolean(busy)}>
            {busy === "verbose_json" ? "Transcribing…" : "Transcribe"}
          </button>
        </form>
        {busy && <progress aria-label="Transcribing" />}
        <ErrorNote error={error} />
      </Section>
      {result && (
        <Section
          title="Transcript"
          actions={
            <div class="actions">
              <button type="button" disabled={Boolean(busy)} onClick={() => run("srt")}>
                {busy === "srt" ? "Making SRT…" : "Download SRT"}
              </button>
              <button type="button" disabled={Boolean(busy)} onClick={() => run("vtt")}>
                {busy === "vtt" ? "Making VTT…" : "Download VTT"}
              </button>
            </div>
          }
        >
          <p class="muted">
            {result.language ? `Language: ${result.language}. ` : ""}
            {result.duration ? `Length: ${clock(result.duration)}.` : ""}
          </p>
          {result.text.trim() ? <p class="transcript">{result.text}</p> : <Note>No speech found.</Note>}
          {result.segments?.length ? (
            <ol class="segments">
              {result.segments.map((s) => (
                <li>
                  <span class="muted">
                    {clock(s.start)}–{clock(s.end)}
                  </span>{" "}
                  {s.text}
                </li>
              ))}
            </ol>
          ) : null}
        </Section>
      )}
    </>
  );
}
