import type { Octokit } from '@octokit/rest';
import type { GithubTrigger } from '../github-api/github-trigger.ts';
import type { Logger } from '../shared/logger.ts';
import { checksPrompt, readFailingChecks } from './failing-checks.ts';
import { readReviewRequest, replyInThreads, reviewPrompt, type ReviewRequest } from './review-comments.ts';

/** What a run on a Stratus PR's review or failing checks works from: its prompt, and the review comments it answers. */
export interface FollowUpWork {
  prompt: string;
  review?: ReviewRequest;
}

/** The prompt of a review or check run (read through the REST API); nothing for the issue and mention runs. */
export async function followUpWork(gh: Octokit, trigger: GithubTrigger, branch: string): Promise<FollowUpWork | undefined> {
  const where = { repository: trigger.repository, number: trigger.number, branch };
  if (trigger.trigger === 'review') {
    const review = await readReviewRequest(gh, trigger);
    return { prompt: reviewPrompt({ ...where, request: review }), review };
  }
  if (trigger.trigger === 'check' && trigger.checks) {
    const checks = await readFailingChecks(gh, trigger);
    return { prompt: checksPrompt({ ...where, sha: trigger.checks.headSha, checks }) };
  }
  return undefined;
}

/** After the push: a review run replies in the thread of each comment it addressed (the progress comment is its summary). */
export async function answerFollowUp(
  gh: Octokit,
  o: { trigger: GithubTrigger; work: FollowUpWork | undefined; summary: string; commit?: string; log: Logger },
): Promise<void> {
  if (!o.work?.review?.comments.length) return;
  const posted = await replyInThreads(gh, { trigger: o.trigger, comments: o.work.review.comments, summary: o.summary, commit: o.commit, log: o.log });
  o.log.info('replied in review threads', { posted, comments: o.work.review.comments.length });
}
