import examples from '@octokit/webhooks-examples/api.github.com/index.json' with { type: 'json' };
import type { RepoRef } from './github-fixture.ts';

/**
 * Real pull request payloads from @octokit/webhooks-examples (review comments, reviews, check
 * suites, check runs, workflow runs, a PR closed), pointed at our repository, PR and sender.
 */
type Example = { name: string; examples: Record<string, unknown>[] };
const all = examples as unknown as Example[];

function example(event: string, match: (e: Record<string, unknown>) => boolean): Record<string, unknown> {
  const found = all.find((e) => e.name === event)?.examples.find(match);
  if (!found) throw new Error(`No ${event} example in @octokit/webhooks-examples`);
  return structuredClone(found);
}

function adaptRepo(payload: Record<string, unknown>, repo: RepoRef, sender: { login: string; type?: string }) {
  const [owner, name] = repo.fullName.split('/') as [string, string];
  const repository = payload.repository as Record<string, unknown>;
  Object.assign(repository, { id: repo.id, full_name: repo.fullName, name, clone_url: repo.cloneUrl, default_branch: repo.defaultBranch ?? 'main' });
  Object.assign(repository.owner as object, { login: owner });
  payload.sender = { ...(payload.sender as object), login: sender.login, type: sender.type ?? 'User' };
  payload.installation = { id: repo.installationId ?? 1, node_id: 'x' };
  return payload;
}

function adaptPull(payload: Record<string, unknown>, pr: { number: number; title: string }) {
  Object.assign(payload.pull_request as object, { number: pr.number, title: pr.title });
  return payload;
}

/** A real `pull_request_review_comment.created` sample. */
export function reviewCommentPayload(
  repo: RepoRef,
  pr: { number: number; title: string },
  comment: { id: number; body: string; path: string; line: number; diffHunk: string; reviewId?: number },
  sender: { login: string; type?: string },
) {
  const payload = adaptPull(
    adaptRepo(
      example('pull_request_review_comment', (e) => e.action === 'created'),
      repo,
      sender,
    ),
    pr,
  );
  Object.assign(payload.comment as object, {
    id: comment.id,
    body: comment.body,
    path: comment.path,
    line: comment.line,
    diff_hunk: comment.diffHunk,
    pull_request_review_id: comment.reviewId ?? 1,
    user: { login: sender.login, type: sender.type ?? 'User' },
  });
  return payload;
}

/** A real `pull_request_review.submitted` sample. */
export function reviewPayload(
  repo: RepoRef,
  pr: { number: number; title: string },
  review: { id: number; body: string; state?: string },
  sender: { login: string; type?: string },
) {
  const payload = adaptPull(
    adaptRepo(
      example('pull_request_review', (e) => e.action === 'submitted'),
      repo,
      sender,
    ),
    pr,
  );
  Object.assign(payload.review as object, {
    id: review.id,
    body: review.body,
    state: review.state ?? 'commented',
    user: { login: sender.login, type: 'User' },
  });
  return payload;
}

type CheckEvent = 'check_suite' | 'check_run' | 'workflow_run';

/** A real completed `check_suite`, `check_run` or `workflow_run` sample, concluded `conclusion` on commit `sha` of PR `number`. */
export function checksCompletedPayload(repo: RepoRef, event: CheckEvent, o: { number: number; sha: string; branch: string; conclusion: string }) {
  const payload = adaptRepo(
    example(event, (e) => e.action === 'completed'),
    repo,
    { login: 'stratus-app[bot]', type: 'Bot' },
  );
  const checks = payload[event] as Record<string, unknown>;
  const pr = { number: o.number, head: { ref: o.branch, sha: o.sha, repo: { id: repo.id, name: repo.fullName.split('/')[1] } }, base: { ref: 'main' } };
  Object.assign(checks, { conclusion: o.conclusion, head_sha: o.sha, head_branch: o.branch, pull_requests: [pr] });
  return payload;
}

/** A real `pull_request.closed` sample: merged or not. */
export function pullRequestClosedPayload(repo: RepoRef, pr: { number: number; title: string; merged: boolean }, sender: { login: string }) {
  const payload = adaptPull(
    adaptRepo(
      example('pull_request', (e) => e.action === 'closed'),
      repo,
      sender,
    ),
    pr,
  );
  Object.assign(payload.pull_request as object, { merged: pr.merged, merged_at: pr.merged ? new Date().toISOString() : null });
  payload.number = pr.number;
  return payload;
}
