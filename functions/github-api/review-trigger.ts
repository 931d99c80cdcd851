import { z } from 'zod';
import { deliveryBase, mentions, repositorySchema, userSchema, type GithubTrigger } from './github-trigger.ts';

/**
 * Deliveries about a pull request rather than an issue: review comments and reviews
 * (`pull_request_review_comment`, `pull_request_review`), checks that completed
 * (`check_suite`, `check_run`, `workflow_run`) and a PR closed (`pull_request`). Cut down to the
 * facts a run needs, as github-trigger.ts does for issues; whether the PR is Stratus's is the
 * webhook's question (functions/github/follow-up-delivery.ts).
 */
const envelope = {
  repository: repositorySchema,
  sender: userSchema,
  installation: z.object({ id: z.number().int() }).optional(),
};
const pullSchema = z.object({ number: z.number().int(), title: z.string() });

const reviewCommentSchema = z.object({
  action: z.literal('created'),
  comment: z.object({ id: z.number().int(), body: z.string().nullable() }),
  pull_request: pullSchema,
  ...envelope,
});
const reviewSchema = z.object({
  action: z.literal('submitted'),
  review: z.object({ id: z.number().int(), body: z.string().nullable(), state: z.string() }),
  pull_request: pullSchema,
  ...envelope,
});
const prRefs = z.array(z.object({ number: z.number().int() }));
const checkSchemas = {
  check_suite: z.object({
    action: z.literal('completed'),
    check_suite: z.object({ conclusion: z.string().nullable(), head_sha: z.string(), pull_requests: prRefs }),
    ...envelope,
  }),
  check_run: z.object({
    action: z.literal('completed'),
    check_run: z.object({ conclusion: z.string().nullable(), head_sha: z.string(), pull_requests: prRefs }),
    ...envelope,
  }),
  workflow_run: z.object({
    action: z.literal('completed'),
    workflow_run: z.object({ conclusion: z.string().nullable(), head_sha: z.string(), pull_requests: prRefs }),
    ...envelope,
  }),
};
const closedSchema = z.object({
  action: z.literal('closed'),
  pull_request: z.object({
    number: z.number().int(),
    title: z.string(),
    merged: z.boolean().nullable().optional(),
    merged_at: z.string().nullable().optional(),
  }),
  ...envelope,
});

/** Conclusions that mean the checks need a fix (not success, neutral, skipped, cancelled or stale). */
const FAILED = new Set(['failure', 'timed_out', 'startup_failure']);

export type FollowUp = { trigger: GithubTrigger } | { closed: { number: number; merged: boolean; sender: string } } | { ignored: string };

/** What a pull request event asks for, or undefined for events this file does not read. */
export function followUpFromDelivery(
  event: string,
  deliveryId: string,
  payload: unknown,
  match: { mention: string; anyReview: boolean },
): FollowUp | undefined {
  if (event === 'pull_request_review_comment') {
    const p = reviewCommentSchema.safeParse(payload);
    if (!p.success) return { ignored: 'a pull_request_review_comment event other than "created"' };
    // Every review comment belongs to a review, whose own delivery answers it when any review is answered.
    if (match.anyReview) return { ignored: 'review comments are answered with their review' };
    if (!mentions(p.data.comment.body ?? '', match.mention)) return { ignored: `the review comment does not mention ${match.mention}` };
    return { trigger: { ...base('review', deliveryId, p.data, p.data.pull_request), review: { commentIds: [p.data.comment.id] } } };
  }
  if (event === 'pull_request_review') {
    const p = reviewSchema.safeParse(payload);
    if (!p.success) return { ignored: 'a pull_request_review event other than "submitted"' };
    // The review's own body carries the mention; its comments are read when the run starts.
    const mentioned = mentions(p.data.review.body ?? '', match.mention);
    if (!match.anyReview && !mentioned) return { ignored: `the review does not mention ${match.mention}` };
    if (!mentioned && p.data.review.state.toLowerCase() === 'approved') return { ignored: 'an approval asks for no change' };
    return { trigger: { ...base('review', deliveryId, p.data, p.data.pull_request), review: { commentIds: [], reviewId: p.data.review.id } } };
  }
  if (event === 'check_suite' || event === 'check_run' || event === 'workflow_run') return checksFrom(event, deliveryId, payload);
  if (event === 'pull_request') {
    const p = closedSchema.safeParse(payload);
    if (!p.success) return { ignored: 'a pull_request event other than "closed"' };
    const merged = p.data.pull_request.merged === true || Boolean(p.data.pull_request.merged_at);
    return { closed: { number: p.data.pull_request.number, merged, sender: p.data.sender.login } };
  }
  return undefined;
}

function checksFrom(event: keyof typeof checkSchemas, deliveryId: string, payload: unknown): FollowUp {
  const p = checkSchemas[event].safeParse(payload);
  if (!p.success) return { ignored: `a ${event} event other than "completed"` };
  const data = p.data as z.infer<(typeof checkSchemas)['check_suite']> &
    Record<string, { conclusion: string | null; head_sha: string; pull_requests: { number: number }[] }>;
  const checks = data[event]!;
  if (!FAILED.has(checks.conclusion ?? '')) return { ignored: `the checks concluded "${checks.conclusion ?? 'nothing'}", not a failure` };
  const pr = checks.pull_requests[0];
  if (!pr) return { ignored: 'the failed checks belong to no pull request of this repository' };
  return { trigger: { ...base('check', deliveryId, data, { number: pr.number, title: 'Fix the failing checks' }), checks: { headSha: checks.head_sha } } };
}

function base(
  trigger: GithubTrigger['trigger'],
  deliveryId: string,
  p: { repository: z.infer<typeof repositorySchema>; sender: { login: string; type: string }; installation?: { id: number } },
  pull: { number: number; title: string },
): GithubTrigger {
  return { ...deliveryBase(deliveryId, trigger, p), number: pull.number, isPullRequest: true, title: pull.title };
}
