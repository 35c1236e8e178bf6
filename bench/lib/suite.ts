// The shape of a benchmark suite and of its measurements; `measurement()` computes ratio and PASS/MISS.
import { resolve } from "node:path";
import { round } from "./stats";

export type Status = "PASS" | "MISS" | "INFO" | "MISSING";

/** A goal on the Hearth value itself ("value") or on Hearth/baseline ("ratio"). */
export interface Goal {
  on: "value" | "ratio";
  /** "max": lower is better and must stay ≤ limit; "min": higher is better and must stay ≥ limit. */
  kind: "max" | "min";
  limit: number;
}

export interface Measurement {
  suite: string;
  name: string;
  unit: string;
  /** Hearth's figure. */
  value: number | null;
  /** The same figure for the baseline measured in the same run (null when there is none). */
  baseline: number | null;
  baselineName: string | null;
  ratio: number | null;
  goal: Goal | null;
  goalText: string;
  status: Status;
  note?: string;
  /** Raw figures (samples summaries, repetitions) kept in the JSON only. */
  details?: unknown;
}

export interface MeasurementInput {
  name: string;
  unit: string;
  value: number;
  baseline?: number;
  baselineName?: string;
  goal?: Goal;
  /** Forces MISSING (e.g. the figure was taken on a stand-in for what the goal is about). */
  missing?: boolean;
  note?: string;
  details?: unknown;
  digits?: number;
}

export function goalText(g: Goal | null, unit: string): string {
  if (!g) return "-";
  const op = g.kind === "max" ? "≤" : "≥";
  return g.on === "ratio" ? `${op} ${g.limit}× base` : `${op} ${g.limit} ${unit}`;
}

/** Builds a measurement row for `suite`, with ratio (value/baseline) and status from its goal. */
export function measurement(suite: string, m: MeasurementInput): Measurement {
  const ratio = m.baseline !== undefined && Number.isFinite(m.baseline) && m.baseline !== 0 ? m.value / m.baseline : Number.NaN;
  const goal = m.goal ?? null;
  let status: Status = "INFO";
  if (m.missing) status = "MISSING";
  else if (goal) {
    const x = goal.on === "ratio" ? ratio : m.value;
    if (!Number.isFinite(x)) status = "MISSING";
    else status = (goal.kind === "max" ? x <= goal.limit : x >= goal.limit) ? "PASS" : "MISS";
  }
  return {
    suite,
    name: m.name,
    unit: m.unit,
    value: round(m.value, m.digits ?? 1),
    baseline: m.baseline === undefined ? null : round(m.baseline, m.digits ?? 1),
    baselineName: m.baselineName ?? null,
    ratio: round(ratio, 2),
    goal,
    goalText: goalText(goal, m.unit),
    status,
    ...(m.note ? { note: m.note } : {}),
    ...(m.details !== undefined ? { details: m.details } : {}),
  };
}

/** The models dir suites give Hearth: HEARTH_MODELS_DIR, else ../shared/models beside the project at `root`. */
export const modelsDirOf = (root: string): string => process.env.HEARTH_MODELS_DIR ?? resolve(root, "../shared/models");

export interface SuiteContext {
  /** Repository root (absolute). */
  root: string;
  /** The bun executable running the benchmark, used to run servers from source. */
  bun: string;
  /** A private temporary directory for this run, removed afterwards. */
  tmp: string;
  /** The models Hearth is given (modelsDirOf). */
  modelsDir: string;
  /** Progress line on stderr (the table goes to stdout). */
  log(msg: string): void;
  /** Command-line flags after the suite names, e.g. "--no-build". */
  flags: ReadonlySet<string>;
}

export interface SuiteResult {
  measurements: Measurement[];
  /** What was measured how (binary or source, commands, machine facts), kept in the JSON and printed as notes. */
  info: Record<string, unknown>;
  notes: string[];
}

export interface Suite {
  /** Lower-case name used on the command line: `bun bench/run.ts <name>`. */
  name: string;
  description: string;
  run(ctx: SuiteContext): Promise<SuiteResult>;
}
