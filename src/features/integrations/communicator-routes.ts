// Inbound endpoints of communicator integrations (spec §4.7), configured automatically with the
// integration: POST /api/communicator/webhook/{integration id} takes Slack Events API deliveries.
import { Elysia, t } from "elysia";
import { readPending } from "../../platform/http/body";
import { requestMeta } from "../../platform/http/request-meta";
import { errors, Uuid } from "../../platform/http/schemas";
import type { Communicators } from "./communicators";

export function communicatorRoutes({ communicators }: { communicators: Communicators }) {
  return new Elysia()
    .post(
      "/api/communicator/botframework/:id/messages",
      async ({ params, body, request }) => {
        // No `auth` option: the activity's JWT, checked against the integration's keys, is the credential.
        const activity = (await readPending(body)) as Record<string, unknown>;
        const r = await communicators.botframework(params.id, request.headers.get("authorization"), activity);
        if (r.queued) communicators.wake();
        return { success: true as const, message: r.queued ? "Accepted; the answer follows in the conversation" : "Ignored" };
      },
      {
        params: t.Object({ id: Uuid }),
        response: { 200: t.Object({ success: t.Literal(true), message: t.String() }), ...errors(400, 401, 404) },
        detail: { tags: ["Webhooks"], summary: "Bot Framework activities for a teams integration (JWT verified with the integration's jwks or signing secret)", security: [] },
      },
    )
    .post(
    "/api/communicator/webhook/:id",
    async ({ params, body, request }) => {
      // No `auth` option: Slack's signature over the raw body is the credential.
      const payload = (await readPending(body)) as Record<string, unknown>;
      const r = communicators.receive(params.id, request.headers, requestMeta(request).rawBody ?? new Uint8Array(), payload);
      if (r.queued) communicators.wake();
      if (r.challenge !== undefined) return { challenge: r.challenge };
      return { success: true as const, message: r.queued ? "Accepted; the answer follows in the thread" : "Ignored" };
    },
    {
      params: t.Object({ id: Uuid }),
      response: { 200: t.Union([t.Object({ challenge: t.String() }), t.Object({ success: t.Literal(true), message: t.String() })]), ...errors(400, 401, 404) },
      detail: {
        tags: ["Webhooks"],
        summary: "Deliveries of a communicator: Slack Events API (signing secret v0; url_verification answered) or a Mattermost outgoing webhook (its token)",
        description: "Set this URL as the Request URL of your Slack app's Event Subscriptions (message.channels, app_mention). Acknowledged at once; the answer of the integration's agent (config.agent_id) is posted in the message's thread.",
        security: [],
      },
    },
  );
}
