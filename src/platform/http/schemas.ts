// Schemas every feature's model.ts reuses: ids, timestamps, the response envelopes.
import { t, type TSchema } from "elysia";
import { Type, type IntegerOptions } from "@sinclair/typebox";

/**
 * An integer in a response. Elysia's t.Integer also takes a numeric string (for query strings and
 * bodies) and compiles a checker where it is defined; dozens of response fields paid that at every
 * start for nothing.
 */
export const Int = (options?: IntegerOptions) => Type.Integer(options);

/**
 * An integer in a query string. Elysia checks a number read from a query (or a form) on its own and
 * forgets its key when it is out of range, so the schema carries its own error naming the key.
 */
export const QueryInt = (key: string, options: { minimum: number; maximum: number; description?: string }) =>
  t.Integer({ ...options, error: `${key} must be an integer from ${options.minimum} to ${options.maximum}` });

export const Uuid = t.String({ format: "uuid", description: "UUID" });
export const IdParams = t.Object({ id: Uuid });
export const Timestamp = t.String({ format: "date-time", description: "ISO 8601 UTC" });

export const ErrorResponse = t.Object(
  {
    success: t.Literal(false),
    error: t.String({ description: "Short code: Unauthorized, Forbidden, NotFound, ValidationError, ..." }),
    message: t.String(),
    details: t.Optional(t.Unknown()),
  },
  { description: "Error" },
);

export const ok = <T extends TSchema>(data: T, description = "Success") =>
  t.Object({ success: t.Literal(true), message: t.Optional(t.String()), data }, { description });

export const okList = <T extends TSchema>(item: T, description = "Success") =>
  t.Object(
    {
      success: t.Literal(true),
      data: t.Array(item),
      pagination: t.Object({ page: Int(), pageSize: Int(), total: Int() }),
    },
    { description },
  );

type ErrorCode = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 503;

/** Error responses a route can give, for the OpenAPI document. */
export const errors = (...codes: ErrorCode[]) => Object.fromEntries(codes.map((c) => [c, ErrorResponse])) as Record<number, typeof ErrorResponse>;

/** A success that is no JSON envelope, as the OpenAPI document states it: its media types and their schemas. */
export type OtherSuccess = { description: string; content: Record<string, { schema: unknown }> };

/**
 * The OpenAPI `responses` of a route whose success is no JSON envelope (an event stream, a file,
 * text), for its `detail`: the success as given, the errors as `errors` gives them. Such a route
 * declares no `response` schema: the OpenAPI plugin would replace these with that one's codes.
 */
export const otherResponses = (success: Record<number, OtherSuccess>, ...codes: ErrorCode[]) => ({
  ...success,
  ...Object.fromEntries(codes.map((c) => [c, { description: "Error", content: { "application/json": { schema: ErrorResponse } } }])),
});

/** A `text/event-stream` success, described in words (the events are listed in the route's description). */
export const eventStream = (description: string): Record<number, OtherSuccess> => ({ 200: { description, content: { "text/event-stream": { schema: { type: "string" } } } } });

export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
