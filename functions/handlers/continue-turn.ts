import { z } from 'zod';
import type { Deps } from '../deps/deps.ts';

/**
 * A turn that nears its function's deadline checkpoints (everything is already in DynamoDB)
 * and asks for a fresh invocation of the API function with this event, sent asynchronously
 * (InvocationType "Event"). The handler routes it here instead of to the HTTP app.
 */
export const continueTurnEventSchema = z.strictObject({
  kind: z.literal('continue_turn'),
  sessionId: z.string().min(1),
  turnId: z.string().min(1),
});

export type ContinueTurnEvent = z.infer<typeof continueTurnEventSchema>;

/** What the engine needs from the invocation it runs in: how long it has left. */
export interface InvocationClock {
  remainingTimeMs(): number;
}

export type ContinueTurn = (deps: Deps, event: ContinueTurnEvent, invocation: InvocationClock) => Promise<void>;

/** True for anything claiming to be a continuation; a malformed one throws (a harness bug, logged by Lambda). */
export function isContinueTurnEvent(event: unknown): event is ContinueTurnEvent {
  if (typeof event !== 'object' || event === null || (event as { kind?: unknown }).kind !== 'continue_turn') return false;
  continueTurnEventSchema.parse(event);
  return true;
}

/**
 * TODO(turn engine): replace with the engine's continuation entry point once it exists. The
 * turn engine (functions/agent/turn.ts) has no way yet to resume a checkpointed turn, so this
 * stub fails loudly rather than pretending the turn went on.
 */
export const continueTurnNotImplemented: ContinueTurn = async () => {
  throw new Error('continueTurn is not implemented: the turn engine has no continuation entry point yet.');
};

/** Runs one continuation with the session and turn ids bound to every log line. */
export async function runContinueTurn(
  deps: Deps,
  event: ContinueTurnEvent,
  invocation: InvocationClock,
  continueTurn: ContinueTurn,
): Promise<void> {
  const log = deps.log.child({ sessionId: event.sessionId, turnId: event.turnId });
  log.info('continuing turn in a fresh invocation', { remainingTimeMs: invocation.remainingTimeMs() });
  try {
    await continueTurn({ ...deps, log }, event, invocation);
  } catch (err) {
    log.error('turn continuation failed', { error: err instanceof Error ? err.message : String(err) });
    throw err;
  }
}
