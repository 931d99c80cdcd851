/**
 * A queue per issue or pull request, not a cancel: a mention that arrives while a run works on
 * the same item is queued (functions/stores/steer-store.ts) and acknowledged with a 👀 reaction;
 * the running session reads it before its next model call (functions/turn/steer-messages.ts).
 * What no turn took when the run ends gets a run of its own (trigger `queued`), one at a time.
 * Every hand-over is a conditional update on the queued message, so a comment is taken once
 * whoever races for it: the turn, the run of its own, or the run that queued it.
 */
import type { Deps } from '../deps/deps.ts';
import type { GithubRepoAccess } from '../github-api/github-client.ts';
import { githubTriggerSchema, type GithubTrigger } from '../github-api/github-trigger.ts';
import { errorMessage } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { GithubRepoRecord, GithubRunRecord } from '../stores/github-store.ts';
import { steerId } from '../stores/steer-store.ts';
import { queuedCommentText } from './untrusted-text.ts';

export type QueueDeps = Pick<Deps, 'github' | 'steers' | 'githubDispatch' | 'clock'>;

interface Held {
  trigger: GithubTrigger;
  /** The item's thread key: its queue. */
  key: string;
  repo: GithubRepoRecord;
  access: GithubRepoAccess;
  save: (patch: Partial<GithubRunRecord>) => Promise<GithubRunRecord>;
  log: Logger;
  runId: string;
}

/**
 * The answer to a trigger on an item another run holds, when it carries a comment: queued for
 * that run (outcome `queued_into_run`). Undefined for a trigger with nothing to queue (a label).
 */
export async function queueIntoRun(deps: QueueDeps, o: Held): Promise<GithubRunRecord | undefined> {
  const { trigger } = o;
  // A run of its own for a queued comment that finds the item held again: the comment stays queued for the holder.
  if (trigger.trigger === 'queued') return o.save({ outcome: 'queued_into_run', detail: 'Another run holds the item; it takes the queued comment.' });
  if (trigger.trigger !== 'mention' || trigger.commentId === undefined) return undefined;
  const holder = (await deps.github.getThread({ id: trigger.repositoryId, fullName: trigger.repository }, trigger.number))?.activeRunId;
  const comment = (await o.access.octokit.rest.issues.getComment({ owner: trigger.owner, repo: trigger.name, comment_id: trigger.commentId })).data;
  const createdAt = new Date(deps.clock()).toISOString();
  const author = comment.user?.login ?? trigger.sender.login;
  const kind = trigger.isPullRequest ? 'pull_request' : 'issue';
  await deps.steers.enqueue(
    {
      queueKey: o.key,
      steerId: steerId(createdAt, trigger.deliveryId),
      tenantId: o.repo.tenantId,
      deliveryId: trigger.deliveryId,
      commentId: trigger.commentId,
      author,
      text: queuedCommentText({ kind, number: trigger.number, author, body: comment.body ?? '' }),
      createdAt,
      trigger,
    },
    deps.clock(),
  );
  await acknowledge(o.access, trigger, trigger.commentId, o.log);
  const holderRun = holder ? await deps.github.getRun(holder) : undefined;
  const saved = await o.save({
    outcome: 'queued_into_run',
    detail: `Queued for the run working on it${holder ? ` (${holder})` : ''}: its session reads the comment before its next model call, or a run of its own takes it after.`,
    ...(holderRun?.sessionId ? { sessionId: holderRun.sessionId } : {}),
  });
  // The holder may have let go after our claim failed and before the comment was queued: its end missed it.
  const now = await deps.github.getThread({ id: trigger.repositoryId, fullName: trigger.repository }, trigger.number);
  if (!holder || now?.activeRunId !== holder) await dispatchNextQueued(deps, o.key, o.runId, o.log);
  return saved;
}

/** A 👀 on the comment: it was read and is queued (a refused reaction loses nothing). */
async function acknowledge(access: GithubRepoAccess, trigger: GithubTrigger, commentId: number, log: Logger): Promise<void> {
  await access.octokit.rest.reactions
    .createForIssueComment({ owner: trigger.owner, repo: trigger.name, comment_id: commentId, content: 'eyes' })
    .catch((err: unknown) => log.warn('could not react to the queued comment', { error: errorMessage(err) }));
}

/** A run of its own takes its queued comment first; false when a turn took it already (nothing to do then). */
export async function takeOwnQueued(deps: Pick<Deps, 'steers'>, key: string, trigger: GithubTrigger, runId: string): Promise<boolean> {
  if (trigger.trigger !== 'queued' || trigger.steerId === undefined) return true;
  return deps.steers.take(key, trigger.steerId, runId);
}

/** After a run let go of its item: its own queued comment is done, and the oldest one left gets a run of its own. */
export async function afterRun(deps: QueueDeps, o: { key: string; trigger: GithubTrigger; runId: string; log: Logger }): Promise<void> {
  if (o.trigger.trigger === 'queued' && o.trigger.steerId !== undefined) {
    const own = (await deps.steers.list(o.key)).find((s) => s.steerId === o.trigger.steerId);
    if (own?.takenBy === o.runId) await deps.steers.remove(o.key, own.steerId);
  }
  await dispatchNextQueued(deps, o.key, o.runId, o.log);
}

/**
 * Hands the oldest comment still queued on the item to the worker as a run of its own. The
 * delivery id names the dispatching run, so two dispatchers of one comment make two events; the
 * conditional take lets one of them do the work.
 */
async function dispatchNextQueued(deps: QueueDeps, key: string, dispatcher: string, log: Logger): Promise<void> {
  const next = (await deps.steers.list(key)).find((s) => s.status === 'queued');
  if (!next) return;
  const parsed = githubTriggerSchema.safeParse(next.trigger);
  if (!parsed.success) {
    log.error('a queued comment carries no trigger the worker reads; dropped', { steerId: next.steerId });
    await deps.steers.remove(key, next.steerId);
    return;
  }
  const trigger: GithubTrigger = { ...parsed.data, trigger: 'queued', deliveryId: `queued:${next.steerId}:${dispatcher}`.slice(0, 200), steerId: next.steerId };
  log.info('a comment queued while the run worked gets a run of its own', { steerId: next.steerId });
  await deps.githubDispatch.dispatch({ kind: 'github_work', trigger });
}
