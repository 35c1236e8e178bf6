// HTTP route of spec §4.7: POST /api/webhook/{custom_path}. No auth: the path (and the signature,
// when the trigger has a secret) is the credential. Unknown paths, the per-path rate limit of an
// unsigned trigger and non-JSON bodies are answered before the body is read. A delivery to a
// signed trigger pays the path's budget once its signature holds, so unsigned requests to a known
// path cannot spend the real sender's budget; refused deliveries (an unknown path, a bad
// signature) are paid from their client address's budget instead.
import { Elysia, t } from "elysia";
import { invalid, notFound } from "../../platform/errors";
import { errors } from "../../platform/http/schemas";
import { requestMeta } from "../../platform/http/request-meta";
import { readPending } from "../../platform/http/body";
import { chargeRequest, type LimitDecision, type RateLimiter } from "../../platform/rate-limit";
import type { TriggerRow } from "./triggers";
import { WebhookAnswer, WebhookParams } from "./trigger-model";
import type { Webhooks } from "./webhooks";

const PREFIX = "/api/webhook/";
const tooManyDeliveries = (d: LimitDecision) => `Too many deliveries to this webhook; retry in ${d.reset} s`;
const tooManyRefused = (d: LimitDecision) => `Too many refused webhook deliveries from this address; retry in ${d.reset} s`;

export function webhookRoutes({ webhooks, limiter }: { webhooks: Webhooks; limiter: RateLimiter }) {
  const found = new WeakMap<Request, TriggerRow>();

  /** A refused delivery is paid from its client address's budget (429 past it, instead of the refusal). */
  const refused = (request: Request, headers: Record<string, unknown>) =>
    chargeRequest(limiter, `refused:${requestMeta(request).ip ?? "unknown"}`, "default", headers, tooManyRefused);
  const payPath = (trigger: TriggerRow, headers: Record<string, unknown>) => chargeRequest(limiter, `path:${trigger.webhookPath}`, "default", headers, tooManyDeliveries);

  return new Elysia().post(
    "/api/webhook/:custom_path",
    async ({ request, body, set }) => {
      const trigger = found.get(request);
      if (!trigger) throw notFound("Webhook");
      // No `auth` option here: the transform's checks ran before the read; the body is read now.
      const payload = await readPending(body);
      if (typeof payload !== "object" || payload === null || Array.isArray(payload)) throw invalid("A webhook delivery must be a JSON object; the request had no body");
      try {
        webhooks.verify(trigger, request.headers, requestMeta(request).rawBody ?? new Uint8Array());
      } catch (e) {
        refused(request, set.headers);
        throw e;
      }
      if (webhooks.signed(trigger)) payPath(trigger, set.headers);
      const d = await webhooks.receive(trigger, payload as Record<string, unknown>, request.headers);
      const message = d.status === "accepted" ? "Delivery accepted" : d.status === "ignored" ? "ignored" : "duplicate: this delivery was received before";
      return { success: true as const, message, data: { delivery_id: d.deliveryId, execution_id: d.executionId } };
    },
    {
      // Before the body is read (parse only wraps it, app.ts): an unknown path is a 404, paid from
      // the client address's budget; an unsigned trigger's path pays its own budget, whoever sends;
      // a body that is not JSON is a 400.
      transform({ request, set }) {
        const meta = requestMeta(request);
        const trigger = webhooks.find(meta.path.slice(PREFIX.length));
        if (!trigger) {
          refused(request, set.headers);
          throw notFound("Webhook");
        }
        if (!webhooks.signed(trigger)) payPath(trigger, set.headers);
        const type = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
        if (type !== "application/json" && !type.endsWith("+json")) throw invalid("A webhook delivery must be a JSON object sent with Content-Type: application/json");
        found.set(request, trigger);
      },
      params: WebhookParams,
      body: t.Record(t.String(), t.Unknown(), { description: "Any JSON object; the workflow's input is {body, headers (a safe subset), event}" }),
      response: { 200: WebhookAnswer, ...errors(400, 401, 404, 413, 429, 503) },
      detail: {
        tags: ["Webhooks"],
        summary: "Deliver an event to the workflow whose trigger.webhook node has this path",
        description:
          "Stored first, answered 200, run afterwards. With a secret on the trigger the delivery must be signed (Standard Webhooks or GitHub's X-Hub-Signature-256), else 401. " +
          "A repeated webhook-id / X-GitHub-Delivery / Idempotency-Key answers with the first delivery and starts nothing; an event outside the trigger's `events` is answered `ignored`. " +
          "Limited per path (HEARTH_WEBHOOK_RATE_LIMIT a minute; a signed trigger's deliveries count once their signature holds); refused deliveries (unknown path, bad signature) are limited per client address alike.",
        security: [],
      },
    },
  );
}
