import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { triggerFromDelivery } from '../../functions/github-api/github-trigger.ts';
import { GITHUB_WORKER_FUNCTION, startLocalStack, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { startGitHttpServer } from '../support/git-http-server.ts';
import { startGithubApiServer, type GithubApiServer } from '../support/github-api-server.ts';
import { finishedRun, labeledPayload, makeBareRepo, sendDelivery, type RepoRef } from '../support/github-fixture.ts';
import { bash, text, unscripted } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const SECRET = 'redrive-webhook-secret';
const TOKENS = { 'token-local': 'local', 'token-admin': '@admin' };

/** The worker's event for a delivery: what the webhook route hands on, and what a duplicate or a redrive sends again. */
function workEvent(deliveryId: string, payload: unknown) {
  const found = triggerFromDelivery('issues', deliveryId, payload, { label: 'stratus', mention: '@stratus' });
  if (!('trigger' in found)) throw new Error(found.ignored);
  return { kind: 'github_work', trigger: found.trigger };
}

describe('GitHub work delivered twice or sent again does no harm', () => {
  const tmp = makeTempDir();
  const gitRoot = makeTempDir();
  let stack: LocalStack;
  let gh: GithubApiServer;
  let git: Awaited<ReturnType<typeof startGitHttpServer>>;
  let lambda: LambdaClient;
  let repo: RepoRef;
  const api = () => apiClient(stack.apiUrl, 'token-local');

  beforeAll(async () => {
    gh = await startGithubApiServer({ plainToken: 'ghp_plain-token' });
    git = await startGitHttpServer({ projectRoot: gitRoot.dir, token: (t) => gh.isValidToken(t) });
    stack = await startLocalStack({
      dataDir: tmp.dir,
      brain: unscripted,
      writeMetrics: () => undefined,
      apiTokens: TOKENS,
      github: { webhookSecret: SECRET, apiUrl: gh.url, token: 'ghp_plain-token', commitAuthor: { name: 'Stratus Test', email: 'stratus@example.com' } },
    });
    lambda = new LambdaClient({ region: 'us-east-1', endpoint: stack.urls.lambda, credentials: stack.deps.config.localCredentials! });
    makeBareRepo(gitRoot.dir, 'acme/tool', { 'README.md': 'tool\n' });
    gh.addRepository({ id: 7001, fullName: 'acme/tool' });
    repo = { id: 7001, fullName: 'acme/tool', cloneUrl: `${git.url}/acme/tool.git` };
    const admin = apiClient(stack.apiUrl, 'token-admin');
    expect((await admin.request('POST', '/v1/admin/github/repositories', { tenantId: 'local', repository: 'acme/tool' })).status).toBe(201);
  });
  afterAll(async () => {
    lambda?.destroy();
    await stack?.stop();
    await git?.close();
    await gh?.close();
    tmp.cleanup();
    gitRoot.cleanup();
  });

  /** Runs the worker on an event synchronously (the same handler an asynchronous delivery runs), to its end. */
  const runWorker = async (event: unknown) => {
    const out = await lambda.send(new InvokeCommand({ FunctionName: GITHUB_WORKER_FUNCTION, Payload: Buffer.from(JSON.stringify(event)) }));
    expect(out.FunctionError, Buffer.from(out.Payload ?? []).toString()).toBeUndefined();
  };
  const runsOf = async (deliveryId: string) =>
    ((await api().request('GET', '/v1/github/runs?limit=200')).json.runs as { deliveryId: string; id: string; outcome: string }[]).filter(
      (r) => r.deliveryId === deliveryId,
    );
  const deliver = async (number: number, title: string) => {
    gh.addIssue('acme/tool', number, { title, body: 'b', user: { login: 'owner', type: 'User' } });
    const payload = labeledPayload(repo, { number, title }, 'stratus', { login: 'owner' });
    const sent = await sendDelivery(stack.apiUrl, SECRET, 'issues', payload);
    expect(sent.body).toEqual({ accepted: true });
    return { deliveryId: sent.deliveryId, event: workEvent(sent.deliveryId, payload) };
  };

  it('a finished run delivered again, twice, opens no second pull request, posts no second comment and runs no second turn', async () => {
    stack.model!.enqueue({ content: [bash('t1', 'echo done > done.txt')], stopReason: 'tool_use' }, text('Wrote done.txt.'));
    const { deliveryId, event } = await deliver(1, 'Write done.txt');
    const run = await finishedRun(api(), deliveryId);
    expect(run.outcome).toBe('pr_opened');
    const before = { comments: gh.commentsOn('acme/tool', 1).length, pulls: gh.pulls('acme/tool').length, models: stack.model!.requests.length };
    expect(before.comments).toBe(1);
    expect(before.pulls).toBe(1);

    // A duplicate delivery and then a redrive of the same event: the run is left as it ended.
    await runWorker(event);
    await runWorker(event);
    expect(await runsOf(deliveryId)).toEqual([expect.objectContaining({ id: run.id, outcome: 'pr_opened' })]);
    expect(gh.commentsOn('acme/tool', 1)).toHaveLength(before.comments);
    expect(gh.pulls('acme/tool')).toHaveLength(before.pulls);
    expect(stack.model!.requests).toHaveLength(before.models);
    expect(stack.asyncFailures()).toEqual([]);
  });

  it('a run delivered again while it works is left to finish: no "already working" comment, no second run record', async () => {
    stack.model!.enqueue({ content: [bash('t2', 'sleep 3; echo slow > slow.txt')], stopReason: 'tool_use' }, text('Wrote slow.txt.'));
    const { deliveryId, event } = await deliver(2, 'Write slow.txt');
    await until(
      () => runsOf(deliveryId),
      (runs) => runs[0]?.outcome === 'running',
    );
    await runWorker(event);
    const run = await finishedRun(api(), deliveryId);
    expect(run.outcome).toBe('pr_opened');
    expect(await runsOf(deliveryId)).toHaveLength(1);
    expect(gh.commentsOn('acme/tool', 2).map((c) => c.body)).toEqual([expect.stringContaining('opened a pull request')]);
    expect(gh.pulls('acme/tool')).toHaveLength(2);
  });
});
