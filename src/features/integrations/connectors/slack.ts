// Slack Web API (or a Slack-compatible server at base_url): post messages, list channels.
import { t } from "elysia";
import { apiCall, baseUrl, type CallContext, type Connector } from "./connector";

/** Slack answers 200 with {ok: false, error} for its own errors: those become one line. */
async function slack(method: string, body: unknown, ctx: CallContext) {
  const { data } = await apiCall("Slack", `${baseUrl(ctx.config, "https://slack.com/api")}/${method}`, { method: "POST", headers: { authorization: `Bearer ${ctx.credentials.bot_token}` }, body, signal: ctx.signal, allow: ctx.allow });
  const d = data as { ok?: boolean; error?: string };
  if (!d?.ok) throw new Error(`Slack ${method} failed: ${d?.error ?? "no reason given"}`);
  return d as any;
}

export const slackConnector: Connector = {
  type: "slack",
  description: "Slack: post messages to channels and threads, list channels",
  config: t.Object({ base_url: t.Optional(t.String({ description: "Web API root (default https://slack.com/api)" })), agent_id: t.Optional(t.String({ format: "uuid", description: "The agent that answers messages (communicator)" })) }, { additionalProperties: false }),
  credentials: t.Object({ bot_token: t.String({ minLength: 1, maxLength: 1000 }), signing_secret: t.Optional(t.String({ minLength: 1, maxLength: 1000 })) }, { additionalProperties: false }),
  async check(ctx) {
    const d = await slack("auth.test", {}, ctx);
    return `Slack answers as ${d.user ?? "the bot"} in ${d.team ?? "its workspace"}`;
  },
  tools: [
    {
      name: "send_message",
      description: "Post a message to a Slack channel (or a thread of it with thread_ts).",
      input: t.Object({ channel: t.String({ minLength: 1, maxLength: 200 }), text: t.String({ minLength: 1, maxLength: 40_000 }), thread_ts: t.Optional(t.String({ maxLength: 64 })) }, { additionalProperties: false }),
      async run(args, ctx) {
        const d = await slack("chat.postMessage", { channel: args.channel, text: args.text, ...(args.thread_ts ? { thread_ts: args.thread_ts } : {}) }, ctx);
        return { text: `Posted to ${d.channel} (ts ${d.ts})`, data: { channel: d.channel, ts: d.ts } };
      },
    },
    {
      name: "list_channels",
      description: "List the Slack channels the bot can see.",
      input: t.Object({ limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, default: 200 })) }, { additionalProperties: false }),
      async run(args, ctx) {
        const d = await slack("conversations.list", { limit: args.limit ?? 200, exclude_archived: true }, ctx);
        const channels = (d.channels ?? []).map((c: any) => ({ id: c.id, name: c.name }));
        return { text: channels.map((c: any) => `#${c.name} (${c.id})`).join("\n") || "No channels.", data: { channels } };
      },
    },
  ],
};
