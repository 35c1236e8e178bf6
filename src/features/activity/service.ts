// The organization's security trail: super-admin overrides and sign-ins.
import { and, desc, eq } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { activityEvents } from "./table";

export type ActivityEvent = Omit<typeof activityEvents.$inferInsert, "id" | "createdAt">;
export type ActivityRow = typeof activityEvents.$inferSelect;

export function createActivityService({ db, clock }: { db: Db; clock: Clock }) {
  return {
    record(event: ActivityEvent) {
      db.insert(activityEvents).values({ ...event, createdAt: new Date(clock.now()) }).run();
    },
    list(organizationId: string, action: ActivityRow["action"] | undefined, limit: number): ActivityRow[] {
      const where = action ? and(eq(activityEvents.organizationId, organizationId), eq(activityEvents.action, action)) : eq(activityEvents.organizationId, organizationId);
      return db.select().from(activityEvents).where(where).orderBy(desc(activityEvents.id)).limit(limit).all();
    },
  };
}

export type ActivityService = ReturnType<typeof createActivityService>;
