import type { TurnDeps } from './turn-deps.ts';
import { continueTurnEventSchema } from '../deps/continuation.ts';
import { continueTurn } from './turn.ts';

/**
 * What the API function does when invoked asynchronously (not through its URL): today, carry
 * on a turn that checkpointed. Unknown events are an error, so a misrouted invoke is visible.
 */
export async function handleAsyncEvent(deps: TurnDeps, event: unknown, deadlineAt?: number): Promise<void> {
  const parsed = continueTurnEventSchema.safeParse(event);
  if (!parsed.success) throw new Error(`Unknown asynchronous event for the API function: ${JSON.stringify(event).slice(0, 200)}`);
  await continueTurn(deps, parsed.data, deadlineAt);
}
