// The catalog: ready agents a team installs in one call, each a real workflow (triggers + nodes)
// with the settings it asks for.
import { t, type Static, type TSchema } from "elysia";
import type { Graph } from "../workflows/model";

export interface Template<S extends TSchema = TSchema> {
  id: string;
  name: string;
  description: string;
  settings: S;
  triggers: ("manual" | "schedule" | "webhook")[];
  /** JSON Schema of what an invoke's `input` holds (the manual trigger's input_schema); `required` fields are checked at invoke. */
  input: Record<string, unknown>;
  systemPrompt: string;
  tools: string[];
  build(agentId: string, settings: Static<S>): Graph;
}

const Kbs = t.Optional(t.Array(t.String({ format: "uuid" }), { maxItems: 50, description: "Knowledge bases to read (default: all of the workspace)" }));

const QUERY = { type: "object", required: ["query"], properties: { query: { type: "string", description: "The question or task" } } };
const ANY_INPUT = { type: "object", properties: { query: { type: "string", description: "What to do (optional)" } } };

const answer = (agentId: string, input: string, extra: Record<string, unknown> = {}) => ({ id: "agent", type: "agent", config: { agent_id: agentId, input, ...extra } });
const output = { id: "output", type: "output", config: { value: "{{ nodes.agent.output }}" } };
const chain = (...ids: string[]) => ids.slice(1).map((to, i) => ({ from: ids[i]!, to }));
const randomPath = () => `triage-${crypto.randomUUID().replaceAll("-", "")}`;

const knowledgeAssistant: Template = {
  id: "knowledge-assistant",
  name: "Knowledge assistant",
  description: "Answers questions from the workspace's documents with cited passages; without a language model it still returns the best passages.",
  settings: t.Object({ knowledge_base_ids: Kbs }, { additionalProperties: false }),
  triggers: ["manual"],
  input: QUERY,
  systemPrompt: "You answer questions from the team's documents. Search them before you answer, answer only from what you found, cite the passages as [n], and say so plainly when the documents do not answer the question.",
  tools: ["search_knowledge"],
  build: (id) => ({
    nodes: [{ id: "start", type: "trigger.manual", config: { input_schema: QUERY } }, answer(id, "{{ input.query }}", { fallback: "retrieval" }), output],
    edges: chain("start", "agent", "output"),
  }),
};

const documentSummarizer: Template = {
  id: "document-summarizer",
  name: "Document summarizer",
  description: "Summarizes a document of the knowledge base (named in the query): purpose, key points, decisions, open questions.",
  settings: t.Object({ knowledge_base_ids: Kbs }, { additionalProperties: false }),
  triggers: ["manual"],
  input: QUERY,
  systemPrompt:
    "You summarize documents. Find the document the user names with search_knowledge (search several times with different wording if needed), then write: one sentence of purpose, the key points as a short list, decisions, and open questions. Cite passages as [n].",
  tools: ["search_knowledge"],
  build: (id) => ({ nodes: [{ id: "start", type: "trigger.manual", config: { input_schema: QUERY } }, answer(id, "Summarize: {{ input.query }}"), output], edges: chain("start", "agent", "output") }),
};

const MEETING_INPUT = {
  type: "object",
  description: "The recording's URL, or its transcript (a recording on your own machine: POST /api/audio/transcriptions first)",
  properties: {
    audio_url: { type: "string", description: "http(s) URL of the recording (WAV, MP3, ...), at most 25 MB", examples: ["https://intranet.example/meetings/2026-01-12.wav"] },
    transcript: { type: "string", description: "The meeting's transcript, when you have it already (then audio_url is not needed)" },
  },
  anyOf: [{ required: ["audio_url"] }, { required: ["transcript"] }],
};
/** Whether the invoke brought a transcript (else the recording is transcribed). */
const HAS_TRANSCRIPT = "$exists(input.transcript) and $length($trim($string(input.transcript))) > 0";

const meetingNotes: Template = {
  id: "meeting-notes",
  name: "Meeting notes",
  description:
    "Turns a meeting recording into notes: summary, decisions, action items with owners. Input audio_url (an http(s) URL of the audio, at most 25 MB, transcribed locally with Whisper) or transcript (text you have already, e.g. from POST /api/audio/transcriptions).",
  settings: t.Object({ language: t.Optional(t.String({ minLength: 2, maxLength: 8, description: "ISO 639-1 language of the recordings (detected when left out)" })) }, { additionalProperties: false }),
  triggers: ["manual"],
  input: MEETING_INPUT,
  systemPrompt: "You write meeting notes from a transcript: a three-sentence summary, the decisions taken, and the action items with their owners and dates where the transcript names them. Do not invent what the transcript does not say.",
  tools: [],
  // start → has_transcript: true → text; false → transcribe → text. `text` takes whichever ran.
  build: (id, s: { language?: string }) => ({
    nodes: [
      { id: "start", type: "trigger.manual", config: { input_schema: MEETING_INPUT } },
      { id: "has_transcript", type: "condition", config: { expression: HAS_TRANSCRIPT } },
      { id: "transcribe", type: "transcribe", config: { url: "{{ input.audio_url }}", ...(s.language ? { language: s.language } : {}) } },
      { id: "text", type: "transform", config: { expression: `${HAS_TRANSCRIPT} ? $string(input.transcript) : nodes.transcribe.output.text` } },
      answer(id, "Transcript:\n{{ nodes.text.output }}", { max_steps: 1 }),
      { id: "output", type: "output", config: { value: "{{ $merge([nodes.agent.output, { 'transcript': nodes.text.output }]) }}" } },
    ],
    edges: [
      { from: "start", to: "has_transcript" },
      { from: "has_transcript", to: "text", when: "true" },
      { from: "has_transcript", to: "transcribe", when: "false" },
      { from: "transcribe", to: "text" },
      ...chain("text", "agent", "output"),
    ],
  }),
};

const ticketTriage: Template = {
  id: "ticket-triage",
  name: "Ticket triage",
  description: "Triage of incoming tickets from a webhook (Gitea, GitLab, Jira, a helpdesk): priority, category, a summary and a suggested first reply, checked against the documents.",
  settings: t.Object(
    {
      webhook_path: t.Optional(
        t.String({
          pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{7,127}$",
          // Said as a person fixes it: the validator would otherwise show the pattern itself.
          error: "settings.webhook_path must be 8 to 128 characters: letters, digits, _ . or -, starting with a letter or digit",
          description: "Path of POST /api/webhook/{path}: 8 to 128 letters, digits, _ . or -, starting with a letter or digit (default: random)",
        }),
      ),
      secret: t.Optional(t.String({ minLength: 16, maxLength: 512, description: "Signing secret (Standard Webhooks whsec_... or GitHub)" })),
      events: t.Optional(t.Array(t.String({ minLength: 1 }), { maxItems: 50, description: "Only these event types" })),
      categories: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 30, description: "Categories to choose from" })),
    },
    { additionalProperties: false },
  ),
  triggers: ["webhook", "manual"],
  input: { type: "object", description: "The ticket: a webhook's JSON body, or any object by hand", properties: { query: { type: "string", description: "The ticket's text" } } },
  systemPrompt:
    "You triage support tickets. Read the ticket, search the documents for known answers, then reply with: Priority (low, normal, high or urgent), Category, a one-paragraph Summary, and a Suggested reply citing passages as [n].",
  tools: ["search_knowledge"],
  build: (id, s: { webhook_path?: string; secret?: string; events?: string[]; categories?: string[] }) => ({
    nodes: [
      { id: "webhook", type: "trigger.webhook", config: { path: s.webhook_path ?? randomPath(), ...(s.secret ? { secret: s.secret } : {}), ...(s.events ? { events: s.events } : {}) } },
      { id: "manual", type: "trigger.manual", config: {} },
      answer(id, `${s.categories?.length ? `Categories: ${s.categories.join(", ")}.\n` : ""}Ticket:\n{{ $string(input.body ? input.body : input) }}`, { max_steps: 3 }),
      output,
    ],
    edges: [{ from: "webhook", to: "agent" }, { from: "manual", to: "agent" }, ...chain("agent", "output")],
  }),
};

const dailyDigest: Template = {
  id: "daily-digest",
  name: "Daily digest",
  description: "A morning digest on a schedule (cron in your time zone): what the documents say about the topics you name.",
  settings: t.Object(
    {
      cron: t.Optional(t.String({ default: "0 8 * * 1-5", description: "When (default 08:00 on weekdays)" })),
      timezone: t.Optional(t.String({ default: "UTC", description: "IANA time zone, e.g. Europe/Berlin" })),
      topics: t.Optional(t.String({ maxLength: 2000, description: "What the digest covers" })),
      knowledge_base_ids: Kbs,
    },
    { additionalProperties: false },
  ),
  triggers: ["schedule", "manual"],
  input: ANY_INPUT,
  systemPrompt: "You write a short daily digest for a team: search the documents for each topic, and report what is new or important in a few bullet points per topic, citing passages as [n].",
  tools: ["search_knowledge"],
  build: (id, s: { cron?: string; timezone?: string; topics?: string }) => ({
    nodes: [
      { id: "schedule", type: "trigger.schedule", config: { cron: s.cron ?? "0 8 * * 1-5", timezone: s.timezone ?? "UTC" } },
      { id: "manual", type: "trigger.manual", config: {} },
      answer(id, `Write the digest for {{ execution.started_at }}. Topics: ${s.topics?.replaceAll("{{", "{ {") ?? "the team's recent documents"}.`),
      output,
    ],
    edges: [{ from: "schedule", to: "agent" }, { from: "manual", to: "agent" }, ...chain("agent", "output")],
  }),
};

export const TEMPLATES: Template<any>[] = [knowledgeAssistant, documentSummarizer, meetingNotes, ticketTriage, dailyDigest];

/** A custom agent's workflow: started by hand, the agent answers, its answer is the output. */
export const customGraph = (agentId: string): Graph => ({
  nodes: [{ id: "start", type: "trigger.manual", config: {} }, answer(agentId, "{{ input.query ? input.query : input }}"), output],
  edges: chain("start", "agent", "output"),
});
