// Facts about one request gathered before routing and read again after the response is sent.
import type { Principal } from "../auth/principal";

/**
 * Reports the final status of a request to whoever asked (the auth plugin's audit rows). Called
 * from the success path and from the error handler, which wait for the promise it may return (the
 * rows are durable then) before the response leaves.
 */
export function settleRequest(request: Request, status: number): Promise<void> | undefined {
  const meta = metas.get(request);
  if (!meta || meta.settled) return undefined;
  meta.settled = true;
  return meta.onSettle?.(meta, status);
}

const metas = new WeakMap<Request, RequestMeta>();

/** Where the path starts and ends in a request URL (after the authority, before ? or #), without a URL parser. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  let end = url.indexOf("?", start);
  if (end < 0) end = url.length;
  const hash = url.indexOf("#", start);
  if (hash >= 0 && hash < end) end = hash;
  return url.slice(start, Math.min(end, start + 2048));
}

/** The facts of a request, each read from the request when first asked for (most requests need few of them). */
export class RequestMeta {
  readonly id: string;
  readonly method: string;
  principal?: Principal;
  /** Set when a token's secret matched, whether or not the token could be used. */
  tokenUse?: { tokenId: string; action: "used" | "expired" };
  overrideOrganizationId?: string;
  /** Called once with the final status, before the response leaves (see settleRequest). */
  onSettle?: (meta: RequestMeta, status: number) => Promise<void> | undefined;
  settled?: boolean;
  /** The bytes of a JSON body as received (webhook signatures are computed over them). */
  rawBody?: Uint8Array;
  #ip: string | null | undefined;
  #userAgent: string | null | undefined;
  #path: string | undefined;

  constructor(
    private readonly request: Request,
    private readonly server: AddressSource | null | undefined,
  ) {
    const incoming = request.headers.get("x-request-id");
    this.id = incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : crypto.randomUUID();
    this.method = request.method;
  }

  get ip(): string | null {
    // Asked of the server only when needed (a getpeername and a formatted address, ~0.8 µs).
    if (this.#ip === undefined) this.#ip = this.server?.requestIP(this.request)?.address ?? null;
    return this.#ip;
  }

  get userAgent(): string | null {
    if (this.#userAgent === undefined) this.#userAgent = this.request.headers.get("user-agent")?.slice(0, 512) ?? null;
    return this.#userAgent;
  }

  get path(): string {
    this.#path ??= pathOf(this.request.url);
    return this.#path;
  }
}

/** What knows the client's address: the HTTP server (absent when a request is handled in process). */
export interface AddressSource {
  requestIP(request: Request): { address: string } | null;
}

/** Starts the facts of a request; the client's address is asked of `server` only when needed. */
export function beginRequest(request: Request, server: AddressSource | null | undefined): RequestMeta {
  const meta = new RequestMeta(request, server);
  metas.set(request, meta);
  return meta;
}

export function requestMeta(request: Request): RequestMeta {
  return metas.get(request) ?? beginRequest(request, null);
}
