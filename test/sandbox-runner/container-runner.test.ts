import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../../local/s3-server.ts';
import { createContainerRunner } from '../../sandbox-runner/container-runner.ts';
import { startEgressProxy, type EgressProxy } from '../../sandbox-runner/egress/egress-proxy.ts';
import { signEgressToken } from '../../sandbox-runner/common/egress-token.ts';
import { NO_EGRESS, NO_EGRESS_TOKEN } from '../../sandbox-runner/common/egress-mode.ts';
import type { RunnerOp } from '../../sandbox-runner/protocol.ts';
import type { Runner } from '../../sandbox-runner/runner.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { bashOutput, expectOk } from '../support/runner-fixture.ts';

/** The Lambda container's runner, in the no-namespaces mode it uses inside AWS. */
describe('container runner (process sandbox, as inside Lambda)', () => {
  const temp = makeTempDir('stratus-container-');
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let runner: Runner;
  beforeAll(async () => {
    s3 = await startS3Server({ dir: path.join(temp.dir, 's3'), buckets: ['b'] });
    runner = createContainerRunner({
      STRATUS_RUNNER_ROOT: path.join(temp.dir, 'root'),
      STRATUS_SANDBOX: 'process',
      STRATUS_S3_ENDPOINT: s3.url,
      AWS_REGION: 'us-east-1',
    });
  });
  afterAll(async () => {
    await s3?.close();
    temp.cleanup();
  });

  const call = (id: string, version: number, op: RunnerOp, cwd = '/workspace') =>
    runner({ sessionId: 's', workspace: { bucket: 'b', id, version, credentials: { ...LOCAL_S3_CREDENTIALS } }, cwd, op });

  it('runs commands with a scrubbed environment, carries the cwd, and holds one workspace at a time', async () => {
    process.env.AWS_SECRET_ACCESS_KEY_FOR_TEST = 'runner-role-secret';
    try {
      expectOk(await call('one', 0, { type: 'create_workspace', files: { 'sub/a.txt': 'from one\n' } }));
      const ran = expectOk(await call('one', 1, { type: 'bash', command: 'cat sub/a.txt; env | grep -c SECRET; cd sub', timeoutMs: 10_000 }));
      expect(bashOutput(ran)).toBe('from one\n0\n');
      expect(ran.cwd).toBe('/workspace/sub');

      expectOk(await call('two', 0, { type: 'create_workspace', files: { 'b.txt': 'two\n' } }));
      const workspaces = await import('node:fs').then((fs) => fs.readdirSync(path.join(temp.dir, 'root', 'workspaces')));
      expect(workspaces).toEqual(['two']);
      expect(bashOutput(await call('two', 1, { type: 'bash', command: 'ls; ls ../../one 2>&1 | head -c 2', timeoutMs: 10_000 }))).toBe('b.txt\nls');
    } finally {
      delete process.env.AWS_SECRET_ACCESS_KEY_FOR_TEST;
    }
  });

  it('runs a hook command with its input on stdin and its stderr apart (the paths it uses are the tmp dir as commands see it)', async () => {
    expectOk(await call('hooked', 0, { type: 'create_workspace', files: { 'a.txt': 'alpha\n' } }));
    const ran = expectOk(
      await call('hooked', 1, {
        type: 'hook_command',
        command: 'echo "in=$(cat) project=$CLAUDE_PROJECT_DIR"; cat a.txt >&2; exit 2',
        stdin: '{"tool_name":"Bash"}',
        timeoutMs: 10_000,
      }),
    );
    expect(ran.result).toMatchObject({
      type: 'hook_command',
      stdout: 'in={"tool_name":"Bash"} project=/workspace\n',
      stderr: 'alpha\n',
      exitCode: 2,
      timedOut: false,
    });
  });
});

/** The same runner with the egress settings the CDK app gives it: none by default, or the egress proxy. */
describe('container runner network egress (as configured in AWS)', () => {
  const temp = makeTempDir('stratus-container-egress-');
  const KEY = 'container-egress-test-key';
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let proxy: EgressProxy;
  const decisions: { label?: string; host: string; allowed: boolean }[] = [];
  beforeAll(async () => {
    s3 = await startS3Server({ dir: path.join(temp.dir, 's3'), buckets: ['b'] });
    proxy = await startEgressProxy({ key: KEY, port: 0, host: '127.0.0.1', log: (d) => decisions.push(d) });
  });
  afterAll(async () => {
    await proxy?.close();
    await s3?.close();
    temp.cleanup();
  });

  const runnerWith = (name: string, egress: Record<string, string>) =>
    createContainerRunner({
      STRATUS_RUNNER_ROOT: path.join(temp.dir, name),
      STRATUS_SANDBOX: 'process',
      STRATUS_S3_ENDPOINT: s3.url,
      AWS_REGION: 'us-east-1',
      ...egress,
    });
  const callWith = (runner: Runner, id: string, version: number, op: RunnerOp, network?: { allowedDomains: string[]; egressToken?: string }) =>
    runner({ sessionId: 'ses_net', workspace: { bucket: 'b', id, version, credentials: { ...LOCAL_S3_CREDENTIALS } }, ...(network ? { network } : {}), op });

  it('without the egress component, refuses allow-listed commands and git imports with a clear error', async () => {
    const runner = runnerWith('none', { STRATUS_EGRESS: 'none' });
    expectOk(await callWith(runner, 'n', 0, { type: 'create_workspace', files: { 'a.txt': 'a' } }));
    const bash = await callWith(runner, 'n', 1, { type: 'bash', command: 'true', timeoutMs: 5_000 }, { allowedDomains: ['registry.npmjs.org'] });
    expect(bash).toEqual({ ok: false, error: { kind: 'tool_error', message: NO_EGRESS } });
    expect(await callWith(runner, 'g', 0, { type: 'import_git', url: 'https://github.com/octocat/Hello-World.git' })).toEqual({
      ok: false,
      error: { kind: 'tool_error', message: NO_EGRESS },
    });
    // Without a policy commands still run (the VPC, not the runner, is what denies them the network).
    expect(bashOutput(await callWith(runner, 'n', 1, { type: 'bash', command: 'echo ok; env | grep -ci proxy', timeoutMs: 5_000 }))).toBe('ok\n0\n');
  });

  it("with the egress proxy, sends a command's requests there carrying the harness's token", async () => {
    const runner = runnerWith('proxy', { STRATUS_EGRESS: 'proxy', STRATUS_EGRESS_PROXY: `http://127.0.0.1:${proxy.port}` });
    expectOk(await callWith(runner, 'p', 0, { type: 'create_workspace', files: { 'a.txt': 'a' } }));
    const allowedDomains = ['example.test'];
    expect(await callWith(runner, 'p', 1, { type: 'bash', command: 'true', timeoutMs: 5_000 }, { allowedDomains })).toEqual({
      ok: false,
      error: { kind: 'tool_error', message: NO_EGRESS_TOKEN },
    });
    const egressToken = signEgressToken(KEY, { allowedDomains, sessionId: 'ses_net', expiresAt: Date.now() + 60_000 });
    const out = await callWith(
      runner,
      'p',
      1,
      { type: 'bash', command: 'curl -sS http://other.test/; curl -sS http://example.test:8080/', timeoutMs: 10_000 },
      { allowedDomains, egressToken },
    );
    expect(bashOutput(out)).toBe(
      "Blocked by the sandbox: other.test is not in this session's allowed network domains.\n" +
        'Blocked by the sandbox: port 8080 of example.test is not allowed; only 80 and 443 are, unless an allowed network domain names the port (example.test:8080).\n',
    );
    expect(decisions.map((d) => [d.label, d.host, d.allowed])).toEqual([
      ['ses_net', 'other.test', false],
      ['ses_net', 'example.test', false],
    ]);
  });
});
