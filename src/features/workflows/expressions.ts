// `{{ expr }}` templates in node configs: JSONata expressions over {input, nodes, execution},
// compiled once, checked at save, evaluated with a work and depth budget, a slice of work at a
// time with the event loop let in between. No JavaScript runs.
import type jsonataModule from "jsonata";

type Expression = ReturnType<typeof jsonataModule>;

// Loaded at the first expression, not at start (an idle Hearth without workflows never needs it).
let jsonataFn: typeof jsonataModule | undefined;
const jsonata: typeof jsonataModule = (source, options) => {
  jsonataFn ??= require("jsonata") as typeof jsonataModule;
  return jsonataFn(source, options);
};

/** An expression that works longer than this fails its node (counted between JSONata's steps). */
export const EXPRESSION_TIMEOUT_MS = 1000;
/**
 * An expression lets the event loop run after this much work: JSONata's steps are async but
 * resolve in microtasks, so a long one would otherwise hold every request and every other node
 * until it ends (15 nodes at their budget: 15 s without an answer).
 */
export const EXPRESSION_SLICE_MS = 4;
const EXPRESSION_STACK = 300;
const CACHE_MAX = 5000;

/** JSONata calls the function bound to this name before each step and awaits what it returns. */
const STEP_HOOK = Symbol.for("jsonata.__evaluate_entry");

/** Work done by one evaluation so far, and when its current slice began (keyed by its root frame). */
const budgets = new WeakMap<object, { sliceStart: number; spent: number }>();

/** Before each step: after a slice of work, a turn of the event loop; past the budget, the end. */
function beforeStep(_expr: unknown, _input: unknown, environment: { base: object }): Promise<void> | undefined {
  const now = performance.now();
  const budget = budgets.get(environment.base);
  if (!budget) {
    budgets.set(environment.base, { sliceStart: now, spent: 0 });
    return undefined;
  }
  if (now - budget.sliceStart < EXPRESSION_SLICE_MS) return undefined;
  budget.spent += now - budget.sliceStart;
  if (budget.spent > EXPRESSION_TIMEOUT_MS) throw { code: "H1012", message: `Evaluation stopped after ${EXPRESSION_TIMEOUT_MS} ms of work; check for an endless loop or a very large input` };
  return new Promise<void>((resolve) => setImmediate(resolve)).then(() => void (budget.sliceStart = performance.now()));
}

export class ExpressionError extends Error {}

const cache = new Map<string, Expression>();

/** Compiles (cached) or throws ExpressionError with JSONata's message and position. */
export function compile(source: string): Expression {
  const hit = cache.get(source);
  if (hit) return hit;
  let expr: Expression;
  try {
    expr = jsonata(source, { stack: EXPRESSION_STACK } as jsonataModule.JsonataOptions);
    expr.assign(STEP_HOOK as unknown as string, beforeStep);
  } catch (e) {
    throw new ExpressionError(describe(e, source));
  }
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(source, expr);
  return expr;
}

function describe(e: unknown, source: string): string {
  const err = e as { message?: string; position?: number; code?: string };
  const where = typeof err.position === "number" ? ` at character ${err.position}` : "";
  return `expression "${source.length > 80 ? `${source.slice(0, 77)}...` : source}": ${err.message ?? String(e)}${where}`;
}

/** Evaluates one expression against `scope`; undefined results become null (JSON has no undefined). */
export async function evaluate(source: string, scope: unknown): Promise<unknown> {
  const expr = compile(source);
  try {
    const value = await expr.evaluate(scope, undefined);
    return normalise(value);
  } catch (e) {
    throw new ExpressionError(describe(e, source));
  }
}

// JSONata returns arrays tagged as sequences and may return functions; both are cut back to JSON.
function normalise(value: unknown): unknown {
  if (value === undefined || typeof value === "function") return null;
  return JSON.parse(JSON.stringify(value) ?? "null");
}

interface Part {
  text?: string;
  expr?: string;
}

/** Splits a string into literal text and `{{ }}` expressions in one linear scan. */
export function parts(s: string): Part[] | null {
  let from = s.indexOf("{{");
  if (from < 0) return null;
  const out: Part[] = [];
  let i = 0;
  while (from >= 0) {
    const to = s.indexOf("}}", from + 2);
    if (to < 0) break;
    if (from > i) out.push({ text: s.slice(i, from) });
    out.push({ expr: s.slice(from + 2, to).trim() });
    i = to + 2;
    from = s.indexOf("{{", i);
  }
  if (i < s.length) out.push({ text: s.slice(i) });
  return out;
}

/** Every expression in a config value (nested objects and arrays included). */
export function expressionsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") {
    for (const p of parts(value) ?? []) if (p.expr !== undefined) out.push(p.expr);
  } else if (Array.isArray(value)) value.forEach((v) => expressionsIn(v, out));
  else if (value && typeof value === "object") Object.values(value).forEach((v) => expressionsIn(v, out));
  return out;
}

/** Checks every expression of a config compiles; returns the first problem or undefined. */
export function checkExpressions(value: unknown): string | undefined {
  for (const source of expressionsIn(value)) {
    if (source === "") return "an empty {{ }} expression";
    try {
      compile(source);
    } catch (e) {
      return (e as Error).message;
    }
  }
  return undefined;
}

/**
 * Resolves templates: a string that is exactly one `{{ expr }}` becomes the value (any type);
 * text around expressions gets them as text (objects as JSON).
 */
export async function resolveTemplates(value: unknown, scope: unknown): Promise<unknown> {
  if (typeof value === "string") {
    const ps = parts(value);
    if (!ps) return value;
    if (ps.length === 1 && ps[0]!.expr !== undefined) return evaluate(ps[0]!.expr, scope);
    let out = "";
    for (const p of ps) {
      if (p.text !== undefined) out += p.text;
      else {
        const v = await evaluate(p.expr!, scope);
        out += typeof v === "string" ? v : v === null ? "" : JSON.stringify(v);
      }
    }
    return out;
  }
  if (Array.isArray(value)) return Promise.all(value.map((v) => resolveTemplates(v, scope)));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await resolveTemplates(v, scope);
    return out;
  }
  return value;
}

/** Evaluates an expression source directly (transform and condition nodes take a bare expression). */
export async function evaluateBare(source: string, scope: unknown): Promise<unknown> {
  const ps = parts(source);
  return ps && ps.length === 1 && ps[0]!.expr !== undefined ? evaluate(ps[0]!.expr, scope) : evaluate(source, scope);
}

/**
 * A node's config for one run: templates resolved in every value, except the keys its type reads
 * as a bare expression (`expressionKeys`), which are evaluated whole.
 */
export async function resolveConfig(raw: Record<string, unknown>, expressionKeys: readonly string[], scope: unknown): Promise<Record<string, unknown>> {
  const config = (await resolveTemplates(Object.fromEntries(Object.entries(raw).filter(([k]) => !expressionKeys.includes(k))), scope)) as Record<string, unknown>;
  for (const key of expressionKeys) if (typeof raw[key] === "string") config[key] = await evaluateBare(raw[key] as string, scope);
  return config;
}
