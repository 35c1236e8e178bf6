// Trigger nodes: how an execution starts (by hand, on a schedule, from a webhook). Each passes the
// execution's input on as its output.
import { t } from "elysia";
import { Cron } from "croner";
import type { NodeType } from "./node-type";

const passInput: NodeType["run"] = async (_config, ctx) => ({ output: ctx.executionInput });

export const manualTrigger: NodeType = {
  type: "trigger.manual",
  description: "Started by hand or through the API; its output is the execution's input.",
  trigger: "manual",
  config: t.Object({ input_schema: t.Optional(t.Record(t.String(), t.Unknown(), { description: "JSON Schema of the expected input (documentation for callers)" })) }, { additionalProperties: false }),
  run: passInput,
};

/** Validates a cron pattern in a time zone; the message croner gives, or undefined. */
export function cronProblem(cron: string, timezone: string | undefined): string | undefined {
  try {
    new Intl.DateTimeFormat("en", { timeZone: timezone ?? "UTC" });
  } catch {
    return `timezone "${timezone}" is not an IANA time zone (e.g. Europe/Berlin)`;
  }
  try {
    const job = new Cron(cron, { timezone: timezone ?? "UTC", paused: true });
    if (!job.nextRun()) return `cron "${cron}" never fires`;
    job.stop();
    return undefined;
  } catch (e) {
    return `cron "${cron}": ${(e as Error).message}`;
  }
}

/** The first fire strictly after `after` (ms), in the trigger's time zone. */
export function nextFire(cron: string, timezone: string | undefined, after: number): number | null {
  const job = new Cron(cron, { timezone: timezone ?? "UTC", paused: true });
  const next = job.nextRun(new Date(after));
  job.stop();
  return next ? next.getTime() : null;
}

export const scheduleTrigger: NodeType<{ cron: string; timezone?: string }> = {
  type: "trigger.schedule",
  description: "Fires on a cron schedule (seconds optional) in an IANA time zone.",
  trigger: "schedule",
  config: t.Object(
    {
      cron: t.String({ minLength: 1, maxLength: 200, description: 'e.g. "0 8 * * 1-5" (08:00 on weekdays)' }),
      timezone: t.Optional(t.String({ minLength: 1, maxLength: 64, default: "UTC", description: "IANA time zone, e.g. Europe/Berlin" })),
    },
    { additionalProperties: false },
  ),
  check: (c) => cronProblem(c.cron, c.timezone),
  run: passInput,
};

export const WEBHOOK_PATH = /^[A-Za-z0-9][A-Za-z0-9_.-]{7,127}$/;

export const webhookTrigger: NodeType<{ path: string; secret?: string; events?: string[] }> = {
  type: "trigger.webhook",
  description: "Fires on POST /api/webhook/{path}; the input is {body, headers, event}.",
  trigger: "webhook",
  secretKeys: ["secret"],
  config: t.Object(
    {
      path: t.String({
        pattern: WEBHOOK_PATH.source,
        error: "config.path must be 8 to 128 characters: letters, digits, _ . or -, starting with a letter or digit",
        description: "Unique on this Hearth; 8 to 128 letters, digits, _ . - (without a secret the path is the credential: make it long and random)",
      }),
      secret: t.Optional(t.String({ minLength: 16, maxLength: 512, description: "Standard Webhooks (whsec_...) or GitHub signing secret; unsigned deliveries are then refused" })),
      events: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, description: "Accept only these event types (body.event or X-GitHub-Event)" })),
    },
    { additionalProperties: false },
  ),
  run: passInput,
};
