// The shape of an API token: svc_ + 32 random base62 characters + a 6-character CRC32 checksum,
// so a secret scanner (or Hearth itself, before any database work) can tell a real token from a typo.
import { timingSafeEqual } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const TOKEN_PREFIX_LENGTH = 12;
const SHAPE = new RegExp(`^svc_[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function base62(n: number, width: number): string {
  let out = "";
  for (let i = 0; i < width; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

function checksum(random: string): string {
  return base62(Bun.hash.crc32(random), CHECKSUM_LENGTH);
}

export function generateToken(): string {
  // Rejection sampling keeps every character uniform over the 62 symbols (no modulo bias).
  let random = "";
  while (random.length < RANDOM_LENGTH) {
    for (const b of crypto.getRandomValues(new Uint8Array(48))) {
      if (b < 248 && random.length < RANDOM_LENGTH) random += ALPHABET[b % 62];
    }
  }
  return `svc_${random}${checksum(random)}`;
}

/** True when `raw` has the token shape and its checksum matches. */
export function isWellFormed(raw: string): boolean {
  if (!SHAPE.test(raw)) return false;
  const body = raw.slice(4);
  return checksum(body.slice(0, RANDOM_LENGTH)) === body.slice(RANDOM_LENGTH);
}

export function hashToken(raw: string): string {
  return Bun.SHA256.hash(raw, "hex");
}

export const tokenPrefix = (raw: string) => raw.slice(0, TOKEN_PREFIX_LENGTH);

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}
