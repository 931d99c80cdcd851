import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import type { GithubApiServer } from '../support/github-api-server.ts';
import { startGithubAppStack, type GithubAppStack } from '../support/github-app-stack.ts';
import { commentPayload, finishedRun, labeledPayload, makeBareRepo, pushPayload, sendDelivery, type RepoRef } from '../support/github-fixture.ts';
import { text } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const SECRET = 'no-loops-secret';
const APP_ID = '5151';
const AUTHOR = { name: 'Stratus Test', email: 'stratus@example.com' };
const TOKENS = { 'token-local': 'local', 'token-other': 'other', 'token-admin': '@admin' };

describe('GitHub: Stratus never answers itself, and a ping-pong with another bot stops', () => {
  const tmp = makeTempDir();
  const gitRoot = makeTempDir();
  let stack: LocalStack;
  let gh: GithubApiServer;
  let git: GithubAppStack['git'];
  let api: GithubAppStack['api'];
  let close: GithubAppStack['close'] | undefined;
  let repo: RepoRef;
  let pingpong: RepoRef;

  beforeAll(async () => {
    ({ stack, gh, git, api, close } = await startGithubAppStack({
      dataDir: tmp.dir,
      gitRoot: gitRoot.dir,
      appId: APP_ID,
      webhookSecret: SECRET,
      installationId: 88,
      github: { commitAuthor: AUTHOR },
      stack: { apiTokens: TOKENS },
      tokens: { tenant: 'token-local', admin: 'token-admin' },
    }));
    makeBareRepo(gitRoot.dir, 'acme/app', { 'README.md': 'app\n' });
    makeBareRepo(gitRoot.dir, 'acme/pingpong', { 'README.md': 'pingpong\n' });
    repo = { id: 3_001, fullName: 'acme/app', cloneUrl: `${git.url}/acme/app.git`, installationId: 88 };
    pingpong = { id: 3_002, fullName: 'acme/pingpong', cloneUrl: `${git.url}/acme/pingpong.git`, installationId: 88 };
    gh.addRepository({ id: 3_001, fullName: 'acme/app', installationId: 88 });
    gh.addRepository({ id: 3_002, fullName: 'acme/pingpong', installationId: 88 });
    gh.permissions.set('maintainer', 'write');
    gh.permissions.set('lint-bot[bot]', 'write');
    expect((await api.request('POST', '/v1/github/repositories', { repository: 'acme/app' })).status).toBe(201);
    const connected = await api.request('POST', '/v1/github/repositories', {
      repository: 'acme/pingpong',
      allowBots: true,
      settings: { followThrough: { rateLimit: 2 } },
    });
    expect(connected.status).toBe(201);
    expect(connected.json.settings).toEqual({ followThrough: { rateLimit: 2 } });
  });

  afterAll(async () => {
    await close?.();
    tmp.cleanup();
    gitRoot.cleanup();
  });

  it("a delivery of Stratus's own comment, its App's comment or its own commit starts nothing, even when it mentions Stratus", async () => {
    gh.addIssue('acme/app', 1, { title: 'Docs', body: 'b', user: { login: 'reporter', type: 'User' } });
    stack.model!.enqueue(text('Nothing to change here; ask @stratus again with details.'));
    const first = await sendDelivery(stack.apiUrl, SECRET, 'issues', labeledPayload(repo, { number: 1, title: 'Docs' }, 'stratus', { login: 'maintainer' }));
    expect((await finishedRun(api, first.deliveryId)).outcome).toBe('no_changes');
    // The run's own comment, as GitHub delivers it back: it quotes the model, which mentions @stratus.
    const [own] = gh.commentsOn('acme/app', 1);
    expect(own!.body).toContain('ask @stratus again');
    expect(own!.performedViaApp).toBe(Number(APP_ID));
    const marked = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issue_comment',
      commentPayload(
        repo,
        { number: 1, title: 'Docs' },
        { id: own!.id, body: own!.body, performedViaApp: Number(APP_ID) },
        { login: 'stratus-test[bot]', type: 'Bot' },
      ),
    );
    // A comment through the App without the mark (edited by hand, say) is still the App's.
    const viaApp = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issue_comment',
      commentPayload(
        repo,
        { number: 1, title: 'Docs' },
        { id: 555, body: '@stratus go', performedViaApp: Number(APP_ID) },
        { login: 'stratus-test[bot]', type: 'Bot' },
      ),
    );
    const commit = await sendDelivery(stack.apiUrl, SECRET, 'push', pushPayload(repo, 'refs/heads/stratus/issue-1-docs', AUTHOR));
    expect(marked.body).toEqual({ accepted: false, reason: 'the comment is one Stratus posted' });
    expect(viaApp.body).toEqual({ accepted: false, reason: "the comment was made by Stratus's GitHub App" });
    expect(commit.body).toEqual({ accepted: false, reason: 'the commit is one Stratus made' });
    for (const d of [marked, viaApp, commit]) expect(await stack.deps.github.getDelivery(d.deliveryId)).toBeUndefined();
    // Someone else's push is not Stratus's (and starts nothing for its own reason).
    const theirs = await sendDelivery(stack.apiUrl, SECRET, 'push', pushPayload(repo, 'refs/heads/main', { name: 'Someone', email: 'someone@example.com' }));
    expect(theirs.body).toEqual({ accepted: false, reason: 'event "push" does not start runs' });
    const runs = (await api.request('GET', '/v1/github/runs?limit=200')).json.runs;
    expect(runs.filter((r: { number: number; repository: string }) => r.repository === 'acme/app')).toHaveLength(1);
    expect(gh.commentsOn('acme/app', 1)).toHaveLength(1);
  });

  it('another bot (with allowBots) pinging Stratus concurrently passes the rate limit exactly twice, and one comment says so', async () => {
    gh.addIssue('acme/pingpong', 5, { title: 'Lint', body: 'b', user: { login: 'reporter', type: 'User' } });
    stack.model!.enqueue({ ...text('Looked; nothing to change.'), delayMs: 1_000 }, text('Still nothing to change.'));
    const mention = (id: number) =>
      commentPayload(pingpong, { number: 5, title: 'Lint' }, { id, body: `@stratus lint says hi ${id}` }, { login: 'lint-bot[bot]', type: 'Bot' });
    for (const id of [51, 52, 53, 54, 55]) gh.addComment('acme/pingpong', 5, { id, body: `@stratus lint says hi ${id}`, login: 'lint-bot[bot]', type: 'Bot' });
    const sent = await Promise.all([51, 52, 53, 54, 55].map((id) => sendDelivery(stack.apiUrl, SECRET, 'issue_comment', mention(id))));
    for (const s of sent) expect(s.body).toEqual({ accepted: true });
    const runs = await Promise.all(sent.map((s) => finishedRun(api, s.deliveryId)));
    const outcomes = runs.map((r) => r.outcome);
    expect(outcomes.filter((o) => o === 'rate_limited')).toHaveLength(3);
    expect(outcomes.filter((o) => o !== 'rate_limited')).toHaveLength(2);
    const limitComments = gh.commentsOn('acme/pingpong', 5).filter((c) => c.body.includes('<!-- stratus-rate-limit -->'));
    expect(limitComments).toHaveLength(1);
    expect(limitComments[0]!.body).toContain('`followThrough.rateLimit`');
    // The same deliveries sent again are duplicates: no run, no count, no second comment.
    const again = await sendDelivery(stack.apiUrl, SECRET, 'issue_comment', mention(51), { deliveryId: sent[0]!.deliveryId });
    expect(again.body).toEqual({ accepted: false, reason: 'duplicate delivery' });
    // A further ping in the same hour is refused without another comment.
    gh.addComment('acme/pingpong', 5, { id: 56, body: '@stratus lint says hi 56', login: 'lint-bot[bot]', type: 'Bot' });
    const later = await sendDelivery(stack.apiUrl, SECRET, 'issue_comment', mention(56));
    expect((await finishedRun(api, later.deliveryId)).outcome).toBe('rate_limited');
    expect(gh.commentsOn('acme/pingpong', 5).filter((c) => c.body.includes('<!-- stratus-rate-limit -->'))).toHaveLength(1);
  });

  it('the delivery log lists each delivery with its decision, reason and run, a page at a time, for its tenant only', async () => {
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; json: { deliveries: any[]; nextCursor: string | null } } = await api.request(
        'GET',
        `/v1/github/deliveries?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(page.status).toBe(200);
      expect(page.json.deliveries.length).toBeLessThanOrEqual(3);
      all.push(...page.json.deliveries);
      cursor = page.json.nextCursor;
    } while (cursor);
    // Newest first: the ping-pong's, then the loops', each once.
    expect(all.map((d) => d.createdAt)).toEqual([...all.map((d) => d.createdAt)].sort().reverse());
    expect(new Set(all.map((d) => d.deliveryId)).size).toBe(all.length);
    const byReason = (reason: string) => all.filter((d) => d.reason === reason);
    expect(byReason('the comment is one Stratus posted')).toEqual([
      expect.objectContaining({ event: 'issue_comment', action: 'created', repository: 'acme/app', number: 1, decision: 'ignored', runId: null }),
    ]);
    expect(byReason('the commit is one Stratus made')).toEqual([expect.objectContaining({ event: 'push', decision: 'ignored' })]);
    expect(byReason('event "push" does not start runs')).toHaveLength(1);
    const ran = all.filter((d) => d.decision === 'ran');
    expect(ran).toEqual(expect.arrayContaining([expect.objectContaining({ event: 'issues', action: 'labeled', outcome: 'no_changes', sender: 'maintainer' })]));
    const runs = (await api.request('GET', '/v1/github/runs?limit=200')).json.runs;
    for (const d of all.filter((x) => x.runId))
      expect(runs.find((r: { id: string }) => r.id === d.runId)).toMatchObject({ deliveryId: d.deliveryId, outcome: d.outcome });
    const refused = all.filter((d) => d.decision === 'refused');
    expect(refused).toHaveLength(4);
    for (const d of refused) expect(d).toMatchObject({ outcome: 'rate_limited', reason: expect.stringContaining("the repository's limit") });
    // Six pings, the duplicate not logged twice: four refused, and two that ran (or one that joined the other's run); nothing is pending.
    const pings = all.filter((d) => d.repository === 'acme/pingpong').map((d) => d.decision);
    expect(pings).toHaveLength(6);
    expect(pings.filter((d) => d === 'refused')).toHaveLength(4);
    expect(pings.filter((d) => d !== 'refused').sort()).toEqual(expect.arrayContaining(['ran']));
    for (const d of pings.filter((x) => x !== 'refused')) expect(['ran', 'queued']).toContain(d);
    expect(all.filter((d) => d.decision === 'accepted')).toEqual([]);
    // Kept for the configured days (30 by default): DynamoDB expires each by its ttl.
    const stored = await stack.deps.githubDeliveryLog.list('local', { limit: 200 });
    for (const item of stored.items) expect(item.ttl - Date.parse(item.createdAt) / 1000).toBeCloseTo(30 * 86_400, -2);
    // Another tenant sees none of them.
    expect((await apiClient(stack.apiUrl, 'token-other').request('GET', '/v1/github/deliveries')).json).toEqual({ deliveries: [], nextCursor: null });
    expect((await api.request('GET', '/v1/github/deliveries?limit=0')).status).toBe(400);
  });
});
