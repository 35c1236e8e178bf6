// Prints benchmark measurements as an aligned text table and writes them as JSON.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Measurement } from "./suite";

function fmt(x: number | null, digits = 1): string {
  if (x === null) return "-";
  if (Math.abs(x) >= 100) return Math.round(x).toLocaleString("en-US");
  return x.toFixed(digits);
}

/** The table for one suite's measurements, one row each, columns padded to fit. */
export function formatTable(rows: readonly Measurement[]): string {
  const header = ["measurement", "unit", "hearth", "baseline", "ratio", "goal", "result"];
  const body = rows.map((m) => [
    m.name,
    m.unit,
    fmt(m.value),
    fmt(m.baseline),
    m.ratio === null ? "-" : `${m.ratio.toFixed(2)}×`,
    m.goalText,
    m.status,
  ]);
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((r) => [...r[i]!].length)));
  const numeric = new Set([2, 3, 4]);
  const line = (r: string[]) =>
    r
      .map((cell, i) => {
        const pad = " ".repeat(widths[i]! - [...cell].length);
        return numeric.has(i) ? pad + cell : cell + pad;
      })
      .join("  ")
      .trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [line(header), rule, ...body.map(line)].join("\n");
}

/** One line counting PASS/MISS/MISSING over every measurement that has a goal. */
export function formatSummary(rows: readonly Measurement[]): string {
  const count = (s: string) => rows.filter((m) => m.status === s).length;
  return `goals: ${count("PASS")} PASS, ${count("MISS")} MISS, ${count("MISSING")} MISSING (${count("INFO")} informational rows)`;
}

export function writeJson(file: string, data: unknown) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}
