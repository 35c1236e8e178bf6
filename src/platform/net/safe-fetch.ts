// Outbound HTTP for workflow nodes, agent tools and integrations: never to loopback, link-local
// or cloud-metadata addresses (checked after DNS resolution and again on every redirect) unless
// HEARTH_HTTP_ALLOW names them. Private ranges stay allowed: on-prem services live there.
import { BlockList, isIP } from "node:net";
import { lookup } from "node:dns/promises";
import { readLimited } from "../http/body";

export class BlockedAddressError extends Error {}

const blocked = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, including 169.254.169.254 (AWS, GCP, Azure, OpenStack metadata)
  ["100.100.100.200", 32], // Alibaba Cloud metadata
  ["224.0.0.0", 4],
  ["255.255.255.255", 32],
] as const)
  blocked.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["fe80::", 10],
  ["fd00:ec2::254", 128], // AWS metadata over IPv6
  ["ff00::", 8],
] as const)
  blocked.addSubnet(net, bits, "ipv6");

export interface AllowList {
  hosts: Set<string>;
  nets: BlockList;
}

/** Parses HEARTH_HTTP_ALLOW: comma-separated host names, addresses and CIDRs. */
export function parseAllowList(raw: string): AllowList {
  const hosts = new Set<string>();
  const nets = new BlockList();
  for (const item of raw.split(",").map((s) => s.trim()).filter(Boolean)) {
    const [addr, bits] = item.split("/");
    const family = isIP(addr!);
    if (family) nets.addSubnet(addr!, bits === undefined ? (family === 4 ? 32 : 128) : Number(bits), family === 4 ? "ipv4" : "ipv6");
    else hosts.add(item.toLowerCase());
  }
  return { hosts, nets };
}

const familyOf = (address: string) => (isIP(address) === 6 ? "ipv6" : "ipv4");

/** The host's addresses; a failed lookup says which host (getaddrinfo's own message does not), keeping its code. */
async function resolve(host: string) {
  try {
    return await lookup(host, { all: true, verbatim: true });
  } catch (e) {
    const code = (e as { code?: string }).code;
    const why = code === "ENOTFOUND" ? "no such host" : code === "EAI_AGAIN" ? "the name server did not answer" : (e as Error).message;
    throw Object.assign(new Error(`${host} could not be resolved: ${why}${code ? ` (${code})` : ""}`), { code });
  }
}

/** Throws BlockedAddressError unless every address `url`'s host resolves to may be called. */
export async function checkUrl(url: URL, allow: AllowList): Promise<void> {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new BlockedAddressError(`only http and https URLs may be called, not ${url.protocol}`);
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (allow.hosts.has(host)) return;
  const addresses = isIP(host) ? [host] : (await resolve(host)).map((a) => a.address);
  for (const address of addresses) {
    if (allow.nets.check(address, familyOf(address))) continue;
    if (blocked.check(address, familyOf(address))) {
      throw new BlockedAddressError(`${url.hostname} resolves to ${address}, a loopback, link-local or metadata address; add it to HEARTH_HTTP_ALLOW to allow it`);
    }
  }
}

export interface SafeResponse {
  status: number;
  headers: Headers;
  /** The body, at most `maxBytes`. */
  bytes: Uint8Array;
  text(): string;
  url: string;
}

export class ResponseTooLargeError extends Error {}

const MAX_REDIRECTS = 5;

/**
 * Headers a redirect to another origin keeps. Any other header may carry a credential (Authorization,
 * Cookie, GitLab's PRIVATE-TOKEN, an http node's X-API-Key), and the next origin is not the one the
 * caller chose to trust with it: browsers' fetch drops Authorization there for the same reason.
 */
const SAFE_ACROSS_ORIGINS = new Set(["accept", "accept-encoding", "accept-language", "content-language", "content-type", "user-agent", "idempotency-key"]);

/** fetch with the address rule on every hop, redirects followed by hand, and a cap on the body read. */
export async function safeFetch(input: string, init: RequestInit & { allow: AllowList; maxBytes: number }): Promise<SafeResponse> {
  let url = new URL(input);
  let method = (init.method ?? "GET").toUpperCase();
  let body = init.body;
  const headers = new Headers(init.headers);
  for (let hop = 0; ; hop++) {
    await checkUrl(url, init.allow);
    const res = await fetch(url, { ...init, method, headers, body, redirect: "manual" });
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel().catch(() => {});
      if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
      const next = new URL(location, url);
      if (next.origin !== url.origin) for (const name of [...headers.keys()]) if (!SAFE_ACROSS_ORIGINS.has(name)) headers.delete(name);
      url = next;
      // As fetch does: 303 turns anything but GET/HEAD into a GET, 301/302 a POST; 307/308 keep method and body.
      if ((res.status === 303 && method !== "GET" && method !== "HEAD") || ((res.status === 301 || res.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
        for (const name of ["content-type", "content-length", "content-encoding", "content-language"]) headers.delete(name);
      }
      continue;
    }
    const bytes = await readLimited(res, init.maxBytes, undefined, (n) => new ResponseTooLargeError(`the response is larger than ${n} bytes`));
    return { status: res.status, headers: res.headers, bytes, text: () => new TextDecoder().decode(bytes), url: url.toString() };
  }
}
