// Inbound webhook signatures: Standard Webhooks (webhook-id/-timestamp/-signature) and GitHub
// (X-Hub-Signature-256), both HMAC-SHA256 over the raw body, compared in constant time.
import { createHmac, timingSafeEqual } from "node:crypto";

/** A Standard Webhooks timestamp further than this from now is refused (replay window). */
export const TIMESTAMP_TOLERANCE_S = 5 * 60;

/** `whsec_<base64>` is used base64-decoded, as the Standard Webhooks libraries do; any other secret as its UTF-8 bytes. */
export function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith("whsec_") ? Buffer.from(secret.slice("whsec_".length), "base64") : Buffer.from(secret, "utf8");
}

const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

type Headers = { get(name: string): string | null };

/** Why a delivery's signature is refused, or undefined when it verifies. */
export function signatureProblem(secret: string, headers: Headers, raw: Uint8Array, nowMs: number): string | undefined {
  const signature = headers.get("webhook-signature");
  if (signature !== null) return standardWebhooksProblem(secret, headers.get("webhook-id"), headers.get("webhook-timestamp"), signature, raw, nowMs);
  const github = headers.get("x-hub-signature-256");
  if (github !== null) return githubProblem(secret, github, raw);
  return "This webhook requires a signature: send webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks) or X-Hub-Signature-256 (GitHub)";
}

export function standardWebhooksProblem(secret: string, id: string | null, timestamp: string | null, signature: string, raw: Uint8Array, nowMs: number): string | undefined {
  if (!id || !timestamp) return "Standard Webhooks signatures need the webhook-id and webhook-timestamp headers";
  if (!/^\d{1,12}$/.test(timestamp)) return "webhook-timestamp must be Unix seconds";
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > TIMESTAMP_TOLERANCE_S) return `webhook-timestamp is more than ${TIMESTAMP_TOLERANCE_S / 60} minutes from now (a replay, or a skewed clock)`;
  const mac = createHmac("sha256", standardWebhooksKey(secret)).update(`${id}.${timestamp}.`).update(raw).digest();
  // Several signatures may be sent (key rotation); any v1 that matches is enough.
  for (const part of signature.split(" ")) {
    const [version, value] = part.split(",", 2);
    if (version === "v1" && value && sameBytes(Buffer.from(value, "base64"), mac)) return undefined;
  }
  return "webhook-signature does not match";
}

export function githubProblem(secret: string, header: string, raw: Uint8Array): string | undefined {
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!m) return "X-Hub-Signature-256 must be sha256=<64 hex digits>";
  const mac = createHmac("sha256", Buffer.from(secret, "utf8")).update(raw).digest();
  return sameBytes(Buffer.from(m[1]!, "hex"), mac) ? undefined : "X-Hub-Signature-256 does not match";
}
