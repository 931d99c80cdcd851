/**
 * A GitHub run's session that waits (the agent's question in an attended run, a "plan first"
 * plan) ends its run without pushing; a writer's reply goes on with it through the worker. A
 * wait closed any other way (an answer, a decline or a plan decision through the API or the
 * console, the question's timeout) resumes the turn where it was closed, and hands the worker a
 * `resumed` trigger here: the worker holds the thread, follows that turn to its end and
 * publishes it as a reply's run would.
 */
import { createHash } from 'node:crypto';
import type { Deps } from '../deps/deps.ts';
import { githubTriggerSchema, type GithubTrigger } from '../github-api/github-trigger.ts';
import { errorMessage } from '../shared/errors.ts';

export type ResumedRunDeps = Pick<Deps, 'sessions' | 'steers' | 'github' | 'githubDispatch' | 'log'>;

/**
 * One delivery per closed wait: a second close of the same call (a duplicate timer, a retried
 * request) makes the same id, and the worker runs a delivery once.
 */
function resumedDeliveryId(sessionId: string, toolUseId: string): string {
  return `resumed:${createHash('sha256').update(`${sessionId}/${toolUseId}`).digest('hex').slice(0, 40)}`;
}

/** The trigger that goes on with the thread's last run: its issue and sender, none of its comments or commands. */
function resumedTrigger(last: GithubTrigger, deliveryId: string): GithubTrigger {
  const { commentId: _c, review: _r, checks: _k, budgetRaise: _b, steerId: _s, ...item } = last;
  return { ...item, trigger: 'resumed', deliveryId };
}

/**
 * After a wait of the session closed outside the GitHub worker and its turn was resumed: a
 * GitHub session's work goes on to its pull request. Sessions of no GitHub run are left alone;
 * a failed hand-over is logged (the turn's work stays in the session for the next mention).
 */
export async function handResumedTurnToGithub(deps: ResumedRunDeps, sessionId: string, toolUseId: string): Promise<void> {
  try {
    const session = await deps.sessions.get(sessionId);
    if (session?.source?.kind !== 'github') return;
    const key = await deps.steers.queueOf(sessionId);
    const thread = key ? await deps.github.getThreadByKey(key) : undefined;
    const last = githubTriggerSchema.safeParse(thread?.lastTrigger);
    if (thread?.sessionId !== sessionId || !last.success) {
      deps.log.warn('a resumed GitHub session has no thread to publish to', { sessionId });
      return;
    }
    await deps.githubDispatch.dispatch({ kind: 'github_work', trigger: resumedTrigger(last.data, resumedDeliveryId(sessionId, toolUseId)) });
  } catch (err) {
    deps.log.error('could not hand the resumed GitHub session to the worker', { sessionId, error: errorMessage(err) });
  }
}
