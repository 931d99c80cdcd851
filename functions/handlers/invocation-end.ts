import type { Deps } from '../deps/deps.ts';

/**
 * Runs one invocation's work, then waits for what it left writing in the background (runner
 * slots given back behind their calls' results, bytes counted behind them: functions/stores/
 * runner-call-slots.ts, tenant-usage.ts) before the invocation ends. Lambda freezes an
 * environment when its handler returns; a write frozen mid-way would land at the next thaw at
 * best, and a slot not given back counts against its tenant's cap until its lease runs out.
 */
export async function settledInvocation<R>(deps: Pick<Deps, 'runnerSlots' | 'tenantUsage'>, work: () => Promise<R>): Promise<R> {
  try {
    return await work();
  } finally {
    await Promise.all([deps.runnerSlots.settled(), deps.tenantUsage.settled()]);
  }
}
