// /health: a registry of named checks; a missing optional part never makes Hearth unhealthy.
export type CheckState = { status: "ok"; detail?: string } | { status: "loading"; detail?: string } | { status: "unavailable"; reason: string };

export type CheckName = "database" | "vectors" | "embedder" | "transcriber" | "llm";

export interface HealthRegistry {
  set(name: CheckName, probe: () => CheckState | Promise<CheckState>): void;
  report(): Promise<Record<CheckName, CheckState>>;
}

const NOT_BUILT: CheckState = { status: "unavailable", reason: "not part of this Hearth build yet" };

export function createHealthRegistry(): HealthRegistry {
  const probes = new Map<CheckName, () => CheckState | Promise<CheckState>>();
  const names: CheckName[] = ["database", "vectors", "embedder", "transcriber", "llm"];
  return {
    set: (name, probe) => void probes.set(name, probe),
    async report() {
      const entries = await Promise.all(
        names.map(async (n): Promise<[CheckName, CheckState]> => {
          const probe = probes.get(n);
          if (!probe) return [n, NOT_BUILT];
          try {
            return [n, await probe()];
          } catch (e) {
            return [n, { status: "unavailable", reason: (e as Error).message }];
          }
        }),
      );
      return Object.fromEntries(entries) as Record<CheckName, CheckState>;
    },
  };
}
