import examples from '@octokit/webhooks-examples/api.github.com/index.json' with { type: 'json' };
import { describe, expect, it } from 'vitest';
import { ownActivity } from '../../../functions/github/own-activity.ts';

type Example = { name: string; examples: Record<string, any>[] };
const sample = (event: string, action: string) =>
  structuredClone((examples as unknown as Example[]).find((e) => e.name === event)!.examples.find((x) => x.action === action)!);
const own = { appId: '4242', commitAuthor: { email: 'Stratus@Example.com' } };

describe("ownActivity: what Stratus did itself starts nothing (GitHub's own sample payloads)", () => {
  it('finds the hidden mark in a comment, a review comment and a review', () => {
    const comment = sample('issue_comment', 'created');
    comment.comment.body = '<!-- stratus-progress -->\nDone; mention @stratus again.';
    const reviewComment = sample('pull_request_review_comment', 'created');
    reviewComment.comment.body = 'Fixed.\n<!-- stratus-reply -->';
    const review = sample('pull_request_review', 'submitted');
    review.review.body = '<!-- stratus-review --> summary';
    expect(ownActivity(comment, own)).toBe('the comment is one Stratus posted');
    expect(ownActivity(reviewComment, own)).toBe('the comment is one Stratus posted');
    expect(ownActivity(review, own)).toBe('the review is one Stratus posted');
  });

  it("knows its App's comments by performed_via_github_app, and only its App's", () => {
    const comment = sample('issue_comment', 'created');
    comment.comment.performed_via_github_app = { id: 4242, slug: 'stratus' };
    expect(ownActivity(comment, own)).toBe("the comment was made by Stratus's GitHub App");
    comment.comment.performed_via_github_app = { id: 99, slug: 'another-app' };
    expect(ownActivity(comment, own)).toBeUndefined();
    expect(ownActivity(comment, { ...own, appId: undefined })).toBeUndefined();
  });

  it("ignores a push of Stratus's commits (any case of its email), not someone else's, and never a check suite on them", () => {
    const push = structuredClone((examples as unknown as Example[]).find((e) => e.name === 'push')!.examples[0]!);
    push.head_commit = { ...push.head_commit, author: { name: 'Stratus', email: 'stratus@example.com' } };
    expect(ownActivity(push, own)).toBe('the commit is one Stratus made');
    push.head_commit.author.email = 'someone@example.com';
    expect(ownActivity(push, own)).toBeUndefined();
    // CI's verdict on a Stratus commit is what the failing-checks follow-through reads.
    const suite = sample('check_suite', 'completed');
    suite.check_suite.head_commit.author = { name: 'Stratus', email: 'stratus@example.com' };
    expect(ownActivity(suite, own)).toBeUndefined();
  });

  it("a human comment, or a payload of another shape, is nobody's own", () => {
    expect(ownActivity(sample('issue_comment', 'created'), own)).toBeUndefined();
    expect(ownActivity(null, own)).toBeUndefined();
    expect(ownActivity({ comment: 'not an object' }, own)).toBeUndefined();
  });
});
