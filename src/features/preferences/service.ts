// AI preferences per user (set through MCP's update_my_ai_preferences, used by agents and chat):
// a token acts for the user who created it.
import { eq } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { aiPreferences } from "./table";

export interface Preferences {
  language?: string;
  tone?: string;
  answer_length?: string;
  notes?: string;
}

export function createPreferencesService({ db, clock, userOfToken }: { db: Db; clock: Clock; userOfToken: (tokenId: string) => string | undefined }) {
  const get = (userId: string): Preferences => {
    const row = db.select().from(aiPreferences).where(eq(aiPreferences.userId, userId)).get();
    if (!row) return {};
    return Object.fromEntries(Object.entries({ language: row.language, tone: row.tone, answer_length: row.answerLength, notes: row.notes }).filter(([, v]) => v)) as Preferences;
  };

  return {
    get,

    /** Sets the given fields; an empty string clears one. */
    update(userId: string, patch: Preferences): Preferences {
      const now = new Date(clock.now());
      const current = get(userId);
      const next = { ...current, ...patch };
      const row = { language: next.language || null, tone: next.tone || null, answerLength: next.answer_length || null, notes: next.notes || null, updatedAt: now };
      db.insert(aiPreferences).values({ userId, ...row }).onConflictDoUpdate({ target: aiPreferences.userId, set: row }).run();
      return get(userId);
    },

    /** The preferences as one line for a system prompt, for a user id or the id of one of their tokens. */
    promptLine(actorId: string): string | undefined {
      const p = get(userOfToken(actorId) ?? actorId);
      const parts = [p.language && `answer in ${p.language}`, p.tone && `tone: ${p.tone}`, p.answer_length && `length: ${p.answer_length}`, p.notes && `notes: ${p.notes}`].filter(Boolean);
      return parts.length ? parts.join("; ") : undefined;
    },
  };
}

export type PreferencesService = ReturnType<typeof createPreferencesService>;
