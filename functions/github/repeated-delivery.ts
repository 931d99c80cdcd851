import type { Deps } from '../deps/deps.ts';
import type { GithubTrigger } from '../github-api/github-trigger.ts';
import type { Logger } from '../shared/logger.ts';
import type { GithubRunRecord } from '../stores/github-store.ts';
import { leaseIsDead } from '../stores/session-store.ts';

const UNFINISHED = new Set(['queued', 'running']);

/**
 * The same trigger delivered to the worker twice (Lambda may deliver an asynchronous event more
 * than once) or sent again by a redrive does no harm: the delivery is bound to its first run, and
 * a later delivery of it leaves a run that ended or is still working alone (no second comment,
 * run, push or PR). A run whose worker died (its session's lease dead, or its hold on the issue
 * gone) is carried out again under the same run record, so it ends with an outcome.
 *
 * Returns the earlier run to answer with, or nothing to go on (`run` then carries the earlier
 * run's id when it is carried out again).
 */
export async function earlierRunOf(
  deps: Pick<Deps, 'github' | 'sessions' | 'clock'>,
  trigger: GithubTrigger,
  run: GithubRunRecord,
  log: Logger,
): Promise<GithubRunRecord | undefined> {
  const now = deps.clock();
  const boundRunId = await deps.github.bindDeliveryRun(trigger.deliveryId, run.runId, now);
  if (boundRunId === undefined) return undefined;
  const earlier = await deps.github.getRun(boundRunId);
  if (earlier && !UNFINISHED.has(earlier.outcome)) {
    log.info('delivery already run; nothing done again', { runId: earlier.runId, outcome: earlier.outcome });
    return earlier;
  }
  if (earlier && (await isAlive(deps, trigger, earlier, now))) {
    log.info('delivery already being run; nothing done twice', { runId: earlier.runId });
    return earlier;
  }
  log.warn('the worker of an earlier run of this delivery died; running it again', { runId: boundRunId });
  Object.assign(run, { runId: boundRunId, ...(earlier ? { createdAt: earlier.createdAt } : {}) });
  return undefined;
}

/** A run is alive while it holds its issue and its session's lease (if a turn holds one) is not dead. */
async function isAlive(deps: Pick<Deps, 'github' | 'sessions'>, trigger: GithubTrigger, run: GithubRunRecord, now: number): Promise<boolean> {
  const thread = await deps.github.getThread({ id: trigger.repositoryId, fullName: trigger.repository }, trigger.number);
  if (thread?.activeRunId !== run.runId || (thread.heldUntil !== undefined && thread.heldUntil < now)) return false;
  const lease = run.sessionId ? (await deps.sessions.get(run.sessionId))?.lease : undefined;
  return !(lease && leaseIsDead(lease, now));
}
