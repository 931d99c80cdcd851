/**
 * Errors that say who is at fault. The API maps them to HTTP statuses in one place; the turn
 * engine never lets a model mistake become one of these (those become error tool_results).
 */
export class StratusError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    /** Sent as `Retry-After` (seconds) where trying again later is expected to work. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The caller sent something we cannot act on. */
export class UserError extends StratusError {
  constructor(message: string, code = 'invalid_request') {
    super(message, 400, code);
  }
}

export class NotFoundError extends StratusError {
  constructor(message: string) {
    super(message, 404, 'not_found');
  }
}

export class UnauthorizedError extends StratusError {
  constructor(message = 'Missing or invalid bearer token. Send "Authorization: Bearer <token>".') {
    super(message, 401, 'unauthorized');
  }
}

/** Another turn holds the session's lease; `retryAfterSeconds` comes from that lease. */
export class SessionBusyError extends StratusError {
  constructor(sessionId: string, retryAfterSeconds = 1) {
    super(`Session ${sessionId} is running a turn; wait for it to end and retry.`, 409, 'session_busy', retryAfterSeconds);
  }
}

/** Infrastructure failed (runner, storage); not the caller's or the model's fault. */
export class SystemError extends StratusError {
  constructor(message: string, code = 'internal_error') {
    super(message, 500, code);
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
