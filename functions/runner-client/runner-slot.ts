import { LimitError } from '../shared/errors.ts';
import { RUNNER_CALLS_SETTING, type RunnerCallSlots } from '../stores/runner-call-slots.ts';

/** What a refusal tells a client to wait: runner calls mostly end within seconds. */
export const RUNNER_BUSY_RETRY_AFTER_SECONDS = 5;
/** How long a call made by a run (a turn's tool call, a GitHub run's publish) waits for a free slot. */
export const RUNNER_SLOT_WAIT_IN_RUN_MS = 60_000;
/** How often a waiting call looks for a free slot again. */
const POLL_MS = 1_000;

/** The tenant's runner calls are all in use: 429 with Retry-After in the API, an is_error result in a turn. */
export class RunnerCallLimitError extends LimitError {
  constructor(tenantId: string, cap: number) {
    super(
      `Tenant ${tenantId} already has ${cap} sandbox runner calls in flight, its limit (${RUNNER_CALLS_SETTING}); retry in a few seconds.`,
      'runner_calls_limit',
      429,
      RUNNER_BUSY_RETRY_AFTER_SECONDS,
    );
  }
}

/**
 * Runs one runner call inside one of the tenant's slots (functions/stores/runner-call-slots.ts),
 * given back however the call ends, in the background (the call's result does not wait for it).
 * A call that finds none free looks again every second for up to `waitMs` (a turn's tool call
 * waits: the user expects it to run a little later, not to fail), then is refused with
 * RunnerCallLimitError (an API request does not wait: the client gets 429). A call with no
 * tenant (none is named) or no slots store runs as it is.
 */
export async function withRunnerSlot<R>(
  slots: Pick<RunnerCallSlots, 'take' | 'giveBack' | 'cap'> | undefined,
  call: { tenantId?: string; waitMs?: number; clock: () => number },
  run: () => Promise<R>,
): Promise<R> {
  const { tenantId } = call;
  if (!slots || !tenantId) return run();
  const deadline = call.clock() + (call.waitMs ?? 0);
  let slot = await slots.take(tenantId);
  while (slot === undefined && call.clock() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(1, deadline - call.clock()))));
    slot = await slots.take(tenantId);
  }
  if (slot === undefined) throw new RunnerCallLimitError(tenantId, slots.cap);
  try {
    return await run();
  } finally {
    // Behind the result, not before it: the slot's write is off the tool's round trip
    // (docs/api.md, "A tenant's runner calls are capped").
    slots.giveBack(tenantId, slot);
  }
}
