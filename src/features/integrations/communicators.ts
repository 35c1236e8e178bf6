// Team chat that talks to agents: a Slack Events API delivery (signing secret v0 checked with its
// timestamp window; url_verification answered) is stored as a durable job before it is
// acknowledged; the job asks the integration's agent (or, without one, a knowledge assistant of
// the workspace) and posts the answer back in the message's thread.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/log";
import { notFound, unauthorized, invalid } from "../../platform/errors";
import { jobKind, type JobQueue } from "../../platform/jobs/queue";
import type { AllowList } from "../../platform/net/safe-fetch";
import type { TokenPrincipal } from "../../platform/auth/principal";
import type { AgentsService } from "../agents/service";
import type { ExecutionsService } from "../workflows/executions";
import { ENDED, type WorkflowEngine } from "../workflows/engine/engine";
import type { IntegrationsService } from "./service";
import { communicatorEvents, integrations } from "./table";
import { eq } from "drizzle-orm";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";

export const COMMUNICATOR_JOB = jobKind<SlackMessage>("communicator.message");
const WINDOW_S = 5 * 60;
const ANSWER_WAIT_MS = 120_000;

interface SlackMessage {
  integrationId: string;
  channel: string;
  text: string;
  threadTs: string;
  /** Bot Framework: where the reply goes (from the verified activity). */
  serviceUrl?: string;
}

export function createCommunicators(deps: { db: Db; clock: Clock; log: Logger; jobs: JobQueue; integrations: IntegrationsService; agents: AgentsService; executions: ExecutionsService; engine: WorkflowEngine; allow: AllowList; organizationOf(productId: string): string | undefined }) {
  const { db, clock, integrations: service } = deps;

  const verifySlack = (secret: string, headers: Headers, raw: Uint8Array) => {
    const ts = headers.get("x-slack-request-timestamp") ?? "";
    const sig = headers.get("x-slack-signature") ?? "";
    if (!/^\d+$/.test(ts) || Math.abs(clock.now() / 1000 - Number(ts)) > WINDOW_S) throw unauthorized("Slack request timestamp missing or outside the 5-minute window");
    const expected = `v0=${createHmac("sha256", secret).update(`v0:${ts}:`).update(raw).digest("hex")}`;
    if (sig.length !== expected.length || !timingSafeEqual(Buffer.from(sig), Buffer.from(expected))) throw unauthorized("Slack signature does not match");
  };

  /** The workspace an answer is given in, acting with the rights of a USER token there. */
  const principalFor = (productId: string): TokenPrincipal => ({ kind: "token", userId: "", organizationId: deps.organizationOf(productId) ?? "", productId, tokenId: "communicator", tokenRole: "USER" });

  const answer = async (m: SlackMessage, signal: AbortSignal) => {
    const row = db.select().from(integrations).where(eq(integrations.id, m.integrationId)).get();
    if (!row || row.status !== "active") return;
    const agentId = typeof row.config.agent_id === "string" ? row.config.agent_id : undefined;
    let text: string;
    const candidate = agentId ? deps.agents.byId(agentId) : undefined;
    // Only an agent of the integration's workspace (of its organization for a global one) answers,
    // whatever a config stored before that was checked says: another's would answer from its knowledge.
    const home = candidate && (row.productId ? candidate.productId === row.productId : deps.organizationOf(candidate.productId) === row.organizationId);
    const agent = candidate && candidate.status === "active" && home ? candidate : undefined;
    const productId = agent?.productId ?? row.productId;
    if (!productId) text = "This Slack integration has no agent (config.agent_id) and no workspace to answer from.";
    else {
      const p = principalFor(productId);
      const execution = agent
        ? (await deps.agents.invoke(p, agent.id, { query: m.text }, false, "communicator")).execution
        : deps.executions.begin({
            productId,
            workflowId: null,
            versionId: null,
            graph: ASSISTANT_GRAPH,
            graphForNodes: ASSISTANT_GRAPH,
            mode: "node",
            triggerType: "communicator",
            triggerId: row.id,
            input: { query: m.text },
            createdBy: null,
          });
      const ended = await deps.engine.until(execution.id, ENDED, ANSWER_WAIT_MS);
      const out = ended.output as { text?: string } | null;
      if (ended.status === "succeeded") text = out?.text ?? JSON.stringify(out);
      else {
        // The reason names Hearth's own servers and addresses: it goes to the log and the
        // execution, where the operators look, not to everyone in the channel.
        deps.log.warn("communicator.no_answer", { integration: row.id, execution: execution.id, status: ended.status, error: ended.error });
        text = `Sorry, I could not answer this time. (Hearth execution ${execution.id} says why.)`;
      }
    }
    if (signal.aborted) return;
    const send = service.toolsOf(row).find((t) => t.name === "send_message")!;
    // The reply goes in the message's thread: thread_ts on Slack, root_id on Mattermost.
    const thread = row.type === "slack" ? { thread_ts: m.threadTs } : row.type === "teams" ? { reply_to_id: m.threadTs } : { root_id: m.threadTs };
    await service.run(row, send, { channel: m.channel, text, ...thread }, signal, deps.allow, m.serviceUrl);
  };

  deps.jobs.register(COMMUNICATOR_JOB, (payload, ctx) => answer(payload, ctx.signal), { concurrency: 2 });

  /** Stores the message as a durable job unless its event id was taken before (a retried delivery). */
  const queue = (row: typeof integrations.$inferSelect, eventId: string, message: Omit<SlackMessage, "integrationId">) =>
    db.transaction((tx) => {
      const fresh = tx.insert(communicatorEvents).values({ integrationId: row.id, eventId, receivedAt: new Date(clock.now()) }).onConflictDoNothing().returning().all();
      if (fresh.length === 0) return { queued: false };
      deps.jobs.enqueue(COMMUNICATOR_JOB, { integrationId: row.id, ...message }, { tx, group: row.productId ?? row.organizationId });
      return { queued: true };
    });

  /** A Mattermost outgoing webhook (Content Type: application/json): its token checked, the post queued. */
  const mattermost = (row: typeof integrations.$inferSelect, body: Record<string, any>) => {
    const expected = service.credentialsOf(row).webhook_token;
    const token = String(body.token ?? "");
    if (typeof expected !== "string" || token.length !== expected.length || !timingSafeEqual(Buffer.from(token), Buffer.from(expected))) throw unauthorized("Mattermost outgoing-webhook token does not match");
    if (typeof body.post_id !== "string" || typeof body.channel_id !== "string" || typeof body.text !== "string") throw invalid("Not a Mattermost outgoing-webhook post");
    const trigger = String(body.trigger_word ?? "");
    const text = (trigger && body.text.startsWith(trigger) ? body.text.slice(trigger.length) : body.text).trim();
    return queue(row, body.post_id, { channel: body.channel_id, text, threadTs: body.root_id || body.post_id });
  };

  /** A Bot Framework activity: its JWT verified with the integration's keys, its message queued. */
  const botframework = async (integrationId: string, authorization: string | null, activity: Record<string, any>) => {
    const row = db.select().from(integrations).where(eq(integrations.id, integrationId.toLowerCase())).get();
    if (!row || row.type !== "teams" || row.status !== "active") throw notFound("Communicator");
    const creds = service.credentialsOf(row) as { jwks?: JSONWebKeySet; signing_secret?: string };
    const token = /^Bearer\s+(.+)$/i.exec(authorization ?? "")?.[1];
    if (!token) throw unauthorized("Bot Framework activities carry Authorization: Bearer <JWT>");
    const key = creds.jwks ? createLocalJWKSet(creds.jwks) : creds.signing_secret ? new TextEncoder().encode(creds.signing_secret) : undefined;
    if (!key) throw unauthorized("This Teams integration has no jwks or signing_secret to verify activities");
    let claims: Record<string, unknown>;
    try {
      claims = (await jwtVerify(token, key as Parameters<typeof jwtVerify>[1], { audience: String(row.config.app_id), currentDate: new Date(clock.now()), clockTolerance: 300 })).payload;
    } catch (e) {
      throw unauthorized(`Bot Framework token refused: ${(e as Error).message}`);
    }
    // The reply, with the access token, goes to the activity's serviceUrl: it must be the one the
    // token names (Bot Framework's rule), not one a replayed or altered body chose.
    if (claims.serviceurl !== undefined && claims.serviceurl !== activity.serviceUrl) throw unauthorized("The activity's serviceUrl is not the one its token names");
    if (activity.type !== "message" || typeof activity.text !== "string" || !activity.conversation?.id || typeof activity.id !== "string") return { queued: false };
    return queue(row, activity.id, { channel: activity.conversation.id, text: activity.text.replace(/<at>[^<]*<\/at>\s*/g, "").trim(), threadTs: activity.id, serviceUrl: activity.serviceUrl });
  };

  return {
    botframework,

    /** One delivery of a communicator: verified, then answered (Slack url_verification) or queued durably. */
    receive(integrationId: string, headers: Headers, raw: Uint8Array, body: Record<string, any>): { challenge?: string; queued: boolean } {
      const row = db.select().from(integrations).where(eq(integrations.id, integrationId.toLowerCase())).get();
      if (!row || (row.type !== "slack" && row.type !== "mattermost") || row.status !== "active") throw notFound("Communicator");
      if (row.type === "mattermost") return mattermost(row, body);
      const secret = service.credentialsOf(row).signing_secret;
      if (typeof secret !== "string") throw unauthorized("This Slack integration has no signing_secret in its credentials");
      verifySlack(secret, headers, raw);
      if (body.type === "url_verification") return { challenge: String(body.challenge ?? ""), queued: false };
      if (body.type !== "event_callback" || typeof body.event_id !== "string") throw invalid("Not a Slack event_callback");
      const e = body.event ?? {};
      // Bots (Hearth's own replies included) and edits are not questions.
      if ((e.type !== "message" && e.type !== "app_mention") || e.bot_id || e.subtype || typeof e.text !== "string" || !e.channel) return { queued: false };
      return queue(row, body.event_id, { channel: e.channel, text: e.text.replace(/<@[A-Z0-9]+>\s*/g, "").trim(), threadTs: e.thread_ts ?? e.ts });
    },
    wake: () => deps.jobs.wake(),
  };
}

/** Without an agent: a knowledge assistant over the workspace's documents (retrieval-only without a model). */
const ASSISTANT_GRAPH = {
  nodes: [
    {
      id: "agent",
      type: "agent",
      config: {
        system_prompt: "You answer the team's chat questions from its documents: search them, answer briefly, cite passages as [n].",
        tools: ["search_knowledge"],
        input: "{{ input.query }}",
        max_steps: 3,
        fallback: "retrieval",
      },
    },
  ],
  edges: [],
};

export type Communicators = ReturnType<typeof createCommunicators>;
