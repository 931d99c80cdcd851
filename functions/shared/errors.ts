/**
 * Errors that say who is at fault. Each class fixes its HTTP status and names a `code`; the API
 * turns them into responses in one place (`onError` in api/app.ts). Code that needs to tell them
 * apart uses `instanceof` on these classes, never the error's name. The turn engine never lets a
 * model mistake become one of these (those become error tool_results).
 *
 * | class | status | default code |
 * |---|---|---|
 * | UserError (the caller's input) | 400, 411 | `invalid_request` |
 * | UnauthorizedError | 401 | `unauthorized` |
 * | ForbiddenError (a valid token used where it has no right) | 403 | `forbidden` |
 * | NotFoundError | 404 | `not_found` |
 * | ConflictError (SessionBusyError) | 409, `Retry-After` when waiting helps | — |
 * | LimitError (a size or rate limit) | 413, 429 | — |
 * | UpstreamError (the model API) | 502, 503 | `model_error` |
 * | SystemError (infrastructure), RunnerError (the sandbox runner) | 500 | `internal_error`, `runner_failed` |
 */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 411 | 413 | 422 | 429 | 500 | 502 | 503;

/** The base of the hierarchy; throw one of the subclasses below. */
export class StratusError extends Error {
  constructor(
    message: string,
    readonly status: ErrorStatus,
    readonly code: string,
    /** Sent as `Retry-After` (seconds) where trying again later is expected to work. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The caller sent something we cannot act on (411: a body without the length it needs). */
export class UserError extends StratusError {
  constructor(message: string, code = 'invalid_request', status: 400 | 411 = 400) {
    super(message, status, code);
  }
}

export class UnauthorizedError extends StratusError {
  constructor(message = 'Missing or invalid bearer token. Send "Authorization: Bearer <token>".') {
    super(message, 401, 'unauthorized');
  }
}

/** A valid token used where it has no right: a tenant token on the admin routes, the admin token on a tenant's. */
export class ForbiddenError extends StratusError {
  constructor(message: string) {
    super(message, 403, 'forbidden');
  }
}

/** The thing named does not exist, or belongs to another tenant (the two look the same). */
export class NotFoundError extends StratusError {
  constructor(message: string, code = 'not_found') {
    super(message, 404, code);
  }
}

/** The request clashes with the current state (a running turn, an answer already given, content already there). */
export class ConflictError extends StratusError {
  constructor(message: string, code: string, retryAfterSeconds?: number) {
    super(message, 409, code, retryAfterSeconds);
  }
}

/** Another turn holds the session's lease; `retryAfterSeconds` comes from that lease. */
export class SessionBusyError extends ConflictError {
  constructor(sessionId: string, retryAfterSeconds = 1) {
    super(`Session ${sessionId} is running a turn; wait for it to end and retry.`, 'session_busy', retryAfterSeconds);
  }
}

/** A size limit (413) or a rate limit (429) was passed; the message names it. */
export class LimitError extends StratusError {
  constructor(message: string, code: string, status: 413 | 429 = 413, retryAfterSeconds?: number) {
    super(message, status, code, retryAfterSeconds);
  }
}

/** The model API failed or refused (503 when it was overloaded): not the caller's fault, nor ours. */
export class UpstreamError extends StratusError {
  constructor(message: string, code = 'model_error', status: 502 | 503 = 502) {
    super(message, status, code);
  }
}

/** Infrastructure failed (storage, credentials, a bug on our side); not the caller's or the model's fault. */
export class SystemError extends StratusError {
  constructor(message: string, code = 'internal_error') {
    super(message, 500, code);
  }
}

/** The sandbox runner failed (crashed, timed out, unreachable, or refused a request we built). */
export class RunnerError extends SystemError {
  constructor(message: string, code = 'runner_failed') {
    super(message, code);
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
