// Facts about one request gathered before routing and read again after the response is sent.
import type { Principal } from "../auth/principal";

export interface RequestMeta {
  readonly id: string;
  readonly ip: string | null;
  readonly userAgent: string | null;
  readonly method: string;
  readonly path: string;
  principal?: Principal;
  /** Set when a token's secret matched, whether or not the token could be used. */
  tokenUse?: { tokenId: string; action: "used" | "expired" };
  overrideOrganizationId?: string;
  /** Called once with the final status, before the response leaves (see settleRequest). */
  onSettle?: (status: number) => void;
  settled?: boolean;
  /** The bytes of a JSON body as received (webhook signatures are computed over them). */
  rawBody?: Uint8Array;
}

/**
 * Reports the final status of a request to whoever asked (the auth plugin's audit rows). Called
 * from the success path and from the error handler, so rows are queued before the response is
 * returned and a shutdown right after it still writes them.
 */
export function settleRequest(request: Request, status: number): void {
  const meta = metas.get(request);
  if (!meta || meta.settled) return;
  meta.settled = true;
  meta.onSettle?.(status);
}

const metas = new WeakMap<Request, RequestMeta>();

export function beginRequest(request: Request, ip: string | null): RequestMeta {
  const url = new URL(request.url);
  const incoming = request.headers.get("x-request-id");
  const meta: RequestMeta = {
    id: incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : crypto.randomUUID(),
    ip,
    userAgent: request.headers.get("user-agent")?.slice(0, 512) ?? null,
    method: request.method,
    path: url.pathname.slice(0, 2048),
  };
  metas.set(request, meta);
  return meta;
}

export function requestMeta(request: Request): RequestMeta {
  return metas.get(request) ?? beginRequest(request, null);
}
