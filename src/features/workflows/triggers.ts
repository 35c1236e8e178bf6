// The trigger table: the trigger nodes of each workflow's active version, kept in step with every
// activation, with the next fire time of schedules and the unique path of webhooks.
import { and, eq, notInArray } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import { conflict } from "../../platform/errors";
import { triggerNodes } from "./graph";
import type { Graph } from "./model";
import type { NodeRegistry } from "./nodes/node-type";
import { nextFire } from "./nodes/triggers";
import { workflowTriggers } from "./table";

export type TriggerRow = typeof workflowTriggers.$inferSelect;

/** A trigger's id is stable across versions: derived from its workflow and node id. */
export function triggerId(workflowId: string, nodeId: string): string {
  const h = new Bun.CryptoHasher("sha256").update(`${workflowId}:${nodeId}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/**
 * Makes the workflow's triggers those of `graph` (its newly active version). A webhook path that
 * another workflow uses is a 409; a schedule keeps its next fire time when its cron is unchanged.
 */
export function syncTriggers(tx: Tx, registry: NodeRegistry, w: { id: string; productId: string }, versionId: string, graph: Graph, now: number) {
  const found = triggerNodes(graph, registry);
  const keep = found.map((f) => triggerId(w.id, f.node.id));
  const stale = tx.delete(workflowTriggers).where(and(eq(workflowTriggers.workflowId, w.id), keep.length ? notInArray(workflowTriggers.id, keep) : undefined));
  stale.run();
  for (const { node, kind } of found) {
    const id = triggerId(w.id, node.id);
    const config = (node.config ?? {}) as Record<string, unknown>;
    const before = tx.select().from(workflowTriggers).where(eq(workflowTriggers.id, id)).get();
    const path = kind === "webhook" ? String(config.path) : null;
    if (path) {
      const holder = tx.select({ id: workflowTriggers.id }).from(workflowTriggers).where(eq(workflowTriggers.webhookPath, path)).get();
      if (holder && holder.id !== id) throw conflict(`Node "${node.id}": webhook path "${path}" is used by another workflow; choose another`);
    }
    let nextRunAt: Date | null = null;
    if (kind === "schedule") {
      const same = before && before.type === "schedule" && before.config.cron === config.cron && before.config.timezone === config.timezone;
      nextRunAt = same && before.nextRunAt ? before.nextRunAt : nullableDate(nextFire(String(config.cron), config.timezone as string | undefined, now));
    }
    const row = { productId: w.productId, workflowId: w.id, versionId, nodeId: node.id, type: kind, config, webhookPath: path, nextRunAt };
    if (before) tx.update(workflowTriggers).set(row).where(eq(workflowTriggers.id, id)).run();
    else tx.insert(workflowTriggers).values({ id, ...row, lastRunAt: null, createdAt: new Date(now) }).run();
  }
}

const nullableDate = (ms: number | null) => (ms === null ? null : new Date(ms));
