import { LambdaClient } from '@aws-sdk/client-lambda';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaRunnerClient, type RunnerClient } from '../../functions/runner-client/runner-client.ts';
import { startLambdaInvokeServer } from '../../local/lambda-invoke-server.ts';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../../local/s3-server.ts';
import { NO_EGRESS } from '../../sandbox-runner/common/egress-mode.ts';
import { opOutsideScope } from '../../sandbox-runner/common/runner-ops-scope.ts';
import { createContainerRunner, onlyHarnessGit } from '../../sandbox-runner/container-runner.ts';
import { createProcessSandbox } from '../../sandbox-runner/isolation/process-sandbox.ts';
import type { RunnerOp, RunnerResponse } from '../../sandbox-runner/protocol.ts';
import { createRunner, DEFAULT_RUNNER_LIMITS } from '../../sandbox-runner/runner.ts';
import { createS3ClientFactory } from '../../sandbox-runner/s3-client.ts';
import { startGitHttpServer } from '../support/git-http-server.ts';
import { makeBareRepo } from '../support/github-fixture.ts';
import { bashOutput, expectOk } from '../support/runner-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const TOKEN = 'ghs_gitfunction0123456789abcdef';
const BUCKET = 'b';

/**
 * The AWS layout of a GitHub run without an egress proxy (docs/security.md, "Git and registry
 * traffic at $0 idle"): the sandbox runner has no network at all (STRATUS_EGRESS=none, as in its
 * VPC), and the harness sends git_checkout / git_publish to the git function, the same runner
 * code scoped to git ops with the network. The two exchange the repository through S3 only.
 * Real parts throughout: the Lambda Invoke stand-in, the S3 stand-in and git's smart-HTTP server.
 */
describe('the git function: clone and push outside the sandbox runner', () => {
  const temp = makeTempDir('stratus-git-function-');
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let git: Awaited<ReturnType<typeof startGitHttpServer>>;
  let invoke: Awaited<ReturnType<typeof startLambdaInvokeServer>>;
  let repo: ReturnType<typeof makeBareRepo>;
  let url: string;
  /** Which function served each op. */
  const served: { fn: string; op: string; tenantId: string }[] = [];

  beforeAll(async () => {
    s3 = await startS3Server({ dir: path.join(temp.dir, 's3'), buckets: [BUCKET] });
    git = await startGitHttpServer({ projectRoot: path.join(temp.dir, 'git'), token: TOKEN });
    repo = makeBareRepo(path.join(temp.dir, 'git'), 'o/r', { 'a.txt': 'one\n' });
    url = `${git.url}/o/r.git`;
    const s3ForCredentials = createS3ClientFactory({ region: 'us-east-1', endpoint: s3.url });
    const runnerAt = (name: string, egress: { kind: 'none' } | { kind: 'direct' }) =>
      createRunner({
        rootDir: path.join(temp.dir, name),
        s3ForCredentials,
        sandbox: createProcessSandbox({ linkPath: path.join(temp.dir, name, 'current'), maxProcesses: 512, egress }),
        limits: DEFAULT_RUNNER_LIMITS,
        // Plain http is for the loopback stand-in only (the local stack's runner allows it too).
        git: { egress, allowHttp: true },
      });
    const sandboxRunner = runnerAt('sandbox', { kind: 'none' });
    const gitFunction = onlyHarnessGit(runnerAt('git', { kind: 'direct' }));
    const as = (fn: string, run: (event: unknown) => Promise<RunnerResponse>) => ({
      tenantIsolated: true as const,
      invoke(tenantId: string, event: unknown) {
        served.push({ fn, op: (event as { op: RunnerOp }).op.type, tenantId });
        return run(event);
      },
    });
    invoke = await startLambdaInvokeServer({ functions: { runner: as('runner', sandboxRunner), git: as('git', gitFunction) } });
  });
  afterAll(async () => {
    await invoke?.close();
    await git?.close();
    await s3?.close();
    temp.cleanup();
  });

  const lambda = async () => new LambdaClient({ region: 'us-east-1', endpoint: invoke.url, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  const request = (workspaceId: string, version: number, op: RunnerOp) => ({
    sessionId: 'ses_git',
    workspace: { bucket: BUCKET, id: workspaceId, version, credentials: { ...LOCAL_S3_CREDENTIALS } },
    cwd: '/workspace',
    network: { allowedDomains: [] },
    op,
  });
  const checkout = (client: RunnerClient, id: string) =>
    client.invoke(request(id, 0, { type: 'git_checkout', url, ref: 'refs/heads/main', branch: 'stratus/issue-1', depth: 1, token: TOKEN } as RunnerOp));

  it('without the git function, a runner with no network cannot clone (the default deployment before)', async () => {
    const runnerOnly = createLambdaRunnerClient(lambda, 'runner');
    const out = await checkout(runnerOnly, 'ws_git_none');
    expect(out).toEqual({ ok: false, error: { kind: 'tool_error', message: NO_EGRESS } });
  });

  it('clones in the git function, runs commands in the network-less runner without the token, and pushes from the git function', async () => {
    served.length = 0;
    const client = createLambdaRunnerClient(lambda, 'runner', 'git');
    const cloned = expectOk(await checkout(client, 'ws_git_one'));
    expect(cloned.result).toEqual({ type: 'git_checkout', sha: repo.rev('refs/heads/main'), branch: 'stratus/issue-1' });

    // The sandbox sees the checkout through S3, and nothing of the token anywhere it can look (the
    // bracket keeps the pattern itself out of the command lines it reads).
    const look = [
      'cat a.txt',
      'for f in /proc/*/environ /proc/*/cmdline; do grep -aq "gitfunction012[3]" "$f" 2>/dev/null && echo "$f"; done',
      'grep -rl "gitfunction012[3]" /workspace "${TMPDIR:-/tmp}" 2>/dev/null',
      'env | grep -c "gitfunction012[3]"',
    ].join('; ');
    expect(bashOutput(await client.invoke(request('ws_git_one', cloned.version, { type: 'bash', command: look, timeoutMs: 20_000 } as RunnerOp)))).toBe(
      'one\n0\n',
    );
    const edited = expectOk(
      await client.invoke(
        request('ws_git_one', cloned.version, { type: 'bash', command: 'echo two > a.txt && echo new > b.txt', timeoutMs: 10_000 } as RunnerOp),
      ),
    );

    const publish = {
      type: 'git_publish',
      url,
      base: cloned.result.type === 'git_checkout' ? cloned.result.sha : '',
      branch: 'stratus/issue-1',
      message: 'Fix #1',
      author: { name: 'Stratus', email: 's@example.com' },
      token: TOKEN,
    };
    const pushed = expectOk(await client.invoke(request('ws_git_one', edited.version, publish as RunnerOp)));
    expect(pushed.result).toMatchObject({ type: 'git_publish', changed: true, pushed: true, files: ['a.txt', 'b.txt'] });
    expect(repo.show('refs/heads/stratus/issue-1', 'a.txt')).toBe('two');
    expect(repo.show('refs/heads/stratus/issue-1', 'b.txt')).toBe('new');

    expect(served.map(({ fn, op, tenantId }) => `${fn} ${op} ${tenantId}`)).toEqual([
      'git git_checkout ws_git_one:git',
      'runner bash ws_git_one',
      'runner bash ws_git_one',
      'git git_publish ws_git_one:git',
    ]);
  });

  it('refuses in the git function every op but the harness git, so no command runs beside the token or its network', async () => {
    served.length = 0;
    const direct = createLambdaRunnerClient(lambda, 'git');
    for (const op of [
      { type: 'bash', command: 'curl https://example.com', timeoutMs: 1_000 },
      { type: 'write', file_path: '/workspace/x', content: 'x' },
      { type: 'import_git', url },
    ]) {
      const out = await direct.invoke(request('ws_git_two', 0, op as RunnerOp));
      expect(out).toEqual({ ok: false, error: { kind: 'bad_request', message: opOutsideScope(op.type) } });
    }
  });

  it('is what STRATUS_RUNNER_OPS=git builds from the environment, and the runner refuses an unknown scope', async () => {
    const scoped = createContainerRunner({
      STRATUS_RUNNER_ROOT: path.join(temp.dir, 'env-git'),
      STRATUS_SANDBOX: 'process',
      STRATUS_RUNNER_OPS: 'git',
      STRATUS_S3_ENDPOINT: s3.url,
    });
    const out = await scoped(request('ws_git_three', 0, { type: 'create_workspace', files: {} } as RunnerOp));
    expect(out).toEqual({ ok: false, error: { kind: 'bad_request', message: opOutsideScope('create_workspace') } });
    expect(() => createContainerRunner({ STRATUS_RUNNER_OPS: 'everything' })).toThrow('STRATUS_RUNNER_OPS must be all or git, not "everything".');
  });
});
