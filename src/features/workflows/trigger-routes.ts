// HTTP routes of spec §4.6 (triggers): list, read with last runs, a version's manual triggers, and
// run a manual trigger. Only static segments after /api/agent-base/triggers, so a later
// /api/agent-base/{id} (agents) never captures them.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { errors, IdParams, ok, okList } from "../../platform/http/schemas";
import { pageOf } from "../../platform/http/pagination";
import type { ExecutionRow } from "./engine/runner";
import { executionView } from "./executions";
import { ExecutionView } from "./model";
import { ExecuteTriggerBody, RunTriggerBody, TriggerDetail, TriggersQuery, TriggerView, VersionParams } from "./trigger-model";
import type { TriggerService } from "./trigger-service";

export function triggerRoutes({ auth, triggers }: { auth: AuthPlugin; triggers: TriggerService }) {
  const started = (e: ExecutionRow) => ({ success: true as const, message: "Execution queued", data: executionView(e) });
  const Started = { 202: ok(t.Omit(ExecutionView, ["nodes"])), ...errors(400, 401, 404, 409, 413, 422, 429) };
  const runDetail = "Runs a manual trigger of an active version → 202 with the execution (trigger type manual, id = the trigger id). A schedule or webhook trigger: 409.";

  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["Triggers"] } })
    .get("/api/agent-base/triggers", ({ principal, query }) => ({ success: true as const, ...pageOf(triggers.list(principal, query.product_id), query) }), {
      auth: "any",
      query: TriggersQuery,
      response: { 200: okList(TriggerView), ...errors(400, 401, 404, 429) },
      detail: { summary: "The trigger nodes of the workspace's active workflow versions (a token's own workspace when product_id is left out)" },
    })
    .post(
      "/api/agent-base/triggers",
      ({ principal, body, set }) => {
        set.status = 202;
        return started(triggers.run(principal, body.trigger_id, body.input));
      },
      { auth: "any:strict", body: RunTriggerBody, response: Started, detail: { summary: "Run a manual trigger", description: runDetail } },
    )
    .get(
      "/api/agent-base/triggers/manual/version/:versionId",
      ({ principal, params }) => ({ success: true as const, data: triggers.manualOfVersion(principal, params.versionId) }),
      {
        auth: "any",
        params: VersionParams,
        response: { 200: ok(t.Array(TriggerView)), ...errors(400, 401, 404, 429) },
        detail: { summary: "A version's manual triggers (also of an inactive version; ids are those the trigger has while active)" },
      },
    )
    .get("/api/agent-base/triggers/:id", ({ principal, params }) => ({ success: true as const, data: triggers.one(principal, params.id) }), {
      auth: "any",
      params: IdParams,
      response: { 200: ok(TriggerDetail), ...errors(400, 401, 404, 429) },
      detail: { summary: "One trigger with its latest executions, newest first" },
    })
    .post(
      "/api/agent-base/triggers/:id/execute",
      ({ principal, params, body, set }) => {
        set.status = 202;
        return started(triggers.run(principal, params.id, body?.input));
      },
      { auth: "any:strict", params: IdParams, body: t.Optional(ExecuteTriggerBody), response: Started, detail: { summary: "Run a manual trigger", description: runDetail } },
    );
}
