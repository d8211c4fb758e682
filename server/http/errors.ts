import { ParseError, ValidationError } from "elysia";
import { ApiError, type ErrorBody } from "../../core/protocol/index.ts";
import { classifyStorageFault, StorageUnavailableError } from "../storage/faults.ts";

export interface MappedError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/**
 * A JSON pointer ("/commit/members/0/did") as a dotted field name ("commit.members.0.did"); the
 * root is "body" and an empty key is shown as "".
 */
export function fieldName(pointer: string): string {
  if (pointer === "") return "body";
  return pointer
    .split("/")
    .slice(1)
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~") || '""')
    .join(".");
}

/** Names the first failing field, e.g. "channelUri: Expected string" or "joinTokn: Unexpected property". */
function validationMessage(e: ValidationError): string {
  const first = e.valueError;
  if (!first) return "body: invalid";
  return `${fieldName(first.path)}: ${first.message}`;
}

/**
 * Every failure becomes one of protocol §3's `{error, message}` bodies. Internal details never reach
 * the client: an unexpected error is logged here (without the request body) and answered with a
 * generic 500.
 */
export function mapError(code: string | number, error: unknown, log: (msg: string) => void): MappedError {
  // Elysia wraps anything a parse hook throws in a ParseError (400); readJsonBody's own answers, such
  // as 413 TooLarge, travel as its cause.
  if (error instanceof ParseError && error.cause instanceof ApiError) return mapError(code, error.cause, log);
  if (error instanceof ApiError) {
    return {
      status: error.status,
      body: error.toBody(),
      headers: error.retryAfter ? { "retry-after": String(error.retryAfter) } : {},
    };
  }
  // A storage fault that did not pass through the guarded storage (storage/faults.ts, which throws
  // the ApiError above and logs once per change of state): 503 as well, and no stack trace.
  const fault = classifyStorageFault(error);
  if (fault) return mapError(code, new StorageUnavailableError(fault, ""), log);
  if (error instanceof ValidationError || code === "VALIDATION") {
    const message = error instanceof ValidationError ? validationMessage(error) : "body: invalid";
    return { status: 422, body: { error: "InvalidRequest", message }, headers: {} };
  }
  if (code === "PARSE")
    return { status: 400, body: { error: "BadRequest", message: "Body is not JSON" }, headers: {} };
  if (code === "NOT_FOUND")
    return { status: 404, body: { error: "NotFound", message: "Not found" }, headers: {} };
  log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return { status: 500, body: { error: "InternalError", message: "Internal error" }, headers: {} };
}
