// Small built-in nodes: transform and condition (JSONata), output, delay (a durable timer) and
// approval (waits for a person).
import { t } from "elysia";
import type { NodeType } from "./node-type";

export const transformNode: NodeType<{ expression: unknown }> = {
  type: "transform",
  description: "Evaluates a JSONata expression over {input, nodes, execution}; the result is the output.",
  config: t.Object({ expression: t.Unknown({ description: 'JSONata, e.g. "{ \\"title\\": nodes.fetch.output.body.title }"' }) }, { additionalProperties: false }),
  expressionKeys: ["expression"],
  run: async (c) => ({ output: c.expression }),
};

export const conditionNode: NodeType<{ expression: unknown }> = {
  type: "condition",
  description: 'Evaluates a JSONata expression; edges with when "true" or "false" follow the result, the other branch is skipped.',
  config: t.Object({ expression: t.Unknown({ description: 'JSONata, e.g. "input.body.priority = \\"high\\""' }) }, { additionalProperties: false }),
  expressionKeys: ["expression"],
  branches: ["true", "false"],
  run: async (c) => {
    const result = Boolean(c.expression) && !(Array.isArray(c.expression) && c.expression.length === 0);
    return { output: { result }, branch: String(result) };
  },
};

export const outputNode: NodeType<{ value?: unknown }> = {
  type: "output",
  description: "Its value is the execution's output (else the last node's output is).",
  final: true,
  config: t.Object({ value: t.Optional(t.Unknown()) }, { additionalProperties: false }),
  run: async (c) => ({ output: c.value ?? null }),
};

/** Delays longer than a year are a typo, not a plan. */
const MAX_DELAY_MS = 366 * 24 * 3600 * 1000;

export const delayNode: NodeType<{ ms?: number; until?: string }> = {
  type: "delay",
  description: "Waits ms milliseconds or until a time; the wait survives a restart.",
  config: t.Object(
    {
      ms: t.Optional(t.Integer({ minimum: 0, maximum: MAX_DELAY_MS })),
      until: t.Optional(t.String({ format: "date-time", description: "ISO 8601 time to wait for" })),
    },
    { additionalProperties: false },
  ),
  check: (c) => (c.ms === undefined && c.until === undefined ? "set ms or until" : c.ms !== undefined && c.until !== undefined ? "set ms or until, not both" : undefined),
  run: async (c, ctx) => {
    const until = c.until !== undefined ? Date.parse(c.until) : ctx.clock.now() + (c.ms ?? 0);
    if (Number.isNaN(until)) throw new Error(`until "${c.until}" is not a date`);
    if (until - ctx.clock.now() > MAX_DELAY_MS) throw new Error("a delay may last at most a year");
    return { wait: { kind: "timer", until } };
  },
};

export const approvalNode: NodeType<{ message: string }> = {
  type: "approval",
  description: "Waits for a person: POST /api/workflow/{id}/continue with {input} approves (input becomes the output); stop rejects.",
  config: t.Object({ message: t.String({ minLength: 1, maxLength: 4000 }) }, { additionalProperties: false }),
  run: async (c) => ({ wait: { kind: "approval", message: c.message } }),
};
