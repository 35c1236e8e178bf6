// The key that encrypts integration credentials (AES-256-GCM): HEARTH_SECRET_KEY, or a key file
// generated once in the data dir (mode 0600). Never in the database, so a copy of the database or a
// backup holds the credentials only as ciphertext.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "./config";

const KEY_FILE = "secret.key";
/** The settings key of the marker sealed under the database's first secret key. */
export const SECRET_KEY_MARKER = "secret_key_check";
const VERSION = "v1";

export interface SecretBox {
  seal(value: unknown): string;
  open<T = unknown>(sealed: string): T;
}

/** The 32-byte key from HEARTH_SECRET_KEY (base64), else the data dir's key file, created when missing. */
export function loadSecretKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured !== undefined) {
    const key = Buffer.from(configured, "base64");
    if (key.length !== 32) throw new ConfigError("HEARTH_SECRET_KEY must be 32 bytes in base64 (openssl rand -base64 32)");
    return key;
  }
  const path = join(dataDir, KEY_FILE);
  if (!existsSync(path)) writeFileSync(path, randomBytes(32).toString("base64"), { mode: 0o600, flag: "wx" });
  chmodSync(path, 0o600);
  const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64");
  if (key.length !== 32) throw new ConfigError(`${path} does not hold a 32-byte base64 key; restore it from a backup, or set HEARTH_SECRET_KEY`);
  return key;
}

/** Where the database keeps the marker sealed under its key, and how many credentials it holds sealed. */
export interface SealedState {
  /** The marker, stored with `sealed` when there is none yet; the stored one otherwise. */
  marker(sealed: string): string;
  replaceMarker(sealed: string): void;
  sealedCount(): number;
}

/**
 * The box of the configured key, checked against the marker sealed under the database's first key.
 * Another key leaves every stored credential undecryptable: with any stored, the start stops (a
 * missing key file is not generated then, so the original can be put back); with none (a backup
 * restored without its secret.key), the marker is sealed again under this key.
 */
export function openSecretBox(configured: string | undefined, dataDir: string, db: SealedState): { box: SecretBox; replaced: boolean } {
  const fresh = configured === undefined && !existsSync(join(dataDir, KEY_FILE));
  if (fresh) {
    const sealed = db.sealedCount();
    if (sealed > 0) throw missingKey(dataDir, sealed);
  }
  const box = createSecretBox(loadSecretKey(configured, dataDir));
  try {
    box.open(db.marker(box.seal("hearth")));
    return { box, replaced: false };
  } catch {
    const sealed = db.sealedCount();
    if (sealed === 0) {
      db.replaceMarker(box.seal("hearth"));
      return { box, replaced: true };
    }
    throw wrongKey(configured, dataDir, sealed);
  }
}

const wrongKey = (configured: string | undefined, dataDir: string, sealed: number) =>
  new ConfigError(
    `${configured === undefined ? `${join(dataDir, KEY_FILE)} is` : "HEARTH_SECRET_KEY is"} not the key the credentials of ${sealed} integration(s) in this database were sealed with: put the original secret.key in the data dir (it is kept apart from the database and its backups), or set HEARTH_SECRET_KEY to it`,
  );

const missingKey = (dataDir: string, sealed: number) =>
  new ConfigError(
    `${join(dataDir, KEY_FILE)} is missing: the credentials of ${sealed} integration(s) in this database were sealed with it; put the original secret.key in the data dir (it is kept apart from the database and its backups), or set HEARTH_SECRET_KEY to it`,
  );

/**
 * The same check as openSecretBox, on the database as a previous Hearth left it and before it is
 * migrated, writing nothing: a start refused for its key leaves the database as it was, so the
 * older Hearth can still be started on it. Databases without sealed credentials pass.
 */
export function checkSecretKeyBeforeMigrating(configured: string | undefined, dataDir: string, sqlite: { query(sql: string): { get(...args: unknown[]): unknown } }): void {
  const tables = (sqlite.query("SELECT group_concat(name) AS names FROM sqlite_master WHERE type = 'table' AND name IN ('integrations', 'settings')").get() as { names: string | null }).names ?? "";
  if (!tables.includes("integrations") || !tables.includes("settings")) return;
  const sealed = (sqlite.query("SELECT count(*) AS n FROM integrations WHERE credentials IS NOT NULL").get() as { n: number }).n;
  const marker = (sqlite.query("SELECT value FROM settings WHERE key = ?").get(SECRET_KEY_MARKER) as { value: string } | null)?.value;
  if (sealed === 0 || !marker) return;
  if (configured === undefined && !existsSync(join(dataDir, KEY_FILE))) throw missingKey(dataDir, sealed);
  try {
    createSecretBox(loadSecretKey(configured, dataDir)).open(marker);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw wrongKey(configured, dataDir, sealed);
  }
}

export function createSecretBox(key: Buffer): SecretBox {
  return {
    seal(value) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`;
    },
    open<T>(sealed: string): T {
      const [version, data] = sealed.split(":");
      if (version !== VERSION || !data) throw new Error("not a sealed value of this Hearth");
      const raw = Buffer.from(data, "base64");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      try {
        return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")) as T;
      } catch {
        throw new Error("the credentials cannot be decrypted with this key (was HEARTH_SECRET_KEY or secret.key changed?)");
      }
    },
  };
}
