// Inbound webhook deliveries (spec §4.7): find the trigger by path, verify a signature when the
// trigger has a secret, then store the delivery and its execution in one transaction; the
// workflow runs afterwards. A repeated delivery id answers with the first delivery.
import { and, eq } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/log";
import { AppError, invalid, unauthorized } from "../../platform/errors";
import type { WorkflowEngine } from "./engine/engine";
import { signatureProblem } from "./signatures";
import type { TriggerRow } from "./triggers";
import { webhookDeliveries, workflows, workflowTriggers, workflowVersions } from "./table";

/** Headers a workflow sees: what identifies the sender and the event, never credentials. */
export const SAFE_HEADERS = [
  "content-type",
  "user-agent",
  "x-github-event",
  "x-github-delivery",
  "x-github-hook-id",
  "x-gitlab-event",
  "x-gitea-event",
  "webhook-id",
  "webhook-timestamp",
  "idempotency-key",
  "x-request-id",
] as const;

const MAX_KEY_CHARS = 256;

export interface Delivery {
  status: "accepted" | "ignored" | "duplicate";
  deliveryId: string;
  executionId: string | null;
}

type Headers = { get(name: string): string | null };

export function createWebhooks(deps: { db: Db; clock: Clock; log: Logger; engine: WorkflowEngine }) {
  const { db, clock, log, engine } = deps;

  const first = (triggerId: string, key: string): Delivery | undefined => {
    const d = db
      .select({ id: webhookDeliveries.id, executionId: webhookDeliveries.executionId })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.triggerId, triggerId), eq(webhookDeliveries.deliveryKey, key)))
      .get();
    return d ? { status: "duplicate", deliveryId: d.id, executionId: d.executionId } : undefined;
  };

  return {
    /** The webhook trigger of an active version at this path. */
    find: (path: string): TriggerRow | undefined =>
      db
        .select()
        .from(workflowTriggers)
        .where(and(eq(workflowTriggers.webhookPath, path), eq(workflowTriggers.type, "webhook")))
        .get(),

    /** 401 unless the delivery is signed with the trigger's secret (when it has one). */
    verify(trigger: TriggerRow, headers: Headers, raw: Uint8Array) {
      const secret = trigger.config.secret;
      if (typeof secret !== "string" || secret === "") return;
      const problem = signatureProblem(secret, headers, raw, clock.now());
      if (problem) throw unauthorized(problem);
    },

    receive(trigger: TriggerRow, body: Record<string, unknown>, headers: Headers): Delivery {
      const key = headers.get("webhook-id") ?? headers.get("x-github-delivery") ?? headers.get("idempotency-key");
      if (key !== null && (key.length === 0 || key.length > MAX_KEY_CHARS)) throw invalid(`A delivery id (webhook-id, X-GitHub-Delivery, Idempotency-Key) must be 1 to ${MAX_KEY_CHARS} characters`);
      const event = typeof body.event === "string" ? body.event : headers.get("x-github-event");
      const events = trigger.config.events as string[] | undefined;
      const wanted = !events || events.length === 0 || (event !== null && events.includes(event));
      const safe: Record<string, string> = {};
      for (const h of SAFE_HEADERS) {
        const v = headers.get(h);
        if (v !== null) safe[h] = v.slice(0, 1024);
      }
      const now = new Date(clock.now());

      let outcome: Delivery;
      try {
        outcome = db.transaction((tx) => {
          if (key !== null) {
            const dup = first(trigger.id, key);
            if (dup) return dup;
          }
          const deliveryId = crypto.randomUUID();
          let executionId: string | null = null;
          if (wanted) {
            const version = tx.select({ graph: workflowVersions.graph }).from(workflowVersions).where(eq(workflowVersions.id, trigger.versionId)).get();
            if (!version) throw new Error(`version ${trigger.versionId} of trigger ${trigger.id} is gone`);
            const agentId = tx.select({ agentId: workflows.agentId }).from(workflows).where(eq(workflows.id, trigger.workflowId)).get()?.agentId ?? null;
            executionId = engine.create(
              {
                productId: trigger.productId,
                workflowId: trigger.workflowId,
                versionId: trigger.versionId,
                agentId,
                graph: null,
                graphForNodes: version.graph,
                triggerType: "webhook",
                triggerId: trigger.id,
                triggerNodeId: trigger.nodeId,
                input: { body, headers: safe, event },
                createdBy: null,
              },
              tx,
            ).id;
          }
          tx.insert(webhookDeliveries)
            .values({ id: deliveryId, triggerId: trigger.id, deliveryKey: key, event, status: wanted ? "accepted" : "ignored", executionId, receivedAt: now })
            .run();
          return { status: wanted ? "accepted" : "ignored", deliveryId, executionId } satisfies Delivery;
        });
      } catch (e) {
        // The same delivery id committed by a concurrent writer: answer with that one.
        const dup = key !== null && String(e).includes("UNIQUE") ? first(trigger.id, key) : undefined;
        if (dup) return dup;
        log.error("webhook.store_failed", { trigger: trigger.id, error: String(e) });
        throw new AppError(503, "ServiceUnavailable", "The delivery could not be stored; retry shortly", undefined, { "Retry-After": "5" });
      }
      if (outcome.status === "accepted") engine.wake();
      return outcome;
    },
  };
}

export type Webhooks = ReturnType<typeof createWebhooks>;
