// Operational endpoints: /health and the super-admin backup.
import { Elysia, t } from "elysia";
import { join } from "node:path";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { Clock } from "../../platform/clock";
import { forbidden } from "../../platform/errors";
import { errors, ok } from "../../platform/http/schemas";
import type { HealthRegistry } from "./health";
import type { BackupResult } from "./backup";

const Check = t.Object({ status: t.UnionEnum(["ok", "loading", "unavailable"]), detail: t.Optional(t.String()), reason: t.Optional(t.String()) });

export function systemRoutes(deps: { auth: AuthPlugin; health: HealthRegistry; version: string; dataDir: string; clock: Clock; backup: (file: string) => BackupResult }) {
  return new Elysia()
    .use(deps.auth)
    .get("/health", async () => ({ status: "ok" as const, version: deps.version, checks: await deps.health.report() }), {
      response: {
        200: t.Object({
          status: t.Literal("ok"),
          version: t.String(),
          checks: t.Object({ database: Check, vectors: Check, embedder: Check, transcriber: Check, llm: Check }),
        }),
      },
      detail: { tags: ["Operations"], summary: "Liveness and the state of each part", security: [] },
    })
    .post(
      "/api/admin/backup",
      ({ principal, set }) => {
        if (principal.kind !== "user" || !principal.isSuperAdmin) throw forbidden("Only super admins may take backups");
        const stamp = new Date(deps.clock.now()).toISOString().replace(/[:.]/g, "-");
        const result = deps.backup(join(deps.dataDir, "backups", `hearth-${stamp}.db`));
        set.status = 201;
        return { success: true as const, message: "Backup written and checked", data: result };
      },
      {
        auth: "jwt",
        response: { 201: ok(t.Object({ file: t.String(), bytes: t.Integer(), integrity: t.Literal("ok") }), "Created"), ...errors(401, 403, 429) },
        detail: { tags: ["Operations"], summary: "Write a checked copy of the database to <data dir>/backups/" },
      },
    );
}
