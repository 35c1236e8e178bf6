// Operational endpoints: /health and the super-admin backup.
import { Elysia, t, type Static } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { Clock } from "../../platform/clock";
import { whileWorking } from "../../platform/http/long-request";
import { errors, ok, Int } from "../../platform/http/schemas";
import { isOrgAdmin, type Principal } from "../../platform/auth/principal";
import type { CheckState } from "../../platform/parts";
import { createAdminBackups, type BackupResult } from "./backup";
import { Checks } from "./model";

const statusesOnly = (checks: Record<string, CheckState>) => Object.fromEntries(Object.entries(checks).map(([name, c]) => [name, { status: c.status }]));

export function systemRoutes(deps: { auth: AuthPlugin; health: { report(): Promise<Record<string, CheckState>> }; version: string; dataDir: string; clock: Clock; backup: (file: string) => Promise<BackupResult>; backupKeep: number }) {
  const backups = createAdminBackups({ ...deps, keep: deps.backupKeep });
  return new Elysia()
    .use(deps.auth)
    .get(
      "/health",
      async ({ principal }) => {
        // "optional" auth: anonymous callers (monitors) have no principal.
        const caller = principal as Principal | undefined;
        const checks = await deps.health.report();
        // Details name model paths, the Ollama URL and failure reasons: operators' business only.
        // (The parts list reports DESIGN's five checks; the response schema holds Hearth to that.)
        const shown = (caller && isOrgAdmin(caller) ? checks : statusesOnly(checks)) as Static<typeof Checks>;
        return { status: "ok" as const, version: deps.version, checks: shown };
      },
      {
        auth: "optional",
        response: {
          200: t.Object({
            status: t.Literal("ok"),
            version: t.String(),
            checks: Checks,
          }),
          ...errors(401),
        },
        detail: {
          tags: ["Operations"],
          summary: "Liveness and the state of each part",
          description: "Anyone gets ok, loading or unavailable per part; an owner's or admin's session also gets each part's detail or reason.",
          security: [{}, { session: [] }],
        },
      },
    )
    .post(
      "/api/admin/backup",
      async ({ principal, request, server, set }) => {
        const data = await whileWorking(server, request, () => backups.take(principal));
        set.status = 201;
        return { success: true as const, message: "Backup written and checked", data };
      },
      {
        auth: "jwt",
        // Nothing to choose: the copy goes into <data dir>/backups/ (a field sent is refused, not ignored).
        body: t.Optional(t.Object({}, { additionalProperties: false })),
        response: { 201: ok(t.Object({ file: t.String(), bytes: Int(), integrity: t.Literal("ok") }), "Created"), ...errors(401, 403, 422, 429) },
        detail: { tags: ["Operations"], summary: "Write a checked copy of the database to <data dir>/backups/" },
      },
    );
}
