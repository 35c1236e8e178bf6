// Mattermost on your network (API v4, bot or personal access token): post messages and threads,
// list the channels of a team.
import { t } from "elysia";
import { apiCall, baseUrl, type Connector } from "./connector";

export const mattermost: Connector = {
  type: "mattermost",
  description: "Mattermost on your network: post messages (and thread replies), list a team's channels",
  config: t.Object({ base_url: t.String({ minLength: 1, description: "e.g. https://chat.internal" }), team_id: t.Optional(t.String({ minLength: 1, maxLength: 64 })), agent_id: t.Optional(t.String({ format: "uuid" })) }, { additionalProperties: false }),
  credentials: t.Object({ bot_token: t.String({ minLength: 1, maxLength: 1000 }), webhook_token: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "The outgoing webhook's token (communicator)" })) }, { additionalProperties: false }),
  async check(ctx) {
    const { data } = await apiCall("Mattermost", `${baseUrl(ctx.config, "")}/api/v4/users/me`, { headers: { authorization: `Bearer ${ctx.credentials.bot_token}` }, signal: ctx.signal, allow: ctx.allow });
    return `Mattermost answers as ${(data as { username?: string }).username ?? "the bot"}`;
  },
  tools: [
    {
      name: "send_message",
      description: "Post a message to a Mattermost channel (a thread reply with root_id).",
      input: t.Object({ channel: t.String({ minLength: 1, maxLength: 64, description: "Channel id" }), text: t.String({ minLength: 1, maxLength: 16_000 }), root_id: t.Optional(t.String({ maxLength: 64 })) }, { additionalProperties: false }),
      async run(args, ctx) {
        const { data } = await apiCall("Mattermost", `${baseUrl(ctx.config, "")}/api/v4/posts`, { method: "POST", headers: { authorization: `Bearer ${ctx.credentials.bot_token}` }, body: { channel_id: args.channel, message: args.text, ...(args.root_id ? { root_id: args.root_id } : {}) }, signal: ctx.signal, allow: ctx.allow });
        return { text: `Posted (${(data as { id: string }).id})`, data: { id: (data as { id: string }).id } };
      },
    },
    {
      name: "list_channels",
      description: "List the channels of the integration's Mattermost team that the bot belongs to.",
      input: t.Object({}, { additionalProperties: false }),
      async run(_args, ctx) {
        if (!ctx.config.team_id) throw new Error("the integration has no team_id in its config");
        const { data } = await apiCall("Mattermost", `${baseUrl(ctx.config, "")}/api/v4/users/me/teams/${encodeURIComponent(String(ctx.config.team_id))}/channels`, { headers: { authorization: `Bearer ${ctx.credentials.bot_token}` }, signal: ctx.signal, allow: ctx.allow });
        const channels = (data as any[]).map((c) => ({ id: c.id, name: c.name, display_name: c.display_name }));
        return { text: channels.map((c) => `${c.display_name} (${c.id})`).join("\n") || "No channels.", data: { channels } };
      },
    },
  ],
};
