// Calls one node: its config resolved against what the execution knows so far and checked, its
// context given, its output kept within MAX_OUTPUT_CHARS, and the call ended at its timeout or abort.
import type { Clock } from "../../../platform/clock";
import type { Logger } from "../../../platform/log";
import { resolveConfig } from "../expressions";
import type { GraphNodeDef } from "../model";
import type { NodeContext, NodeOutcome, NodeRegistry } from "../nodes/node-type";
import type { EventLog } from "./events";
import { NodeTimeoutError } from "./retry";
import type { ExecutionRow, NodeRunRow } from "./runner";

/** A node's output larger than this (as JSON) fails the node: executions are not a blob store. */
export const MAX_OUTPUT_CHARS = 1024 * 1024;

export interface InvokeDeps {
  clock: Clock;
  log: Logger;
  registry: NodeRegistry;
  events: EventLog;
}

export interface NodeCall {
  def: GraphNodeDef;
  exec: ExecutionRow;
  run: NodeRunRow;
  /** The execution's workspace's organization ("" when the workspace is gone). */
  organizationId: string;
  /** What the node's expressions see. */
  scope: Record<string, unknown>;
  /** Aborted by the runner (stop, another node failed, shutdown) and here at the node's timeout. */
  abort: AbortController;
}

/** Runs the node; an output comes back as it will be stored (a JSON copy). Throws what failed it. */
export async function invokeNode(d: InvokeDeps, call: NodeCall): Promise<NodeOutcome> {
  const { def, exec, run, abort } = call;
  const type = d.registry.get(def.type);
  const timer = def.timeout_ms ? setTimeout(() => abort.abort(new NodeTimeoutError(`timed out after ${def.timeout_ms} ms`)), def.timeout_ms) : undefined;
  try {
    if (!type) throw new Error(`unknown node type "${def.type}"`);
    const config = await resolveConfig(def.config ?? {}, type.expressionKeys ?? [], call.scope);
    const problem = d.registry.configError(def.type, config);
    if (problem) throw new Error(problem + emptyTemplates(def.config ?? {}, config));
    const ctx: NodeContext = {
      executionId: exec.id,
      nodeRunId: run.id,
      nodeId: def.id,
      productId: exec.productId,
      organizationId: call.organizationId,
      startedBy: exec.createdBy,
      attempt: run.attempt,
      idempotencyKey: `${exec.id}:${def.id}`,
      signal: abort.signal,
      log: d.log,
      clock: d.clock,
      token: (delta) => {
        if (!abort.signal.aborted) d.events.token(exec.id, { node_id: def.id, delta });
      },
      executionInput: exec.input as Record<string, unknown>,
    };
    const outcome = await raceAbort(type.run(config, ctx), abort.signal);
    if ("wait" in outcome) return outcome;
    const text = JSON.stringify(outcome.output ?? null);
    if (text.length > MAX_OUTPUT_CHARS) throw new Error(`output is larger than ${MAX_OUTPUT_CHARS} characters of JSON`);
    return { output: JSON.parse(text), branch: outcome.branch };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Which of a config's templates came out empty, as a clause for the config's error: "config.url
 * must be a string" says little when the cause is `{{ input.nope }}` finding nothing.
 */
function emptyTemplates(raw: Record<string, unknown>, resolved: Record<string, unknown>): string {
  const empty = Object.entries(raw).filter(([key, value]) => typeof value === "string" && value.includes("{{") && (resolved[key] === null || resolved[key] === undefined || resolved[key] === ""));
  return empty.map(([key, value]) => `; ${key} came out ${JSON.stringify(resolved[key] ?? null)} from ${JSON.stringify(value)}`).join("");
}

/** A node that ignores its signal still ends the moment it is aborted. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
