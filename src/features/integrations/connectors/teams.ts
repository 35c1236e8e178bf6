// Microsoft Teams through the Bot Framework Connector API: replies to a conversation at the
// activity's serviceUrl. On a closed network the bearer token is given in the credentials (the
// public Bot Framework's OAuth endpoint cannot be reached from here).
import { t } from "elysia";
import { apiCall, type Connector } from "./connector";

export const teams: Connector = {
  type: "teams",
  description: "Microsoft Teams (Bot Framework): answers in conversations, replies through the Connector API",
  config: t.Object(
    {
      app_id: t.String({ minLength: 1, maxLength: 200, description: "The bot's app id (the audience of inbound tokens)" }),
      service_url: t.Optional(t.String({ description: "Connector service root when sending without an inbound activity" })),
      agent_id: t.Optional(t.String({ format: "uuid" })),
    },
    { additionalProperties: false },
  ),
  credentials: t.Object(
    {
      access_token: t.String({ minLength: 1, maxLength: 8000, description: "Bearer token for the Connector API" }),
      jwks: t.Optional(t.Object({ keys: t.Array(t.Record(t.String(), t.Unknown())) }, { description: "Public keys that sign inbound activities (JWKS)" })),
      signing_secret: t.Optional(t.String({ minLength: 16, maxLength: 1000, description: "HS256 secret signing inbound activities (instead of jwks)" })),
    },
    { additionalProperties: false },
  ),
  urlFields: ["service_url"],
  tools: [
    {
      name: "send_message",
      description: "Post a message to a Teams conversation (a reply to an activity with reply_to_id).",
      // No service_url argument: the access token goes only to config.service_url, or to the
      // serviceUrl of an activity whose token named it (a reply); a caller naming its own server
      // would receive the token.
      input: t.Object({ channel: t.String({ minLength: 1, maxLength: 500, description: "Conversation id" }), text: t.String({ minLength: 1, maxLength: 28_000 }), reply_to_id: t.Optional(t.String({ maxLength: 500 })) }, { additionalProperties: false }),
      async run(args, ctx) {
        const root = String(ctx.replyServiceUrl ?? ctx.config.service_url ?? "").replace(/\/+$/, "");
        if (!root) throw new Error("no service_url: set config.service_url (replies to an activity go to its serviceUrl)");
        const path = `/v3/conversations/${encodeURIComponent(args.channel)}/activities${args.reply_to_id ? `/${encodeURIComponent(args.reply_to_id)}` : ""}`;
        const { data } = await apiCall("Bot Framework", `${root}${path}`, { method: "POST", headers: { authorization: `Bearer ${ctx.credentials.access_token}` }, body: { type: "message", text: args.text, ...(args.reply_to_id ? { replyToId: args.reply_to_id } : {}) }, signal: ctx.signal, allow: ctx.allow });
        return { text: `Posted (${(data as { id?: string })?.id ?? "ok"})`, data: { id: (data as { id?: string })?.id ?? null } };
      },
    },
  ],
};
