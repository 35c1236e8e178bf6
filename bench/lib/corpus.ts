// Deterministic benchmark inputs for the knowledge suite: varied English text, questions, clustered vectors and a big PDF.
import { PDFDocument, StandardFonts } from "pdf-lib";
import { rng } from "./stats";

interface Topic {
  name: string;
  nouns: string[];
  verbs: string[];
  adjectives: string[];
}

const TOPICS: Topic[] = [
  { name: "Backups", nouns: ["backup", "snapshot", "archive", "restore point", "retention policy", "standby copy"], verbs: ["copies", "verifies", "compresses", "encrypts", "restores", "prunes"], adjectives: ["nightly", "incremental", "offsite", "consistent", "weekly"] },
  { name: "Networking", nouns: ["firewall", "load balancer", "subnet", "DNS record", "proxy", "VPN tunnel"], verbs: ["routes", "filters", "resolves", "forwards", "blocks", "terminates"], adjectives: ["internal", "redundant", "public", "encrypted", "slow"] },
  { name: "Security", nouns: ["password policy", "access token", "audit log", "certificate", "role", "signing key"], verbs: ["rotates", "revokes", "grants", "records", "expires", "checks"], adjectives: ["short-lived", "privileged", "compromised", "scoped", "mandatory"] },
  { name: "Billing", nouns: ["invoice", "subscription", "refund", "payment method", "price plan", "credit note"], verbs: ["charges", "renews", "cancels", "issues", "prorates", "reminds"], adjectives: ["monthly", "overdue", "annual", "discounted", "pending"] },
  { name: "Onboarding", nouns: ["new hire", "laptop", "welcome pack", "mentor", "first week", "training plan"], verbs: ["receives", "schedules", "introduces", "prepares", "assigns", "reviews"], adjectives: ["remote", "friendly", "structured", "mandatory", "optional"] },
  { name: "Storage", nouns: ["disk", "volume", "bucket", "quota", "replica", "file system"], verbs: ["fills", "expands", "mirrors", "reclaims", "mounts", "throttles"], adjectives: ["full", "shared", "fast", "degraded", "thin-provisioned"] },
  { name: "Monitoring", nouns: ["alert", "dashboard", "metric", "latency graph", "health check", "pager rotation"], verbs: ["fires", "tracks", "samples", "escalates", "silences", "aggregates"], adjectives: ["noisy", "critical", "hourly", "flapping", "green"] },
  { name: "Deployment", nouns: ["release", "rollback", "canary", "migration", "feature flag", "build artifact"], verbs: ["ships", "promotes", "reverts", "gates", "tags", "stages"], adjectives: ["blue-green", "gradual", "failed", "signed", "reproducible"] },
  { name: "Support", nouns: ["ticket", "customer", "escalation", "reply template", "service level", "knowledge article"], verbs: ["answers", "triages", "closes", "links", "reopens", "measures"], adjectives: ["urgent", "angry", "satisfied", "open", "stale"] },
  { name: "Facilities", nouns: ["office", "meeting room", "badge reader", "parking space", "kitchen", "fire drill"], verbs: ["opens", "books", "cleans", "locks", "reserves", "inspects"], adjectives: ["quiet", "crowded", "accessible", "closed", "heated"] },
];

const PEOPLE = ["the operator", "an administrator", "the on-call engineer", "a team lead", "the finance clerk", "every employee", "the auditor", "a contractor"];
const WHEN = ["every night", "before each release", "on Mondays", "after an incident", "at the end of the month", "during the quarterly review", "when the alert fires", "within one hour"];
const WHY = ["so that nothing is lost", "to keep the auditors happy", "because the contract requires it", "which keeps costs down", "so the team can sleep", "to meet the service level", "unless the manager objects", "as the handbook explains"];

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function sentence(r: () => number, t: Topic): string {
  const n = () => pick(r, t.nouns);
  const v = () => pick(r, t.verbs);
  const a = () => pick(r, t.adjectives);
  const code = `${t.name.slice(0, 3).toUpperCase()}-${1000 + Math.floor(r() * 9000)}`;
  const forms = [
    () => `The ${a()} ${n()} ${v()} the ${n()} ${pick(r, WHEN)}, ${pick(r, WHY)}.`,
    () => `${cap(pick(r, PEOPLE))} ${v()} each ${a()} ${n()} ${pick(r, WHEN)}.`,
    () => `If the ${n()} looks ${a()}, ${pick(r, PEOPLE)} ${v()} it and writes a note in the ${n()}.`,
    () => `Error ${code} means that the ${n()} could not be ${pastOf(v())}; check the ${a()} ${n()} first.`,
    () => `Do not change the ${n()} by hand: ${pick(r, PEOPLE)} ${v()} it ${pick(r, WHEN)} ${pick(r, WHY)}.`,
    () => `How long a ${a()} ${n()} is kept depends on the ${n()}, and ${pick(r, PEOPLE)} decides the details.`,
    () => `Our ${t.name.toLowerCase()} guideline says the ${n()} ${v()} only ${a()} data ${pick(r, WHEN)}.`,
  ];
  return pick(r, forms)();
}

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);
const pastOf = (verb: string) => (verb.endsWith("ies") ? `${verb.slice(0, -3)}ied` : verb.endsWith("es") && /(ch|sh|ss|x)es$/.test(verb) ? `${verb.slice(0, -2)}ed` : verb.endsWith("es") ? `${verb.slice(0, -1)}d` : `${verb.slice(0, -1)}ed`);

/** One paragraph of `sentences` sentences about `topic` (an index into the topic list). */
export function paragraph(r: () => number, topic: number, sentences: number): string {
  const t = TOPICS[topic % TOPICS.length]!;
  return Array.from({ length: sentences }, () => sentence(r, t)).join(" ");
}

const SYLLABLES = ["bra", "ken", "vol", "tis", "mor", "dal", "quin", "ser", "lo", "pha", "rin", "gud", "te", "nax", "ul", "cor", "vi", "mes", "tra", "op"];
const pseudoWord = (r: () => number, parts: number) => Array.from({ length: parts }, () => pick(r, SYLLABLES)).join("");
const pseudoTopics = new Map<number, Topic>();

/** One of 1,000 made-up topics with their own words, so that a big knowledge base has a real vocabulary. */
function pseudoTopic(id: number): Topic {
  let t = pseudoTopics.get(id);
  if (!t) {
    const r = rng(77_000 + id);
    const words = (n: number, suffix = "") => Array.from({ length: n }, () => pseudoWord(r, 2 + Math.floor(r() * 2)) + suffix);
    t = { name: pseudoWord(r, 2), nouns: words(6), verbs: words(6, "s"), adjectives: words(5) };
    pseudoTopics.set(id, t);
  }
  return t;
}

/** A general vocabulary of made-up words, drawn skewed (a few frequent, most rare) like real text. */
const GENERAL = (() => {
  const r = rng(4_711);
  return Array.from({ length: 5_000 }, () => pseudoWord(r, 2 + Math.floor(r() * 2)));
})();
const general = (r: () => number) => GENERAL[Math.floor(GENERAL.length * r() ** 3)]!;

/** A sentence on a made-up topic: English function words, the topic's words and general made-up words. */
function pseudoSentence(r: () => number, t: Topic): string {
  const n = () => pick(r, t.nouns);
  const v = () => pick(r, t.verbs);
  const a = () => pick(r, t.adjectives);
  const g = () => general(r);
  const forms = [
    () => `The ${a()} ${n()} ${v()} the ${n()} ${g()} ${g()}.`,
    () => `A ${n()} ${v()} ${g()} ${n()}, and the ${n()} ${v()} it.`,
    () => `${cap(g())} ${n()} ${v()} with the ${a()} ${n()} in ${g()}.`,
    () => `When the ${n()} is ${a()}, ${g()} ${v()} the ${n()} for ${g()} ${g()}.`,
    () => `Each ${g()} ${v()} a ${a()} ${n()} so that the ${n()} ${v()} ${g()}.`,
  ];
  return pick(r, forms)();
}

/**
 * The text of synthetic chunk `i` of a big knowledge base: one in ten is about the handbook's topics
 * (so questions find matches at every size), the rest about made-up topics in made-up words, so
 * that the handbook's words are as rare in the whole base as a topic's words are in a real one.
 */
export function syntheticChunk(r: () => number, i: number): string {
  const sentences = 3 + (i % 3);
  if (i % 10 === 0) return paragraph(r, i / 10, sentences);
  const t = pseudoTopic(Math.floor(r() * 1000));
  return Array.from({ length: sentences }, () => pseudoSentence(r, t)).join(" ");
}

/** A Markdown handbook: `sections` headed sections of `paragraphs` paragraphs each. */
export function handbook(seed: number, sections: number, paragraphs: number): string {
  const r = rng(seed);
  const parts: string[] = ["# Operations handbook\n"];
  for (let s = 0; s < sections; s++) {
    const topic = s % TOPICS.length;
    parts.push(`## ${TOPICS[topic]!.name}, part ${Math.floor(s / TOPICS.length) + 1}\n`);
    for (let p = 0; p < paragraphs; p++) parts.push(`${paragraph(r, topic, 4 + Math.floor(r() * 4))}\n`);
  }
  return parts.join("\n");
}

/** Lines of text for one PDF page (about `lines` lines of ~90 characters). */
export function pageLines(r: () => number, page: number, lines: number): string[] {
  const words = paragraph(r, page, lines * 2).split(" ");
  const out: string[] = [];
  let line = "";
  for (const w of words) {
    if (line.length + w.length + 1 > 90) {
      out.push(line);
      if (out.length === lines) break;
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (out.length < lines && line) out.push(line);
  return out;
}

/** Questions a user of that handbook might ask; used for vector, keyword and hybrid search. */
export const QUESTIONS = [
  "How often are the nightly backups verified?",
  "Who rotates the signing key after an incident?",
  "What does error BAC-4711 mean?",
  "How do I book a quiet meeting room?",
  "When is an overdue invoice cancelled?",
  "Which firewall filters traffic to the internal subnet?",
  "What should the on-call engineer do when the alert fires?",
  "How is a failed release rolled back?",
  "Where does a new hire get the laptop in the first week?",
  "How long is an archive kept under the retention policy?",
  "Why does the disk quota fill up so quickly?",
  "Who answers urgent tickets from an angry customer?",
  "How do I revoke a compromised access token?",
  "What happens to the subscription at the end of the month?",
  "Can a contractor change the DNS record by hand?",
  "How are canary releases promoted to everyone?",
  "Which dashboard tracks the latency graph hourly?",
  "What does the auditor check in the audit log?",
  "How are shared volumes mirrored to a replica?",
  "Who schedules the fire drill in the office?",
];

/** Standard normal deviate (Box–Muller) from a uniform PRNG. */
function gauss(r: () => number): number {
  const u = 1 - r();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}

export function normalizeInPlace(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (let i = 0; i < v.length; i++) v[i]! *= inv;
  return v;
}

/**
 * `count` unit vectors (flat, count×dim) clustered around real model embeddings: each is
 * normalize(a + 0.6·b + noise) for two real chunk vectors a, b, with noise of norm about `noise`,
 * so the set keeps the model's geometry (its shared direction, its clusters) without embedding text.
 */
export function clusteredVectors(base: Float32Array[], count: number, dim: number, seed: number, noise = 0.45): Float32Array {
  const r = rng(seed);
  const out = new Float32Array(count * dim);
  const sd = noise / Math.sqrt(dim);
  for (let i = 0; i < count; i++) {
    const a = base[Math.floor(r() * base.length)]!;
    const b = base[Math.floor(r() * base.length)]!;
    const v = out.subarray(i * dim, (i + 1) * dim);
    for (let j = 0; j < dim; j++) v[j] = a[j]! + 0.6 * b[j]! + sd * gauss(r);
    normalizeInPlace(v);
  }
  return out;
}

/**
 * A text PDF of up to `pages` pages (stops adding pages after `maxBuildMs`), optionally padded to
 * `targetBytes` with an incompressible embedded attachment, so its size matches a big real upload.
 */
export async function bigPdf(pages: number, maxBuildMs: number, targetBytes: number): Promise<{ bytes: Uint8Array; pages: number; textBytes: number; paddingBytes: number }> {
  const started = performance.now();
  const r = rng(4242);
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  let textBytes = 0;
  let made = 0;
  for (; made < pages && performance.now() - started < maxBuildMs; made++) {
    const page = pdf.addPage([595, 842]);
    pageLines(r, made, 46).forEach((line, i) => {
      textBytes += line.length + 1;
      page.drawText(line, { x: 40, y: 800 - i * 16, size: 10, font });
    });
  }
  let bytes = await pdf.save();
  let paddingBytes = 0;
  // The text pages compress to ~2 KB each; the rest of the size is an attachment of random bytes.
  if (targetBytes > bytes.length + 8192) {
    const pad = new Uint8Array(targetBytes - bytes.length - 8192);
    for (let i = 0; i < pad.length; i += 65536) crypto.getRandomValues(pad.subarray(i, Math.min(pad.length, i + 65536)));
    await pdf.attach(pad, "scanned-appendix.bin", { mimeType: "application/octet-stream", description: "incompressible padding" });
    paddingBytes = pad.length;
    bytes = await pdf.save();
  }
  return { bytes, pages: made, textBytes, paddingBytes };
}
