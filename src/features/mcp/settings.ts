// MCP settings per workspace, read on every tools/list and changed by SYSTEM tokens.
import { eq } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { mcpSettings } from "./table";

export interface McpSettings {
  disabled_tools: string[];
  default_top_k: number;
}

export function createMcpSettings({ db, clock }: { db: Db; clock: Clock }) {
  const listeners = new Set<(productId: string) => void>();
  const get = (productId: string): McpSettings => {
    const row = db.select().from(mcpSettings).where(eq(mcpSettings.productId, productId)).get();
    return { disabled_tools: row?.disabledTools ?? [], default_top_k: row?.defaultTopK ?? 5 };
  };
  return {
    get,
    update(productId: string, patch: Partial<McpSettings>): McpSettings {
      const next = { ...get(productId), ...patch };
      const row = { disabledTools: [...new Set(next.disabled_tools)], defaultTopK: next.default_top_k, updatedAt: new Date(clock.now()) };
      db.insert(mcpSettings).values({ productId, ...row }).onConflictDoUpdate({ target: mcpSettings.productId, set: row }).run();
      for (const l of listeners) l(productId);
      return get(productId);
    },
    onChange: (l: (productId: string) => void) => void listeners.add(l),
  };
}

export type McpSettingsService = ReturnType<typeof createMcpSettings>;
