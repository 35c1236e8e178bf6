// Inbound webhook deliveries (spec §4.7): find the trigger by path, verify a signature when the
// trigger has a secret, then store the delivery and its execution in one transaction; the
// workflow runs afterwards. A repeated delivery id answers with the first delivery.
import { and, eq } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/log";
import { invalid, unauthorized, unavailable } from "../../platform/errors";
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
type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

interface Pending {
  trigger: TriggerRow;
  key: string | null;
  event: string | null;
  wanted: boolean;
  input: Record<string, unknown>;
  resolve(d: Delivery): void;
  reject(e: unknown): void;
}

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

  const pending: Pending[] = [];
  const signed = (trigger: TriggerRow) => typeof trigger.config.secret === "string" && trigger.config.secret !== "";

  const service = {
    /** The webhook trigger of an active version at this path. */
    find: (path: string): TriggerRow | undefined =>
      db
        .select()
        .from(workflowTriggers)
        .where(and(eq(workflowTriggers.webhookPath, path), eq(workflowTriggers.type, "webhook")))
        .get(),

    /** 401 unless the delivery is signed with the trigger's secret (when it has one). */
    /** Whether deliveries to this trigger must be signed (it has a secret). */
    signed,

    verify(trigger: TriggerRow, headers: Headers, raw: Uint8Array) {
      if (!signed(trigger)) return;
      const problem = signatureProblem(trigger.config.secret as string, headers, raw, clock.now());
      if (problem) throw unauthorized(problem);
    },

    /**
     * Stores the delivery (and its execution unless filtered out) and resolves once that is
     * committed. Deliveries arriving together share one transaction: one fsync for many, so intake
     * is not bound by the disk's sync rate while every 200 still means "on disk".
     */
    receive(trigger: TriggerRow, body: Record<string, unknown>, headers: Headers): Promise<Delivery> {
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
      return new Promise((resolve, reject) => {
        pending.push({ trigger, key, event, wanted, input: { body, headers: safe, event }, resolve, reject });
        if (pending.length === 1) setImmediate(flush);
      });
    },
  };

  /** Writes one delivery inside `tx`; a key already stored (also earlier in the same batch) is a duplicate. */
  function store(tx: Tx, p: Pending, now: Date): Delivery {
    if (p.key !== null) {
      const dup = first(p.trigger.id, p.key);
      if (dup) return dup;
    }
    const deliveryId = crypto.randomUUID();
    let executionId: string | null = null;
    if (p.wanted) {
      const { trigger } = p;
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
          input: p.input,
          createdBy: null,
        },
        tx,
      ).id;
    }
    tx.insert(webhookDeliveries)
      .values({ id: deliveryId, triggerId: p.trigger.id, deliveryKey: p.key, event: p.event, status: p.wanted ? "accepted" : "ignored", executionId, receivedAt: now })
      .run();
    return { status: p.wanted ? "accepted" : "ignored", deliveryId, executionId };
  }

  function flush() {
    const batch = pending.splice(0);
    const now = new Date(clock.now());
    let results: Delivery[] | undefined;
    try {
      results = db.transaction((tx) => batch.map((p) => store(tx, p, now)));
    } catch {
      // One bad delivery must not fail the others: each alone, in its own transaction.
    }
    if (results) batch.forEach((p, i) => p.resolve(results[i]!));
    else {
      for (const p of batch) {
        try {
          p.resolve(db.transaction((tx) => store(tx, p, now)));
        } catch (e) {
          // The same delivery id committed by another writer: answer with that one.
          const dup = p.key !== null && String(e).includes("UNIQUE") ? first(p.trigger.id, p.key) : undefined;
          if (dup) p.resolve(dup);
          else {
            log.error("webhook.store_failed", { trigger: p.trigger.id, error: String(e) });
            p.reject(unavailable("The delivery could not be stored; retry shortly", 5));
          }
        }
      }
    }
    if (results?.some((r) => r.status === "accepted") || !results) engine.wake();
  }

  return service;
}

export type Webhooks = ReturnType<typeof createWebhooks>;
