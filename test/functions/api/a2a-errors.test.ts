import { describe, expect, it } from 'vitest';
import { toA2aError } from '../../../functions/api/a2a/a2a-errors.ts';
import { ConflictError, NotFoundError, SessionBusyError, SystemError, UserError } from '../../../functions/shared/errors.ts';
import type { Logger } from '../../../functions/shared/logger.ts';

/** A logger that keeps its error lines. */
function keepingLog() {
  const errors: string[] = [];
  const log = { debug() {}, info() {}, warn() {}, error: (msg: string) => errors.push(msg), child: () => log } as unknown as Logger;
  return { log, errors };
}

describe("Stratus's errors in A2A's words", () => {
  it('maps each status to the protocol error the SDK answers with its own code', async () => {
    const { log } = keepingLog();
    const name = async (err: unknown) => (await toA2aError(err, log)).name;
    expect(await name(new NotFoundError('Session ses_x not found.'))).toBe('TaskNotFoundError');
    expect(await name(new ConflictError('Session ses_x has no running turn.', 'turn_not_running'))).toBe('TaskNotCancelableError');
    expect(await name(new SessionBusyError('ses_x'))).toBe('UnsupportedOperationError');
    expect(await name(new UserError('The message has no text part.'))).toBe('RequestMalformedError');
    // The message a person reads stays Stratus's own.
    expect((await toA2aError(new UserError('The message has no text part.'), log)).message).toBe('The message has no text part.');
  });

  it('answers an unexpected error without its message (logged instead), and keeps a system error as it is', async () => {
    const { log, errors } = keepingLog();
    const unexpected = await toA2aError(new Error('ECONNREFUSED 10.0.0.7:8000'), log);
    expect(unexpected.message).not.toContain('10.0.0.7');
    expect(errors).toEqual(['A2A request failed']);
    const system = new SystemError('The runner failed.');
    expect(await toA2aError(system, log)).toBe(system);
  });
});
