import { StratusError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';

/**
 * Stratus's errors in A2A's words, so the SDK's transport answers them with the protocol's codes:
 * 404 → TaskNotFound, 409 → UnsupportedOperation (`turn_not_running` → TaskNotCancelable), other
 * 4xx → RequestMalformed (invalid params). Anything unexpected is logged and answered as an
 * internal error without its message (it may carry what a store or the runner said).
 */
export async function toA2aError(err: unknown, log: Logger): Promise<Error> {
  const { A2AError, RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } = await import('@a2a-js/sdk/errors');
  if (err instanceof A2AError) return err;
  if (!(err instanceof StratusError)) {
    log.error('A2A request failed', { error: err instanceof Error ? err.message : String(err) });
    return new Error('Internal error: the request could not be completed.');
  }
  if (err.status === 404) return new TaskNotFoundError(err.message);
  if (err.code === 'turn_not_running') return new TaskNotCancelableError(err.message);
  if (err.status === 409) return new UnsupportedOperationError(err.message);
  if (err.status < 500) return new RequestMalformedError(err.message);
  return err;
}

/** Runs one handler call, its errors in A2A's words. */
export async function inA2aTerms<T>(log: Logger, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw await toA2aError(err, log);
  }
}

/** As inA2aTerms, for a stream. */
export async function* streamInA2aTerms<T>(log: Logger, stream: () => AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    yield* stream();
  } catch (err) {
    throw await toA2aError(err, log);
  }
}
