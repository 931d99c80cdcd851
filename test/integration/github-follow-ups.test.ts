import { OWN_COMMENT_MARK } from '../../functions/github-api/own-comment-mark.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCRIPTED_MODEL_NAME } from '../../functions/model/model-names.ts';
import type { LocalStack } from '../../local/stack.ts';
import type { GithubApiServer } from '../support/github-api-server.ts';
import { startGithubAppStack, type GithubAppStack } from '../support/github-app-stack.ts';
import { commentPayload, finishedRun, labeledPayload, makeBareRepo, sendDelivery, type RepoRef } from '../support/github-fixture.ts';
import { checksCompletedPayload, pullRequestClosedPayload, reviewCommentPayload, reviewPayload } from '../support/github-pr-payloads.ts';
import { bash, text } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const SECRET = 'webhook-secret-for-tests';
const APP_ID = '4242';
const FAILING = {
  'add.js': 'module.exports = (a, b) => a - b;\n',
  'test.js': "const add = require('./add.js');\nif (add(2, 3) !== 5) { console.error('FAIL: add(2, 3) =', add(2, 3)); process.exit(1); }\nconsole.log('ok');\n",
};
const FIX = `sed -i 's/a - b/a + b/' add.js && node test.js`;
const TITLE = 'add() returns the wrong sum';

/** Reviews, failing checks, one budget per item, and results: webhook → worker → runner → stand-ins. */
describe('GitHub after the first pull request', () => {
  const tmp = makeTempDir();
  const gitRoot = makeTempDir();
  let stack: LocalStack;
  let gh: GithubApiServer;
  let git: GithubAppStack['git'];
  let api: GithubAppStack['api'];
  let close: GithubAppStack['close'] | undefined;
  const bare: Record<string, ReturnType<typeof makeBareRepo>> = {};
  const refs: Record<string, RepoRef> = {};
  const REPOS = {
    'acme/calc': { id: 2_001, settings: {} },
    'acme/ci': { id: 2_002, settings: { failingChecks: { enabled: true } } },
    'acme/ci-off': { id: 2_003, settings: {} },
    'acme/budgeted': { id: 2_004, settings: { budgets: { maxTurns: 2 } } },
    'acme/tokens': { id: 2_005, settings: { budgets: { maxTokens: 100_000 } } },
    'acme/anyreview': { id: 2_006, settings: { reviews: 'any' } },
  } as const;

  beforeAll(async () => {
    ({ stack, gh, git, api, close } = await startGithubAppStack({
      dataDir: tmp.dir,
      gitRoot: gitRoot.dir,
      appId: APP_ID,
      webhookSecret: SECRET,
      installationId: 77,
      stack: {
        // Priced, so the cost figures are not all zero.
        modelPrices: { [SCRIPTED_MODEL_NAME]: { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, perWebSearch: 0 } },
      },
    }));
    gh.permissions.set('maintainer', 'write');
    gh.permissions.set('reader', 'read');
    for (const [full, { id, settings }] of Object.entries(REPOS)) {
      bare[full] = makeBareRepo(gitRoot.dir, full, FAILING);
      refs[full] = { id, fullName: full, cloneUrl: `${git.url}/${full}.git`, installationId: 77 };
      gh.addRepository({ id, fullName: full, installationId: 77 });
      gh.addIssue(full, 1, { title: TITLE, body: 'add(2, 3) gives -1.', user: { login: 'reporter', type: 'User' } });
      expect((await api.request('POST', '/v1/github/repositories', { repository: full, settings })).status).toBe(201);
    }
  });

  afterAll(async () => {
    await close?.();
    tmp.cleanup();
    gitRoot.cleanup();
  });

  const send = (event: string, payload: unknown, deliveryId?: string) => sendDelivery(stack.apiUrl, SECRET, event, payload, deliveryId ? { deliveryId } : {});
  const runFor = (deliveryId: string) => finishedRun(api, deliveryId);

  /** A labelled issue made into a Stratus PR; returns the PR's number, branch, session and head. */
  async function stratusPullRequest(
    full: string,
    model: Parameters<NonNullable<LocalStack['model']>['enqueue']> = [{ content: [bash('p1', FIX)], stopReason: 'tool_use' }, text('Fixed add().')],
  ) {
    stack.model!.enqueue(...model);
    const sent = await send('issues', labeledPayload(refs[full]!, { number: 1, title: TITLE }, 'stratus', { login: 'maintainer' }));
    const run = await runFor(sent.deliveryId);
    expect(run.outcome).toMatch(/pr_opened/);
    const pr = gh.pulls(full)[0]!;
    return { number: pr.number, branch: run.branch as string, sessionId: run.sessionId as string, sha: bare[full]!.rev(run.branch)!, run };
  }

  const prompts = async (sessionId: string) => (await api.messages(sessionId)).filter((m) => m.kind === 'prompt').map((m) => JSON.stringify(m.content));

  describe('review comments and reviews', () => {
    let pr: Awaited<ReturnType<typeof stratusPullRequest>>;
    beforeAll(async () => {
      pr = await stratusPullRequest('acme/calc');
    });

    it("a writer's review comment with the mention is answered in its thread, with a new commit on the same branch", async () => {
      const hunk = '@@ -1 +1 @@\n-module.exports = (a, b) => a - b;\n+module.exports = (a, b) => a + b;';
      gh.addReviewComment('acme/calc', pr.number, {
        id: 5_001,
        path: 'add.js',
        line: 1,
        diffHunk: hunk,
        body: '@stratus name the parameters x and y',
        login: 'maintainer',
      });
      stack.model!.enqueue(
        { content: [bash('r1', "sed -i 's/(a, b) => a + b/(x, y) => x + y/' add.js && node test.js")], stopReason: 'tool_use' },
        text('Renamed the parameters.\n[comment 5001] Renamed a and b to x and y.'),
      );
      const sent = await send(
        'pull_request_review_comment',
        reviewCommentPayload(
          refs['acme/calc']!,
          { number: pr.number, title: TITLE },
          { id: 5_001, body: '@stratus name the parameters x and y', path: 'add.js', line: 1, diffHunk: hunk },
          { login: 'maintainer' },
        ),
      );
      expect(sent.body).toEqual({ accepted: true });
      const run = await runFor(sent.deliveryId);
      expect(run).toMatchObject({
        outcome: 'pr_updated',
        trigger: 'review',
        kind: 'pull_request',
        number: pr.number,
        sessionId: pr.sessionId,
        branch: pr.branch,
      });
      // A new commit on top of the PR's head, on the same branch.
      expect(bare['acme/calc']!.parent(pr.branch)).toBe(pr.sha);
      expect(bare['acme/calc']!.show(pr.branch, 'add.js')).toBe('module.exports = (x, y) => x + y;');
      // The reply is in the comment's thread, with the model's note and the commit.
      const replies = gh.repliesTo(5_001);
      expect(replies).toHaveLength(1);
      expect(replies[0]!.body).toContain('Renamed a and b to x and y.');
      expect(replies[0]!.body).toContain(run.commit.slice(0, 12));
      expect(gh.calls.some((c) => c.method === 'POST' && c.path === `/repos/acme/calc/pulls/${pr.number}/comments/5001/replies`)).toBe(true);
      // One summary comment on the PR: the pushed commit.
      const summary = gh.commentsOn('acme/calc', pr.number);
      expect(summary).toHaveLength(1);
      expect(summary[0]!.body).toContain(`pushed ${run.commit.slice(0, 12)}`);
      // The prompt carried the file, line and diff hunk, inside the untrusted block.
      const prompt = (await prompts(pr.sessionId)).at(-1)!;
      expect(prompt).toContain('review comment 5001 by @maintainer on `add.js` line 1');
      expect(prompt).toContain('-module.exports = (a, b) => a - b;');
      expect(prompt.indexOf('<untrusted_github_content>')).toBeLessThan(prompt.indexOf('name the parameters x and y'));
    });

    it('a submitted review with the mention answers each of its comments in its own thread', async () => {
      gh.addReview('acme/calc', pr.number, { id: 6_000, body: '@stratus two things', state: 'changes_requested', login: 'maintainer' });
      gh.addReviewComment('acme/calc', pr.number, {
        id: 6_001,
        reviewId: 6_000,
        path: 'add.js',
        line: 1,
        diffHunk: '@@ -1 +1 @@',
        body: 'add a comment',
        login: 'maintainer',
      });
      gh.addReviewComment('acme/calc', pr.number, {
        id: 6_002,
        reviewId: 6_000,
        path: 'test.js',
        line: 2,
        diffHunk: '@@ -2 +2 @@',
        body: 'is this test enough?',
        login: 'maintainer',
      });
      stack.model!.enqueue(
        { content: [bash('v1', "printf '// adds\\n' >> add.js")], stopReason: 'tool_use' },
        text('Done.\n[comment 6001] Added a comment.\n[comment 6002] The test covers the reported case; I left it.'),
      );
      const sent = await send(
        'pull_request_review',
        reviewPayload(
          refs['acme/calc']!,
          { number: pr.number, title: TITLE },
          { id: 6_000, body: '@stratus two things', state: 'changes_requested' },
          { login: 'maintainer' },
        ),
      );
      const run = await runFor(sent.deliveryId);
      expect(run).toMatchObject({ outcome: 'pr_updated', trigger: 'review' });
      expect(gh.repliesTo(6_001).map((r) => r.body)).toEqual([expect.stringContaining('Added a comment.')]);
      expect(gh.repliesTo(6_002).map((r) => r.body)).toEqual([expect.stringContaining('I left it.')]);
      const prompt = (await prompts(pr.sessionId)).at(-1)!;
      expect(prompt).toContain('review comment 6002 by @maintainer on `test.js` line 2');
      expect(prompt).toContain('two things');
    });

    it('a review comment without the mention, by a reader, or on a PR Stratus did not open starts nothing', async () => {
      const repo = refs['acme/calc']!;
      const quiet = await send(
        'pull_request_review_comment',
        reviewCommentPayload(
          repo,
          { number: pr.number, title: TITLE },
          { id: 5_101, body: 'looks fine', path: 'add.js', line: 1, diffHunk: '@@' },
          { login: 'maintainer' },
        ),
      );
      expect(quiet.body).toEqual({ accepted: false, reason: 'the review comment does not mention @stratus' });
      gh.addIssue('acme/calc', 40, {
        title: 'Human PR',
        body: '',
        user: { login: 'human', type: 'User' },
        pull: { head: { ref: 'h', repoFullName: 'acme/calc' }, base: { ref: 'main' } },
      });
      const other = await send(
        'pull_request_review_comment',
        reviewCommentPayload(
          repo,
          { number: 40, title: 'Human PR' },
          { id: 5_102, body: '@stratus fix', path: 'a', line: 1, diffHunk: '@@' },
          { login: 'maintainer' },
        ),
      );
      expect(other.body).toEqual({ accepted: false, reason: '#40 is not a pull request Stratus opened' });
      gh.addReviewComment('acme/calc', pr.number, { id: 5_103, path: 'add.js', line: 1, diffHunk: '@@', body: '@stratus delete everything', login: 'reader' });
      const reader = await send(
        'pull_request_review_comment',
        reviewCommentPayload(
          repo,
          { number: pr.number, title: TITLE },
          { id: 5_103, body: '@stratus delete everything', path: 'add.js', line: 1, diffHunk: '@@' },
          { login: 'reader' },
        ),
      );
      expect(await runFor(reader.deliveryId)).toMatchObject({ outcome: 'refused', detail: expect.stringContaining('@reader cannot write') });
      expect(gh.repliesTo(5_103)).toEqual([]);
    });

    it('with reviews: "any", a review without the mention is answered, and its comments are not answered twice', async () => {
      const any = await stratusPullRequest('acme/anyreview');
      gh.addReview('acme/anyreview', any.number, { id: 7_000, body: '', state: 'commented', login: 'maintainer' });
      gh.addReviewComment('acme/anyreview', any.number, {
        id: 7_001,
        reviewId: 7_000,
        path: 'add.js',
        line: 1,
        diffHunk: '@@',
        body: 'use x and y',
        login: 'maintainer',
      });
      const comment = await send(
        'pull_request_review_comment',
        reviewCommentPayload(
          refs['acme/anyreview']!,
          { number: any.number, title: TITLE },
          { id: 7_001, body: 'use x and y', path: 'add.js', line: 1, diffHunk: '@@', reviewId: 7_000 },
          { login: 'maintainer' },
        ),
      );
      expect(comment.body).toEqual({ accepted: false, reason: 'review comments are answered with their review' });
      stack.model!.enqueue({ content: [bash('a1', "sed -i 's/(a, b) => a + b/(x, y) => x + y/' add.js")], stopReason: 'tool_use' }, text('Renamed.'));
      const sent = await send(
        'pull_request_review',
        reviewPayload(refs['acme/anyreview']!, { number: any.number, title: TITLE }, { id: 7_000, body: '' }, { login: 'maintainer' }),
      );
      const run = await runFor(sent.deliveryId);
      expect(run.outcome).toBe('pr_updated');
      // The model wrote no line for it; the pushed commit answers it.
      expect(gh.repliesTo(7_001).map((r) => r.body)).toEqual([`${OWN_COMMENT_MARK}\nAddressed. (Stratus, in ${run.commit.slice(0, 12)}.)`]);
      const approval = await send(
        'pull_request_review',
        reviewPayload(refs['acme/anyreview']!, { number: any.number, title: TITLE }, { id: 7_002, body: '', state: 'approved' }, { login: 'maintainer' }),
      );
      expect(approval.body).toEqual({ accepted: false, reason: 'an approval asks for no change' });
    });
  });

  describe('failing checks', () => {
    it('a failed check suite is fixed once per commit from its check output and bounded log tail, up to the attempts set, then a comment', async () => {
      const pr = await stratusPullRequest('acme/ci', [{ content: [bash('c0', "printf '// wip\\n' >> add.js")], stopReason: 'tool_use' }, text('Started.')]);
      const repo = refs['acme/ci']!;
      const log = [...Array.from({ length: 5_000 }, (_, i) => `noise line ${i}`), 'FAIL: add(2, 3) = -1', 'Process completed with exit code 1.'].join('\n');
      gh.addCheckRun('acme/ci', pr.sha, {
        id: 8_001,
        name: 'test (node 22)',
        conclusion: 'failure',
        output: { title: 'Tests failed', summary: '1 failing' },
        log,
      });
      gh.addCheckRun('acme/ci', pr.sha, { id: 8_002, name: 'lint', conclusion: 'success' });
      stack.model!.enqueue({ content: [bash('c1', FIX)], stopReason: 'tool_use' }, text('The test failed because add() subtracted; fixed.'));
      // One failure reported three ways, at once: one run.
      const events = ['check_suite', 'check_run', 'workflow_run'] as const;
      const sent = await Promise.all(
        events.map((e) => send(e, checksCompletedPayload(repo, e, { number: pr.number, sha: pr.sha, branch: pr.branch, conclusion: 'failure' }))),
      );
      const accepted = sent.filter((s) => (s.body as { accepted: boolean }).accepted);
      expect(accepted).toHaveLength(1);
      expect(sent.filter((s) => !(s.body as { accepted: boolean }).accepted).map((s) => s.body)).toEqual([
        { accepted: false, reason: `the failed checks of ${pr.sha.slice(0, 12)} are already being fixed` },
        { accepted: false, reason: `the failed checks of ${pr.sha.slice(0, 12)} are already being fixed` },
      ]);
      const run = await runFor(accepted[0]!.deliveryId);
      expect(run).toMatchObject({ outcome: 'pr_updated', trigger: 'check', sessionId: pr.sessionId });
      expect(bare['acme/ci']!.show(pr.branch, 'add.js')).toContain('a + b');
      const prompt = (await prompts(pr.sessionId)).at(-1)!;
      expect(prompt).toContain('check \\"test (node 22)\\" (failure)');
      expect(prompt).toContain('Tests failed');
      expect(prompt).toContain('FAIL: add(2, 3) = -1');
      expect(prompt).not.toContain('noise line 100\\n');
      expect(prompt).not.toContain('lint');
      expect(prompt.length).toBeLessThan(12_000);

      // A second failure, on the fix's commit: the second (last) attempt.
      const sha2 = bare['acme/ci']!.rev(pr.branch)!;
      gh.addCheckRun('acme/ci', sha2, { id: 8_003, name: 'test (node 22)', conclusion: 'failure', log: 'FAIL again' });
      stack.model!.enqueue({ content: [bash('c2', "printf '// again\\n' >> add.js")], stopReason: 'tool_use' }, text('Tried again.'));
      const second = await send(
        'check_suite',
        checksCompletedPayload(repo, 'check_suite', { number: pr.number, sha: sha2, branch: pr.branch, conclusion: 'failure' }),
      );
      expect((await runFor(second.deliveryId)).outcome).toBe('pr_updated');

      // The third failure: no run, one comment saying the attempts are used up; after it, nothing.
      const sha3 = bare['acme/ci']!.rev(pr.branch)!;
      const third = await send(
        'check_suite',
        checksCompletedPayload(repo, 'check_suite', { number: pr.number, sha: sha3, branch: pr.branch, conclusion: 'failure' }),
      );
      expect(await runFor(third.deliveryId)).toMatchObject({ outcome: 'checks_limit_reached' });
      expect(gh.commentsOn('acme/ci', pr.number).at(-1)!.body).toContain('tried 2 times to fix the failing checks');
      const fourth = await send(
        'workflow_run',
        checksCompletedPayload(repo, 'workflow_run', { number: pr.number, sha: sha3, branch: pr.branch, conclusion: 'failure' }),
      );
      expect(fourth.body).toEqual({ accepted: false, reason: "the 2 attempts at fixing this pull request's checks are used up" });
      // Success, and checks of an older commit, start nothing.
      const stale = await send(
        'check_run',
        checksCompletedPayload(repo, 'check_run', { number: pr.number, sha: pr.sha, branch: pr.branch, conclusion: 'failure' }),
      );
      expect(stale.body).toEqual({ accepted: false, reason: `the failed checks ran on ${pr.sha.slice(0, 12)}, not the branch's head` });
      const ok = await send(
        'check_suite',
        checksCompletedPayload(repo, 'check_suite', { number: pr.number, sha: sha3, branch: pr.branch, conclusion: 'success' }),
      );
      expect(ok.body).toEqual({ accepted: false, reason: 'the checks concluded "success", not a failure' });
    });

    it('is off unless the repository enables it', async () => {
      const pr = await stratusPullRequest('acme/ci-off');
      const sent = await send(
        'check_suite',
        checksCompletedPayload(refs['acme/ci-off']!, 'check_suite', { number: pr.number, sha: pr.sha, branch: pr.branch, conclusion: 'failure' }),
      );
      expect(sent.body).toEqual({ accepted: false, reason: 'fixing failing checks is off for this repository (settings.failingChecks)' });
    });
  });

  describe('one budget per work item', () => {
    it('runs count per issue across its PR follow-ups; concurrent and repeated triggers never exceed it; a writer raises it', async () => {
      const full = 'acme/budgeted';
      const repo = refs[full]!;
      const pr = await stratusPullRequest(full);
      expect(gh.commentsOn(full, 1)[0]!.body).toContain('Budget for this item (every run on it): 1 of 2 runs');
      // Three mentions at once on the PR: one more run at most, whatever the timing.
      for (const id of [301, 302, 303]) gh.addComment(full, pr.number, { id, body: '@stratus document add()', login: 'maintainer' });
      stack.model!.enqueue({ content: [bash('b1', "printf '// doc\\n' >> add.js")], stopReason: 'tool_use' }, text('Documented.'));
      const mention = (id: number) =>
        commentPayload(repo, { number: pr.number, title: TITLE, pullRequest: true }, { id, body: '@stratus document add()' }, { login: 'maintainer' });
      const sent = await Promise.all([301, 302, 303].map((id) => send('issue_comment', mention(id))));
      const runs = await Promise.all(sent.map((s) => runFor(s.deliveryId)));
      expect(runs.filter((r) => r.outcome === 'pr_updated')).toHaveLength(1);
      // The others joined the working run's queue (#31 part 4), or found the budget spent.
      expect(runs.every((r) => ['pr_updated', 'queued_into_run', 'already_running', 'budget_spent'].includes(r.outcome))).toBe(true);
      // The next trigger finds it spent: a comment naming the budget, no session touched.
      const spent = await send('issue_comment', mention(301));
      const spentRun = await runFor(spent.deliveryId);
      expect(spentRun).toMatchObject({ outcome: 'budget_spent', detail: expect.stringContaining('maxTurns (2 of 2 runs)') });
      expect(gh.commentsOn(full, pr.number).at(-1)!.body).toContain('@stratus budget +5usd');
      // Its redelivery does nothing more.
      expect((await send('issue_comment', mention(301), spent.deliveryId)).body).toEqual({ accepted: false, reason: 'duplicate delivery' });
      const item = await api.request('GET', `/v1/github/repositories/${full}/items/${pr.number}`);
      expect(item.json).toMatchObject({ number: 1, runs: 2, limits: { maxRuns: 2 } });

      // A reader cannot raise it; a writer's command can, and the API too.
      gh.addComment(full, pr.number, { id: 310, body: '@stratus budget +1 runs', login: 'reader' });
      const byReader = await send(
        'issue_comment',
        commentPayload(repo, { number: pr.number, title: TITLE, pullRequest: true }, { id: 310, body: '@stratus budget +1 runs' }, { login: 'reader' }),
      );
      expect((await runFor(byReader.deliveryId)).outcome).toBe('refused');
      gh.addComment(full, pr.number, { id: 311, body: '@stratus budget +1 runs', login: 'maintainer' });
      const raised = await send(
        'issue_comment',
        commentPayload(repo, { number: pr.number, title: TITLE, pullRequest: true }, { id: 311, body: '@stratus budget +1 runs' }, { login: 'maintainer' }),
      );
      expect(await runFor(raised.deliveryId)).toMatchObject({ outcome: 'budget_raised', item: { runs: 2, limits: { maxRuns: 3 } } });
      expect(gh.commentsOn(full, pr.number).at(-1)!.body).toContain('budget raised by 1 runs');
      const viaApi = await api.request('POST', `/v1/github/repositories/${full}/items/${pr.number}/budget`, { addRuns: 1 });
      expect(viaApi).toMatchObject({ status: 200, json: { runs: 2, limits: { maxRuns: 4 } } });
      expect((await api.request('POST', `/v1/github/repositories/${full}/items/${pr.number}/budget`, {})).status).toBe(400);
      stack.model!.enqueue(text('Nothing to change.'));
      const after = await send('issue_comment', mention(302));
      expect(await runFor(after.deliveryId)).toMatchObject({ outcome: 'no_changes', item: { runs: 3, limits: { maxRuns: 4 } } });
    });

    it('concurrent run starts on one item take exactly the runs left', async () => {
      const key = 'item:gh:9#1';
      const now = new Date().toISOString();
      const took = await Promise.all(Array.from({ length: 8 }, () => stack.deps.githubItems.startRun(key, { maxRuns: 3 }, now)));
      expect(took.filter(Boolean)).toHaveLength(3);
      expect((await stack.deps.githubItems.get(key)).runs).toBe(3);
    });

    it("a run that spends the item's tokens stops with a draft PR, and the next trigger gets a comment instead of a run", async () => {
      const full = 'acme/tokens';
      const heavy = { input_tokens: 60_000, output_tokens: 10 };
      stack.model!.enqueue(
        { content: [bash('t1', FIX)], stopReason: 'tool_use', usage: heavy },
        { content: [bash('t2', 'ls')], stopReason: 'tool_use', usage: heavy },
      );
      const sent = await send('issues', labeledPayload(refs[full]!, { number: 1, title: TITLE }, 'stratus', { login: 'maintainer' }));
      const run = await runFor(sent.deliveryId);
      expect(run).toMatchObject({ outcome: 'draft_pr_opened', item: { runs: 1, tokens: expect.any(Number), limits: { maxTokens: 100_000 } } });
      expect(run.item.tokens).toBeGreaterThanOrEqual(100_000);
      expect(bare[full]!.show(run.branch, 'add.js')).toBe('module.exports = (a, b) => a + b;');
      expect(gh.pulls(full)[0]!.pull!.draft).toBe(true);
      gh.addComment(full, 1, { id: 320, body: '@stratus continue', login: 'maintainer' });
      const again = await send(
        'issue_comment',
        commentPayload(refs[full]!, { number: 1, title: TITLE }, { id: 320, body: '@stratus continue' }, { login: 'maintainer' }),
      );
      expect(await runFor(again.deliveryId)).toMatchObject({ outcome: 'budget_spent', detail: expect.stringContaining('maxTokens') });
    });
  });

  describe('results', () => {
    it('records Stratus PRs merged or closed, and GET /v1/github/stats counts them per repository', async () => {
      const calcPr = gh.pulls('acme/calc')[0]!;
      const ciPr = gh.pulls('acme/ci')[0]!;
      const merged = await send(
        'pull_request',
        pullRequestClosedPayload(refs['acme/calc']!, { number: calcPr.number, title: TITLE, merged: true }, { login: 'maintainer' }),
      );
      expect(merged.body).toEqual({ accepted: false, reason: 'pull request merged: recorded' });
      // A redelivery records it once.
      await send(
        'pull_request',
        pullRequestClosedPayload(refs['acme/calc']!, { number: calcPr.number, title: TITLE, merged: true }, { login: 'maintainer' }),
        merged.deliveryId,
      );
      const closed = await send(
        'pull_request',
        pullRequestClosedPayload(refs['acme/ci']!, { number: ciPr.number, title: TITLE, merged: false }, { login: 'maintainer' }),
      );
      expect(closed.body).toEqual({ accepted: false, reason: 'pull request closed: recorded' });
      const human = await send(
        'pull_request',
        pullRequestClosedPayload(refs['acme/calc']!, { number: 40, title: 'Human PR', merged: true }, { login: 'maintainer' }),
      );
      expect(human.body).toEqual({ accepted: false, reason: '#40 is not a pull request Stratus opened' });

      const stats = await api.request('GET', '/v1/github/stats');
      expect(stats.status).toBe(200);
      const calc = stats.json.repositories.find((r: { repository: string }) => r.repository === 'acme/calc');
      // Runs on acme/calc: the issue, the review comment, the review, the reader's refusal (no turn).
      expect(calc).toMatchObject({ pullRequestsOpened: 1, merged: 1, closedUnmerged: 0, runs: 3 });
      const calcRuns = (await api.request('GET', '/v1/github/runs?limit=200')).json.runs.filter(
        (r: { repository: string; cost: unknown }) => r.repository === 'acme/calc' && r.cost,
      );
      const cost = calcRuns.reduce((sum: number, r: { cost: { usd: number } }) => sum + r.cost.usd, 0);
      expect(cost).toBeGreaterThan(0);
      expect(calc.costUsd).toBeCloseTo(cost, 5);
      expect(calc.costPerMergedPrUsd).toBeCloseTo(cost, 5);
      expect(stats.json.repositories.find((r: { repository: string }) => r.repository === 'acme/ci')).toMatchObject({
        merged: 0,
        closedUnmerged: 1,
        runs: 3,
        costPerMergedPrUsd: null,
      });
      // A period before any of it counts nothing; a bad period is a 400.
      const past = await api.request('GET', '/v1/github/stats?from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z');
      expect(past.json.repositories).toEqual([]);
      expect((await api.request('GET', '/v1/github/stats?from=2020-02-01T00:00:00Z&to=2020-01-01T00:00:00Z')).status).toBe(400);
      const runs = (await api.request('GET', '/v1/github/runs?limit=200')).json.runs;
      expect(runs.find((r: { trigger: string; repository: string }) => r.trigger === 'closed' && r.repository === 'acme/calc')).toMatchObject({
        outcome: 'merged',
        number: calcPr.number,
      });
    });
  });
});
