// One error family for Hearth: every failure a caller can see is an AppError with a code and status.

export type ErrorCode =
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "ValidationError"
  | "PayloadTooLarge"
  | "UnsupportedMediaType"
  | "Conflict"
  | "TooManyRequests"
  | "ServiceUnavailable"
  | "InternalError";

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const unauthorized = (message: string) => new AppError(401, "Unauthorized", message);
export const forbidden = (message: string) => new AppError(403, "Forbidden", message);
export const notFound = (what: string) => new AppError(404, "NotFound", `${what} not found`);
/** An unknown path: the same JSON 404 whether Elysia found no route or the console refused the path. */
export const noSuchEndpoint = () => new AppError(404, "NotFound", "No such endpoint; see /docs for the API");
export const invalid = (message: string, details?: unknown) => new AppError(400, "ValidationError", message, details);
export const unprocessable = (message: string, details?: unknown) => new AppError(422, "ValidationError", message, details);
export const conflict = (message: string) => new AppError(409, "Conflict", message);
export const tooLarge = (message: string) => new AppError(413, "PayloadTooLarge", message);
export const unsupportedMedia = (message: string) => new AppError(415, "UnsupportedMediaType", message);
/** A 429; `headers` say when to come back (Retry-After, and a budget's RateLimit-* when there is one). */
export const tooManyRequests = (message: string, headers: Record<string, string>) => new AppError(429, "TooManyRequests", message, undefined, headers);
/** A 503; with `retryAfterSeconds`, a Retry-After header for clients that honour it. */
export const unavailable = (message: string, retryAfterSeconds?: number) =>
  new AppError(503, "ServiceUnavailable", message, undefined, retryAfterSeconds === undefined ? undefined : { "retry-after": String(retryAfterSeconds) });

export interface ErrorBody {
  success: false;
  error: ErrorCode;
  message: string;
  details?: unknown;
}

export function errorBody(err: AppError): ErrorBody {
  return err.details === undefined
    ? { success: false, error: err.code, message: err.message }
    : { success: false, error: err.code, message: err.message, details: err.details };
}
