// Files of a knowledge base: drag-and-drop (or pick) several files, upload progress, then the
// ingestion status polled until ready or failed; retry a failed file, download, delete.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, del, download, get, headers, holdFor, rateGate, request, retryAfter } from "../api";
import { Action, Badge, ErrorNote, Note, Section, Spinner, bytes, useLoad } from "../ui/kit";
import type { KnowledgeBase } from "./knowledge";

interface KFile {
  id: string;
  name: string;
  size: number;
  status: "queued" | "processing" | "ready" | "failed";
  progress: number;
  error: string | null;
  chunk_count: number;
}

interface Upload {
  key: number;
  name: string;
  sent: number;
  error?: string;
}

/** Multipart upload with XMLHttpRequest: fetch cannot report upload progress. */
function upload(kbId: string, file: File, onProgress: (fraction: number) => void): Promise<KFile> {
  return new Promise((resolve, reject) => {
    void rateGate().then(() => send(resolve, reject));
  });
  function send(resolve: (f: KFile) => void, reject: (e: unknown) => void) {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/knowledge-base/storage/upload");
    for (const [k, v] of Object.entries(headers())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onerror = () => reject(new ApiError(0, "Offline", "The upload was interrupted: Hearth cannot be reached."));
    xhr.onload = () => {
      // Over the rate limit: wait as asked (the console shows the countdown), then send again.
      if (xhr.status === 429) {
        holdFor(retryAfter({ get: (h) => xhr.getResponseHeader(h) }));
        void upload(kbId, file, onProgress).then(resolve, reject);
        return;
      }
      let body: any = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch {}
      if (xhr.status >= 200 && xhr.status < 300) resolve(body.data);
      else reject(new ApiError(xhr.status, body.error ?? "Error", body.message ?? `Upload failed (${xhr.status})`));
    };
    const form = new FormData();
    form.append("file", file);
    form.append("knowledge_base_id", kbId);
    xhr.send(form);
  }
}

let uploadSeq = 0;

export function Files(props: { kb: KnowledgeBase; onChange: () => void }) {
  const files = useLoad(() => get<KFile[]>(`/api/knowledge-base/storage/${props.kb.id}?pageSize=100`), [props.kb.id], `files:${props.kb.id}`);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [over, setOver] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const picker = useRef<HTMLInputElement>(null);

  // While anything is queued or processing, read the list again (each file's status and
  // progress), sooner at first and then less often: a long ingestion must not spend the whole
  // rate limit (10 requests a minute by default) on asking how far it got.
  const busy = files.data?.some((f) => f.status === "queued" || f.status === "processing");
  const polls = useRef(0);
  useEffect(() => {
    if (!busy) {
      polls.current = 0;
      return;
    }
    const timer = setTimeout(files.reload, Math.min(15_000, 1500 * 1.5 ** polls.current++));
    return () => clearTimeout(timer);
  }, [files.data]);

  // Several files uploaded together are followed by one reading of the lists, not one per file.
  const settle = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const uploaded = () => {
    clearTimeout(settle.current);
    settle.current = setTimeout(() => {
      polls.current = 0;
      files.reload();
      props.onChange();
    }, 400);
  };

  const send = (list: FileList | File[]) => {
    for (const file of Array.from(list)) {
      const key = ++uploadSeq;
      setUploads((u) => [...u, { key, name: file.name, sent: 0 }]);
      const patch = (p: Partial<Upload>) => setUploads((u) => u.map((x) => (x.key === key ? { ...x, ...p } : x)));
      upload(props.kb.id, file, (sent) => patch({ sent })).then(
        () => {
          setUploads((u) => u.filter((x) => x.key !== key));
          uploaded();
        },
        (err: Error) => patch({ error: err.message }),
      );
    }
  };

  const retry = async (f: KFile) => {
    // Re-ingest the stored bytes: fetch them back and replace the file's content with them.
    const blob = await (await request(`/api/knowledge-base/storage/file/${f.id}/download`)).blob();
    const form = new FormData();
    form.append("file", new File([blob], f.name));
    await request(`/api/knowledge-base/storage/file/${f.id}`, { method: "PUT", body: form });
    files.reload();
  };

  return (
    <Section title={`Files of ${props.kb.name}`}>
      <div
        class={`drop ${over ? "drop-over" : ""}`}
        onDragOver={(e) => (e.preventDefault(), setOver(true))}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (e.dataTransfer?.files.length) send(e.dataTransfer.files);
        }}
      >
        <p>Drop documents here (PDF, DOCX, CSV, TXT, MD, JSON, XML; up to 50 MB each)</p>
        {/* The input sits in its label, so the label shows the keyboard focus (:focus-within). */}
        <label class="button file-button">
          Choose files…
          <input
            id="kb-upload"
            ref={picker}
            class="sr-only"
            type="file"
            multiple
            onChange={(e) => {
              if (e.currentTarget.files) send(e.currentTarget.files);
              e.currentTarget.value = "";
            }}
          />
        </label>
      </div>
      {uploads.map((u) => (
        <div class="upload" key={u.key}>
          <span>{u.name}</span>
          {u.error ? <Note kind="error">{u.error}</Note> : <progress max={1} value={u.sent} aria-label={`Uploading ${u.name}`} />}
          {u.error && (
            <button type="button" onClick={() => setUploads((x) => x.filter((y) => y.key !== u.key))}>
              Dismiss
            </button>
          )}
        </div>
      ))}
      <ErrorNote error={error || files.error} />
      {files.loading && !files.data ? (
        <Spinner />
      ) : files.data?.length ? (
        <ul class="files">
          {files.data.map((f) => (
            <li key={f.id} data-status={f.status}>
              <div class="file-head">
                <strong>{f.name}</strong>
                <Badge value={f.status} />
                <span class="muted">
                  {bytes(f.size)}
                  {f.status === "ready" ? `, ${f.chunk_count} passage${f.chunk_count === 1 ? "" : "s"}` : ""}
                </span>
              </div>
              {(f.status === "queued" || f.status === "processing") && (
                <progress max={1} value={f.progress} aria-label={`Processing ${f.name}`} />
              )}
              {f.error && <Note kind="error">{f.error}</Note>}
              <div class="actions">
                {f.status === "failed" && (
                  <Action onError={setError} run={() => retry(f)}>
                    Retry
                  </Action>
                )}
                <Action onError={setError} run={() => download(`/api/knowledge-base/storage/file/${f.id}/download`, f.name)}>
                  Download
                </Action>
                <Action
                  class="danger"
                  onError={setError}
                  confirm={`Delete “${f.name}” with its passages?`}
                  run={async () => {
                    await del(`/api/knowledge-base/storage/file/${f.id}`);
                    files.reload();
                    props.onChange();
                  }}
                >
                  Delete
                </Action>
              </div>
            </li>
          ))}
        </ul>
      ) : (
        !files.error && <Note>No files yet.</Note>
      )}
    </Section>
  );
}
