import { z } from 'zod';
import { startTurn } from '../agent/turn.ts';
import type { Deps } from '../deps/deps.ts';
import { SessionBusyError } from '../shared/errors.ts';

/**
 * The payload an EventBridge Scheduler schedule delivers to the cron function (the schedule's
 * target `Input`): run this prompt as a turn of this session, on behalf of this tenant.
 */
export const scheduledTurnEventSchema = z.strictObject({
  kind: z.literal('scheduled_turn'),
  scheduleName: z.string().min(1),
  tenantId: z.string().min(1),
  sessionId: z.string().min(1),
  prompt: z.string().min(1),
});

export type ScheduledTurnEvent = z.infer<typeof scheduledTurnEventSchema>;

export type ScheduledTurnOutcome =
  | { status: 'ran'; turnId: string; stopReason: string }
  | { status: 'skipped_busy' };

/**
 * Runs one scheduled turn to its end. A session already running a turn skips this tick
 * (the next one comes soon enough) instead of failing, so Scheduler does not retry it into
 * a pile-up.
 */
export async function runScheduledTurn(deps: Deps, input: unknown): Promise<ScheduledTurnOutcome> {
  const event = scheduledTurnEventSchema.parse(input);
  const log = deps.log.child({ sessionId: event.sessionId, schedule: event.scheduleName });
  try {
    const turn = await startTurn(deps, { sessionId: event.sessionId, tenantId: event.tenantId, prompt: event.prompt });
    const summary = await turn.done;
    log.info('scheduled turn ended', { turnId: turn.turnId, stopReason: summary.stopReason });
    return { status: 'ran', turnId: turn.turnId, stopReason: summary.stopReason };
  } catch (err) {
    if (!(err instanceof SessionBusyError)) throw err;
    log.warn('session busy; skipping this scheduled turn');
    return { status: 'skipped_busy' };
  }
}
