import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { startGitHttpServer } from '../support/git-http-server.ts';
import { startGithubApiServer, type GithubApiServer } from '../support/github-api-server.ts';
import { commentPayload, finishedRun, labeledPayload, makeBareRepo, pushPayload, sendDelivery, type RepoRef } from '../support/github-fixture.ts';
import { text, unscripted } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const SECRET = 'no-loops-secret';
const APP_ID = '5151';
const AUTHOR = { name: 'Stratus Test', email: 'stratus@example.com' };

describe('GitHub: Stratus never answers itself, and a ping-pong with another bot stops', () => {
  const tmp = makeTempDir();
  const gitRoot = makeTempDir();
  let stack: LocalStack;
  let gh: GithubApiServer;
  let git: Awaited<ReturnType<typeof startGitHttpServer>>;
  let api: ReturnType<typeof apiClient>;
  let repo: RepoRef;
  let pingpong: RepoRef;

  beforeAll(async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    gh = await startGithubApiServer({ appId: APP_ID, appPublicKey: publicKey, installationId: 88 });
    git = await startGitHttpServer({ projectRoot: gitRoot.dir, token: (t) => gh.isValidToken(t) });
    stack = await startLocalStack({
      dataDir: tmp.dir,
      brain: unscripted,
      github: {
        webhookSecret: SECRET,
        appId: APP_ID,
        privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
        apiUrl: gh.url,
        commitAuthor: AUTHOR,
      },
    });
    api = apiClient(stack.apiUrl, stack.token);
    makeBareRepo(gitRoot.dir, 'acme/app', { 'README.md': 'app\n' });
    makeBareRepo(gitRoot.dir, 'acme/pingpong', { 'README.md': 'pingpong\n' });
    repo = { id: 3_001, fullName: 'acme/app', cloneUrl: `${git.url}/acme/app.git`, installationId: 88 };
    pingpong = { id: 3_002, fullName: 'acme/pingpong', cloneUrl: `${git.url}/acme/pingpong.git`, installationId: 88 };
    gh.addInstallation(88, 'acme');
    gh.addRepository({ id: 3_001, fullName: 'acme/app', installationId: 88 });
    gh.addRepository({ id: 3_002, fullName: 'acme/pingpong', installationId: 88 });
    const admin = apiClient(stack.apiUrl, readFileSync(path.join(tmp.dir, 'admin-token'), 'utf8').trim());
    expect((await admin.request('POST', '/v1/admin/github/installations', { installationId: 88, tenantId: 'local' })).status).toBe(201);
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
    await stack?.stop();
    await git?.close();
    await gh?.close();
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
    stack.model!.enqueue({ ...text('Looked; nothing to change.'), delayMs: 300 }, text('Still nothing to change.'));
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
});
