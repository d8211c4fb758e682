/** Every error code of protocol §3, with the HTTP status it travels with. */
export const ErrorStatus = {
  BadRequest: 400,
  Unauthorized: 401,
  InvalidCredentials: 401,
  ExpiredToken: 401,
  Forbidden: 403,
  InviteRequired: 403,
  NotFound: 404,
  HandleTaken: 409,
  EmailTaken: 409,
  EpochConflict: 409,
  RotationRequired: 409,
  KeyExists: 409,
  /** Extension (device link): the code names a slot that is already open, or already filled. */
  LinkExists: 409,
  /** Extension (trust state beside the key backup): the stored version is not lower than the one given. */
  VersionConflict: 409,
  /**
   * Extension (ATProto key proofs): the server holds no usable ATProto session for the caller (none,
   * revoked, or without the chat-key scope): sign in with ATProto again.
   */
  AtprotoSessionRequired: 403,
  TooLarge: 413,
  InvalidRequest: 422,
  WeakPassword: 422,
  RateLimited: 429,
  InternalError: 500,
  /** Storage is full or failing (protocol-extensions.md): retry after `Retry-After` seconds. */
  Unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ErrorStatus;
export const ErrorCodes = Object.keys(ErrorStatus) as ErrorCode[];

/** The body of every error answer (its schema is `ErrorBodySchema` in models.ts). */
export interface ErrorBody {
  error: ErrorCode;
  message: string;
}

/** An expected failure that maps one-to-one onto the wire's `{error, message}`. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Seconds, for RateLimited and Unavailable. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.status = ErrorStatus[code];
  }
  toBody(): ErrorBody {
    return { error: this.code, message: this.message };
  }
}

export function isErrorBody(value: unknown): value is ErrorBody {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as ErrorBody).error === "string" &&
    (value as ErrorBody).error in ErrorStatus &&
    typeof (value as ErrorBody).message === "string"
  );
}
