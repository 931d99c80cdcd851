import type { Octokit } from '@octokit/rest';
import type { Deps } from '../deps/deps.ts';
import type { GithubTrigger } from '../github-api/github-trigger.ts';
import { answerQuestion, questionsOf } from '../session/answer-question.ts';
import { ConflictError, NotFoundError, UserError } from '../shared/errors.ts';
import { waitsForPerson } from '../stores/approval-store.ts';
import type { GithubThreadRecord } from '../stores/github-store.ts';
import { answerFromReply, questionComment } from './question-reply.ts';

type QuestionDeps = Pick<Deps, 'approvals' | 'clock'>;
type WaitingQuestion = NonNullable<GithubThreadRecord['waitingQuestion']>;

/**
 * The agent asked: its first waiting question call is posted as a comment on the issue or pull
 * request (the thread then waits on it), or undefined when none waits (a permission does).
 */
export async function askOnThread(
  deps: QuestionDeps,
  o: { octokit: Octokit; trigger: GithubTrigger; sessionId: string; session: string },
): Promise<(WaitingQuestion & { url: string }) | undefined> {
  const waiting = (await deps.approvals.listForSession(o.sessionId)).find((p) => p.kind === 'question' && waitsForPerson(p));
  if (!waiting) return undefined;
  const body = questionComment({ questions: questionsOf(waiting), session: o.session, expiresAt: waiting.expiresAt ?? 'its time runs out' });
  const { owner, name, number } = o.trigger;
  const comment = (await o.octokit.rest.issues.createComment({ owner, repo: name, issue_number: number, body })).data;
  return { sessionId: o.sessionId, toolUseId: waiting.toolUseId, commentId: comment.id, url: comment.html_url };
}

/**
 * A writer's reply comment as the answer to the question the thread waits on. `answered`: the
 * turn may resume; `unclear`: why the reply is no answer (the question still waits); `gone`: the
 * question no longer waits (answered through the API or console, or its time ran out).
 */
export async function answerOnThread(
  deps: QuestionDeps,
  o: { octokit: Octokit; trigger: GithubTrigger; mention: string; waiting: WaitingQuestion },
): Promise<{ answered: true } | { unclear: string } | { gone: true }> {
  const { sessionId, toolUseId } = o.waiting;
  const item = await deps.approvals.get(sessionId, toolUseId);
  if (item?.kind !== 'question' || !waitsForPerson(item)) return { gone: true };
  const { owner, name, commentId } = o.trigger;
  const reply = (await o.octokit.rest.issues.getComment({ owner, repo: name, comment_id: commentId! })).data.body ?? '';
  const input = answerFromReply(questionsOf(item), reply, o.mention);
  if ('unclear' in input) return input;
  try {
    await answerQuestion(deps, sessionId, toolUseId, input);
  } catch (err) {
    if (err instanceof UserError) return { unclear: err.message };
    if (err instanceof ConflictError || err instanceof NotFoundError) return { gone: true };
    throw err;
  }
  return { answered: true };
}
