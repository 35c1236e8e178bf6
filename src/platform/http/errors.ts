// Maps every failure to the envelope of DESIGN.md: AppError first, then Elysia's own codes.
import { Elysia, ValidationError } from "elysia";
import { AppError, errorBody, invalid, noSuchEndpoint, unavailable, unprocessable, unsupportedMedia } from "../errors";
import { STORAGE_FAILURE_MESSAGES, storageFailure, writeFailures } from "../db/write-failures";
import type { Logger } from "../log";
import { problemText } from "../validator";
import { settleRequest } from "./request-meta";
import { bodyLeftUnread } from "./body";

/**
 * A full or failing disk answers 503 with Retry-After (what a client or webhook sender already waits
 * out) and a message a person can act on; not 507, which clients treat as final.
 */
const STORAGE_RETRY_AFTER_S = 60;

function json(status: number, body: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, "content-type": "application/json; charset=utf-8" },
  });
}

/** Turns Elysia's validation error into a short list a person can act on, without echoing values. */
function validationDetails(error: ValidationError): { path: string; message: string }[] {
  return [...error.all].slice(0, 20).map((issue) => ({ path: issue.path || "/", message: problemText(issue) }));
}

export function toAppError(code: string | number, error: unknown): AppError {
  if (error instanceof AppError) return error;
  // Elysia wraps whatever a body parser throws; Hearth's parser throws AppErrors with the real cause.
  if (code === "PARSE" && (error as Error)?.cause instanceof AppError) return (error as Error).cause as AppError;
  switch (code) {
    case "NOT_FOUND":
      return noSuchEndpoint();
    case "PARSE":
      return invalid("Request body could not be parsed; send valid JSON with Content-Type: application/json");
    case "VALIDATION": {
      const v = error as ValidationError;
      const details = validationDetails(v);
      // "property": a value Elysia checked on its own, its part of the request unknown.
      const where = v.type === "property" ? "" : `Invalid ${v.type}`;
      const message = [where, details[0]?.message].filter(Boolean).join(": ") || "Invalid request";
      // A malformed id, query or header is a bad request line (400); a body that parses but has
      // the wrong shape is unprocessable (422).
      return v.type === "body" ? unprocessable(message, details) : invalid(message, details);
    }
    case "INVALID_FILE_TYPE":
      return unsupportedMedia("Unsupported file type");
    case "INVALID_COOKIE_SIGNATURE":
      return invalid("Invalid cookie signature");
  }
  if (typeof code === "number" && code >= 400 && code < 500) {
    return new AppError(code, code === 404 ? "NotFound" : "ValidationError", (error as Error)?.message || "Request failed");
  }
  const storage = storageFailure(error);
  if (storage) return unavailable(STORAGE_FAILURE_MESSAGES[storage], STORAGE_RETRY_AFTER_S);
  return new AppError(500, "InternalError", "Something went wrong on our side; retry in a few seconds");
}

export function errorHandler(log: Logger) {
  return new Elysia({ name: "hearth-errors" }).onError({ as: "global" }, async ({ code, error, set, request }) => {
    let appError = toAppError(code, error);
    if (storageFailure(error)) {
      // A full disk fails every write: logged when that begins, not once per request.
      if (writeFailures.note(error)) log.error("request failed: the database cannot be written", { method: request.method, url: request.url, error: String(error) });
    } else if (appError.status >= 500) {
      log.error("request failed", { method: request.method, url: request.url, error: String((error as Error)?.stack ?? error) });
    }
    try {
      await settleRequest(request, appError.status);
    } catch (e) {
      // Its audit row could not be written (logged there): the request is not acknowledged.
      appError = toAppError("UNKNOWN", e);
      if (storageFailure(e)) writeFailures.note(e);
    }
    set.status = appError.status;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(set.headers)) if (typeof v === "string") headers[k] = v;
    // Refused before its body was read (401, 429, 413 at a cap): close, so the client stops sending.
    if (bodyLeftUnread(request)) headers.connection = "close";
    return json(appError.status, errorBody(appError), { ...headers, ...appError.headers });
  });
}
