// The console's only way to Hearth: its public HTTP API, with the session JWT as a bearer token.
// Errors carry the API's own `message`; a failed connection flips `offline` until /health answers.
import { signal } from "@preact/signals";

/** sessionStorage: survives a reload of this tab, is gone when the tab closes, and is never sent
 * by the browser on its own (unlike a cookie), so no CSRF; the strict CSP guards it from scripts. */
const KEY = "hearth.session";
export const token = signal<string | null>(sessionStorage.getItem(KEY));
export const offline = signal(false);
/** Why the session ended without a sign-out (a 401: it expired, the password was changed in
 * another session, the account was removed): the sign-in page says it. */
export const sessionEnded = signal<string | null>(null);
/** Seconds until requests held back by the rate limit go out again (0: none are waiting). */
export const rateWait = signal(0);
/** Super admins may act in another organization (X-Organization-Id). */
export const actingOrg = signal<string | null>(sessionStorage.getItem("hearth.org"));

export function setToken(value: string | null) {
  if (value) sessionEnded.value = null;
  token.value = value;
  if (value) sessionStorage.setItem(KEY, value);
  else sessionStorage.removeItem(KEY);
}

/** Ends the session for a reason the sign-in page shows (state.ts clears what the console held). */
export function endSession(reason: string) {
  sessionEnded.value = reason;
  token.value = null;
  sessionStorage.removeItem(KEY);
}

export function setActingOrg(id: string | null) {
  actingOrg.value = id;
  if (id) sessionStorage.setItem("hearth.org", id);
  else sessionStorage.removeItem("hearth.org");
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function headers(extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { ...extra };
  if (token.value) h.authorization = `Bearer ${token.value}`;
  if (actingOrg.value) h["x-organization-id"] = actingOrg.value;
  return h;
}

let probing = false;
/** After a failed connection, asks /health every 2 s and clears `offline` once it answers. */
function lostConnection() {
  offline.value = true;
  if (probing) return;
  probing = true;
  const probe = () =>
    fetch("/health", { cache: "no-store" })
      .then(() => {
        offline.value = false;
        probing = false;
      })
      .catch(() => setTimeout(probe, 2000));
  setTimeout(probe, 2000);
}

/** Until when (epoch ms) every request waits: set by a 429's Retry-After, shared by all callers,
 * so requests queued meanwhile go out after the window resets instead of each earning a 429. */
let heldUntil = 0;
let countdown: ReturnType<typeof setInterval> | undefined;

function tick() {
  const left = Math.ceil((heldUntil - Date.now()) / 1000);
  rateWait.value = Math.max(0, left);
  if (left <= 0 && countdown) {
    clearInterval(countdown);
    countdown = undefined;
  }
}

/** Holds every request for `seconds` (from a Retry-After) and shows the countdown. */
export function holdFor(seconds: number) {
  heldUntil = Math.max(heldUntil, Date.now() + seconds * 1000 + 250);
  tick();
  countdown ??= setInterval(tick, 1000);
}

/** Resolves once the rate limit lets requests out again (at once when nothing is held). */
export function rateGate(signal?: AbortSignal | null): Promise<void> {
  const ms = heldUntil - Date.now();
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (signal?.removeEventListener("abort", stop), resolve()), ms);
    const stop = () => (clearTimeout(timer), reject(new DOMException("Aborted", "AbortError")));
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** Seconds a 429 asks to wait: Retry-After, else RateLimit-Reset, else a minute. */
export const retryAfter = (h: { get(name: string): string | null }) => Number(h.get("retry-after") ?? h.get("ratelimit-reset")) || 60;

/**
 * fetch() that reports a lost connection and turns a non-2xx answer into an ApiError. A 429 is
 * not an error to show: as DESIGN.md asks of clients, the request waits the Retry-After (with the
 * countdown shown quietly) and goes out again, as often as it takes. Sign-in and a password change
 * are the exceptions: their 429 is mostly the account's budget of failed sign-ins (up to 15
 * minutes, to slow down guessing), so it is shown instead of leaving the form waiting.
 */
export async function request(path: string, init: RequestInit = {}): Promise<Response> {
  let res: Response;
  let sent: string | null;
  const checksPassword = path.startsWith("/api/auth/login") || path.startsWith("/api/auth/password");
  for (;;) {
    await rateGate(init.signal);
    sent = token.value;
    try {
      res = await fetch(path, { ...init, headers: headers((init.headers as Record<string, string>) ?? {}) });
    } catch (err) {
      if ((err as Error).name === "AbortError") throw err;
      lostConnection();
      throw new ApiError(0, "Offline", "Hearth cannot be reached. Check the connection; the console retries by itself.");
    }
    offline.value = false;
    if (res.status !== 429 || checksPassword || init.body instanceof ReadableStream) break;
    holdFor(retryAfter(res.headers));
  }
  if (res.ok) return res;
  let code = "Error";
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    code = body.error ?? code;
    message = body.message ?? message;
  } catch {}
  // A session that expired or was ended: back to the sign-in page. Only if it is still the one
  // this request carried: one sent just before a password change replaced it says nothing of the new.
  if (res.status === 401 && sent && sent === token.value && !path.startsWith("/api/auth/login")) {
    endSession("Your session has ended: it expired, your password was changed elsewhere, or your account was removed. Sign in again.");
  }
  throw new ApiError(res.status, code, message);
}

export interface Page<T> {
  data: T;
  pagination?: { page: number; pageSize: number; total: number };
  message?: string;
}

/** JSON call; answers the envelope ({data, pagination?, message?}). */
export async function call<T = any>(method: string, path: string, body?: unknown): Promise<Page<T>> {
  const init: RequestInit = { method };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { "content-type": "application/json" };
  }
  const res = await request(path, init);
  return res.json();
}

export const get = <T = any>(path: string) => call<T>("GET", path).then((r) => r.data);
export const post = <T = any>(path: string, body?: unknown) => call<T>("POST", path, body ?? {}).then((r) => r.data);
export const put = <T = any>(path: string, body?: unknown) => call<T>("PUT", path, body).then((r) => r.data);
export const del = <T = any>(path: string) => call<T>("DELETE", path).then((r) => r.data);

/** Query string from defined values. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** Saves a response body as a file (downloads need the Authorization header, so no plain link). */
export async function download(path: string, fallbackName: string) {
  const res = await request(path);
  const cd = res.headers.get("content-disposition") ?? "";
  const name = decodeURIComponent(cd.match(/filename\*=UTF-8''([^;]+)/)?.[1] ?? cd.match(/filename="([^"]+)"/)?.[1] ?? fallbackName);
  saveBlob(await res.blob(), name);
}

export function saveBlob(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
