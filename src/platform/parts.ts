// The parts of Hearth with a life of their own: what each starts, stops and reports to /health.
// services.ts lists them once; `startParts` runs the list in order, `stopParts` in reverse (a part
// stops before the parts it uses), and `checkParts` asks every part's checks at once, reporting
// them in list order. A new part is one entry in that list: nothing else in services.ts, the
// health report or its schema changes.

/** A /health check's answer. A missing optional part (a model, the model server) is never an error. */
export type CheckState = { status: "ok"; detail?: string } | { status: "loading"; detail?: string } | { status: "unavailable"; reason: string };

export type Check = () => CheckState | Promise<CheckState>;

export interface Part {
  /** Names the part in logs. */
  readonly name: string;
  start?(): void;
  stop?(): void | Promise<void>;
  /** Named /health checks (names are unique across parts). */
  readonly checks?: Readonly<Record<string, Check>>;
}

export function startParts(parts: readonly Part[]): void {
  for (const part of parts) part.start?.();
}

export async function stopParts(parts: readonly Part[]): Promise<void> {
  for (const part of [...parts].reverse()) await part.stop?.();
}

/** Every part's checks, asked at once; a check that throws reports `unavailable` with its message. */
export async function checkParts(parts: readonly Part[]): Promise<Record<string, CheckState>> {
  const checks = parts.flatMap((part) => Object.entries(part.checks ?? {}));
  const states = await Promise.all(
    checks.map(async ([, check]): Promise<CheckState> => {
      try {
        return await check();
      } catch (e) {
        return { status: "unavailable", reason: (e as Error).message };
      }
    }),
  );
  return Object.fromEntries(checks.map(([name], i) => [name, states[i]!]));
}
