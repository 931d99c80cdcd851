import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GITHUB_WORKER_FUNCTION } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { startGitHttpServer } from '../support/git-http-server.ts';
import { startGithubApiServer } from '../support/github-api-server.ts';
import { finishedRun, labeledPayload, makeBareRepo, sendDelivery } from '../support/github-fixture.ts';
import { bash, text } from '../support/stack-fixture.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const SECRET = 'crash-webhook-secret';

/**
 * GitHub work killed mid-run (SIGKILL of the whole stack while the run's turn works): the next
 * start lists the worker's invocation as failed (Runtime.ExitError) with the run still
 * `running`; the redrive carries the run out again under the same record, to a pull request.
 */
describe('GitHub work killed mid-run, then redriven', () => {
  const tmp = makeTempDir();
  const gitRoot = makeTempDir();
  let running: StackProcess | undefined;
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    await running?.stop();
    for (const close of closers.splice(0)) await close();
    tmp.cleanup();
    gitRoot.cleanup();
  });

  it('lists the dead worker as Runtime.ExitError and its redrive ends the same run with a pull request', { timeout: 300_000 }, async () => {
    const gh = await startGithubApiServer({ plainToken: 'ghp_plain-token' });
    const git = await startGitHttpServer({ projectRoot: gitRoot.dir, token: (t) => gh.isValidToken(t) });
    closers.push(
      () => gh.close(),
      () => git.close(),
    );
    makeBareRepo(gitRoot.dir, 'acme/tool', { 'README.md': 'tool\n' });
    gh.addRepository({ id: 7101, fullName: 'acme/tool' });
    const env = {
      STRATUS_HEARTBEAT_MS: '1000',
      STRATUS_GITHUB_WEBHOOK_SECRET: SECRET,
      STRATUS_GITHUB_TOKEN: 'ghp_plain-token',
      STRATUS_GITHUB_API_URL: gh.url,
      STRATUS_GITHUB_COMMIT_AUTHOR: 'Stratus Test <stratus@example.com>',
    };
    const start = async () => {
      running = await startStackProcess(tmp.dir, env);
      const adminToken = readFileSync(path.join(tmp.dir, 'admin-token'), 'utf8').trim();
      return { api: apiClient(running.apiUrl, running.token), admin: apiClient(running.apiUrl, adminToken) };
    };
    let { api, admin } = await start();
    expect((await admin.request('POST', '/v1/admin/github/repositories', { tenantId: 'local', repository: 'acme/tool' })).status).toBe(201);
    await running!.script([{ content: [bash('t1', 'sleep 60')], stopReason: 'tool_use' }]);
    gh.addIssue('acme/tool', 1, { title: 'Write done.txt', body: 'b', user: { login: 'owner', type: 'User' } });
    const payload = labeledPayload(
      { id: 7101, fullName: 'acme/tool', cloneUrl: `${git.url}/acme/tool.git` },
      { number: 1, title: 'Write done.txt' },
      'stratus',
      {
        login: 'owner',
      },
    );
    const sent = await sendDelivery(running!.apiUrl, SECRET, 'issues', payload);
    expect(sent.body).toEqual({ accepted: true });
    // The run's turn is in its command: kill everything.
    const runsOf = async () =>
      ((await api.request('GET', '/v1/github/runs?limit=200')).json.runs as { deliveryId: string; id: string; outcome: string; sessionId?: string }[]).filter(
        (r) => r.deliveryId === sent.deliveryId,
      );
    await until(runsOf, (runs) => runs[0]?.outcome === 'running', 600);
    await until(
      async () => (await running!.modelRequests()).length,
      (n) => n >= 1,
      600,
    );
    await new Promise((r) => setTimeout(r, 1_500));
    await running!.kill();
    const killedAt = Date.now();

    ({ api, admin } = await start());
    const [before] = await runsOf();
    expect(before).toMatchObject({ outcome: 'running' });
    const failures = (await admin.request('GET', '/v1/admin/async-failures')).json.failures as {
      id: string;
      functionName: string;
      event: { kind: string };
      error: { type: string };
    }[];
    const failure = failures.find((f) => f.event.kind === 'github_work');
    expect(failure).toMatchObject({ functionName: GITHUB_WORKER_FUNCTION, error: { type: 'Runtime.ExitError' } });
    // Once the dead turn's beats are missed, the redrive finds the run's worker dead and does the work again.
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + 4_000 - Date.now())));
    await running!.script([{ content: [bash('t2', 'echo done > done.txt')], stopReason: 'tool_use' }, text('Wrote done.txt.')]);
    expect((await admin.request('POST', `/v1/admin/async-failures/${failure!.id}/redrive`)).status).toBe(202);
    const run = await finishedRun(api, sent.deliveryId, 120_000);
    expect(run).toMatchObject({ id: before!.id, outcome: 'pr_opened' });
    expect(await runsOf()).toHaveLength(1);
    expect(gh.pulls('acme/tool')).toHaveLength(1);
    expect((await admin.request('GET', '/v1/admin/async-failures')).json.failures).toEqual([]);
  });
});
