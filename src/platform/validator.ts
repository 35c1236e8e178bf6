// TypeBox validators compiled at their first use and kept per schema: Hearth holds dozens (node
// configs, connector settings, agent templates, tool inputs) and a start compiled all of them,
// ~10 ms of every cold start for checks most runs never make. And a schema problem said as a
// person would fix it, for request bodies and for those values alike.
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { unprocessable } from "./errors";

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

export function validatorFor<T extends TSchema>(schema: T): TypeCheck<T> {
  let v = compiled.get(schema) as TypeCheck<T> | undefined;
  if (!v) compiled.set(schema, (v = TypeCompiler.Compile(schema)));
  return v;
}

type Schema = {
  type?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  error?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
};

/** Elysia's number in a query, form or body: a numeric string or the number itself. */
const coercedNumber = (branches: Schema[]) => {
  const number = branches.find((b) => b.type === "integer" || b.type === "number");
  const string = branches.find((b) => b.type === "string" && (b.format === "integer" || b.format === "numeric"));
  return branches.length === 2 && number && string ? number : undefined;
};

const FORMATS: Record<string, string> = { uuid: "a UUID", "date-time": "a date and time in ISO 8601, such as 2026-01-31T09:30:00Z" };

/** " of 1 to 200 characters", " of at least 1 item", or nothing when unbounded. */
const amount = (min: number | undefined, max: number | undefined, unit: string) =>
  min !== undefined && max !== undefined ? ` of ${min} to ${max} ${unit}s` : min !== undefined ? ` of at least ${min} ${unit}${min === 1 ? "" : "s"}` : max !== undefined ? ` of at most ${max} ${unit}s` : "";

function text(schema: Schema): string | undefined {
  if (schema.pattern !== undefined) return undefined; // TypeBox names the pattern
  if (schema.format !== undefined) return FORMATS[schema.format];
  return `a string${amount(schema.minLength, schema.maxLength, "character")}`;
}

/**
 * What a field must be, said from its schema where TypeBox's own words are no help ("Expected
 * union value", "should be one of: 'integer', 'integer'", "Expected kind 'UnionEnum'").
 */
function expected(schema: Schema | undefined): string | undefined {
  if (!schema) return undefined;
  if (Array.isArray(schema.enum)) return `one of: ${schema.enum.join(", ")}`;
  const branches = schema.anyOf;
  if (branches) {
    if (branches.every((b) => "const" in b)) return `one of: ${branches.map((b) => b.const).join(", ")}`;
    const number = coercedNumber(branches);
    if (number) return expected(number);
    const other = branches.filter((b) => b.type !== "null");
    const inner = other.length === 1 && other.length < branches.length ? expected(other[0]) : undefined;
    return inner && `${inner}, or null`;
  }
  if (schema.type === "boolean") return "true or false";
  if (schema.type === "array") return `a list${amount(schema.minItems, schema.maxItems, "item")}`;
  if (schema.type === "string") return text(schema);
  if (schema.type !== "integer" && schema.type !== "number") return undefined;
  const kind = schema.type === "integer" ? "an integer" : "a number";
  const { minimum: min, maximum: max, exclusiveMinimum: above, exclusiveMaximum: below } = schema;
  if (min !== undefined && max !== undefined) return `${kind} from ${min} to ${max}`;
  const bounds = [min !== undefined && `at least ${min}`, above !== undefined && `greater than ${above}`, max !== undefined && `at most ${max}`, below !== undefined && `less than ${below}`].filter(Boolean);
  return bounds.length ? `${kind} ${bounds.join(" and ")}` : kind;
}

/**
 * One problem of a TypeBox check (Elysia's checks are TypeBox's) as a sentence: "top_k must
 * be an integer from 1 to 100", "name is required". `root` names the value checked, so that its
 * fields read "config.url" and the value itself "config"; values are never echoed.
 */
export function problemText(issue: { type?: number; path?: string; message?: string; schema?: unknown }, root = ""): string {
  const schema = issue.schema as Schema | undefined;
  const field = [root, ...(issue.path ?? "").split("/")].filter(Boolean).join(".");
  if (issue.type === ValueErrorType.ObjectRequiredProperty) return `${field} is required`;
  if (issue.type === ValueErrorType.ObjectAdditionalProperties) return `${field} is not an accepted field`;
  // A schema that says its own error names its field: Elysia forgets the key of a number read from
  // a query or a form when it is out of range (QueryInt in http/schemas.ts).
  if (typeof schema?.error === "string") return schema.error;
  const must = expected(schema);
  if (must) return field ? `${field} must be ${must}` : `must be ${must}`;
  // TypeBox's own words, which (unlike Elysia's summary) never quote the value.
  const said = issue.message ?? "is invalid";
  return field ? `${field}: ${said}` : said;
}

/**
 * A name with its spaces trimmed, or 422 "<field> must not be blank": a schema's minLength counts
 * spaces, so a name of spaces only would be stored empty.
 */
export function nonBlank(value: string, field = "name"): string {
  const trimmed = value.trim();
  if (!trimmed) throw unprocessable(`${field} must not be blank`);
  return trimmed;
}
