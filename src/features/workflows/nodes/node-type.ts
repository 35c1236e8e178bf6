// The one interface every node type implements, and the registry the engine looks types up in.
// A new capability (agents, integrations) adds a node by registering a module; the engine never
// branches on a type name.
import type { TSchema } from "elysia";
import { problemText, validatorFor } from "../../../platform/validator";
import type { Logger } from "../../../platform/log";
import type { Clock } from "../../../platform/clock";

export interface NodeContext {
  executionId: string;
  nodeRunId: string;
  nodeId: string;
  productId: string;
  organizationId: string;
  /** Who started the execution (a user or token id), for the audit trail of what nodes do. */
  startedBy: string | null;
  attempt: number;
  /** `<execution id>:<node id>`: the same on every attempt and after a crash, so side effects can be deduplicated. */
  idempotencyKey: string;
  /** Aborts on stop, timeout or shutdown. */
  signal: AbortSignal;
  log: Logger;
  clock: Clock;
  /** Streams a piece of text as a `token` event (llm and agent nodes). */
  token(delta: string): void;
  /** The execution's input, for trigger nodes. */
  executionInput: Record<string, unknown>;
}

/** The workspace a graph belongs to. */
export interface Workspace {
  productId: string;
  organizationId: string;
}

/** Whether a config value is given as it is (not a template the run resolves). */
export const literal = (v: unknown): v is string => typeof v === "string" && !v.includes("{{");

/** What a node's run ends with: an output (and the branch it chose), or a wait. */
export type NodeOutcome =
  | { output: unknown; branch?: string }
  | { wait: { kind: "timer"; until: number } | { kind: "approval"; message: string } };

export interface NodeType<C = Record<string, unknown>> {
  type: string;
  description: string;
  /** TypeBox schema of the config (after templates resolve, strings may be anything before). */
  config: TSchema;
  /** Trigger nodes start executions (their output is the execution's input); the kind of start. */
  trigger?: "manual" | "schedule" | "webhook";
  /** Its output is the execution's output (else the last node's). */
  final?: boolean;
  /** The branches its run may choose; only its edges may carry `when`, naming one of them. */
  branches?: string[];
  /** Config keys that hold secrets: never shown (SECRET_KEPT instead); a save sending SECRET_KEPT keeps the value. */
  secretKeys?: string[];
  /** Config keys whose strings are expressions themselves (not templates); checked at save. */
  expressionKeys?: string[];
  /** Further checks at save (a cron that does not parse, a bad URL): a message, or undefined. */
  check?(config: C): string | undefined;
  /**
   * What the config names that the workflow's workspace lacks (an agent, an integration, a
   * knowledge base), checked at save and at start like the rest: a message, or undefined. Values
   * that are templates (`{{ }}`) are the run's to check.
   */
  references?(config: C, workspace: Workspace): string | undefined;
  /** May this type run alone through POST /api/nodes/execute? (default yes) */
  single?: boolean;
  run(config: C, ctx: NodeContext): Promise<NodeOutcome>;
}

/** A failure worth another attempt (5xx, 429, timeouts, network errors), optionally after `retryAfterMs`. */
export class RetryableError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export function createNodeRegistry(types: NodeType<any>[]) {
  const byType = new Map<string, { def: NodeType<any> }>();
  const add = (def: NodeType<any>) => {
    if (byType.has(def.type)) throw new Error(`node type ${def.type} registered twice`);
    byType.set(def.type, { def });
  };
  types.forEach(add);
  return {
    add,
    get: (type: string) => byType.get(type)?.def,
    has: (type: string) => byType.has(type),
    list: () => [...byType.values()].map((e) => e.def),
    /**
     * The first schema error of a config, as "path: message", or undefined. At save (`templated`),
     * a value that is still a `{{ }}` template is not judged: its type is known only at run time.
     */
    configError(type: string, config: unknown, templated = false): string | undefined {
      const entry = byType.get(type);
      if (!entry) return `unknown node type "${type}"`;
      for (const e of validatorFor(entry.def.config).Errors(config)) {
        if (templated && typeof e.value === "string" && e.value.includes("{{")) continue;
        return problemText(e, "config");
      }
      return undefined;
    },
  };
}

export type NodeRegistry = ReturnType<typeof createNodeRegistry>;
