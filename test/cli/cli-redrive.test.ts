import { execFile } from 'node:child_process';
import path from 'node:path';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_FUNCTION } from '../../local/stack.ts';
import { useLocalStack } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const BIN = path.resolve('cli/stratus.mjs');

/** `stratus admin failures ls|redrive` against the local stack's async-failures store. */
describe('the stratus CLI lists and redrives failed asynchronous work', () => {
  const fx = useLocalStack({ apiTokens: { 'tenant-token': 'local', 'admin-secret': '@admin' } });
  const tmp = makeTempDir();
  let lambda: LambdaClient;
  beforeAll(() => {
    lambda = new LambdaClient({ region: 'us-east-1', endpoint: fx.stack.urls.lambda, credentials: fx.stack.deps.config.localCredentials! });
  });
  afterAll(() => lambda?.destroy());

  const stratus = (adminToken: string, ...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const env = {
        ...process.env,
        STRATUS_CONFIG_DIR: path.join(tmp.dir, 'config'),
        STRATUS_URL: fx.stack.apiUrl,
        STRATUS_TOKEN: 'tenant-token',
        STRATUS_ADMIN_TOKEN: adminToken,
        NODE_OPTIONS: '',
      };
      execFile(process.execPath, [BIN, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const sendEvent = (payload: unknown) =>
    lambda.send(new InvokeCommand({ FunctionName: API_FUNCTION, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(payload)) }));
  const listed = async () => {
    const ls = await stratus('admin-secret', '--json', 'admin', 'failures', 'ls');
    expect(ls.code, ls.stderr).toBe(0);
    return JSON.parse(ls.stdout).failures as { id: string; event: { kind: string; sessionId?: string } }[];
  };

  it('lists a failed purge, redrives it by id once the session is deleted, and redrives all the rest', { timeout: 200_000 }, async () => {
    const sessionId = await fx.api.createSession();
    // A purge of a session that is not deleted throws: it lands in the async-failures store.
    await sendEvent({ kind: 'purge_session', sessionId });
    const [failure] = await until(listed, (found) => found.some((f) => f.event.sessionId === sessionId));
    const human = await stratus('admin-secret', 'admin', 'failures', 'ls');
    expect(human.stdout).toMatch(new RegExp(`${failure!.id} +\\S+ +stratus-api +purge_session +Error: .*it is not deleted`));

    await fx.stack.deps.sessions.markDeleted(sessionId, Date.now());
    const one = await stratus('admin-secret', 'admin', 'failures', 'redrive', failure!.id);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toBe(`${failure!.id} sent again to stratus-api\n`);
    await until(
      () => fx.stack.deps.sessions.get(sessionId),
      (s) => s === undefined,
    );
    expect((await listed()).map((f) => f.id)).not.toContain(failure!.id);
    // Gone now: exit 4 with the API's message.
    const again = await stratus('admin-secret', 'admin', 'failures', 'redrive', failure!.id);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('No failed invocation');

    // --all sends each one again; one that fails again is listed anew under a new id.
    await sendEvent({ kind: 'not_a_kind' });
    const [bad] = await until(listed, (found) => found.some((f) => f.event.kind === 'not_a_kind'));
    const all = await stratus('admin-secret', '--json', 'admin', 'failures', 'redrive', '--all');
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ redriven: [{ id: bad!.id, functionName: 'stratus-api' }], kept: [], more: false });
    const anew = await until(listed, (found) => found.some((f) => f.event.kind === 'not_a_kind'));
    expect(anew.map((f) => f.id)).not.toContain(bad!.id);
  });

  it('refuses a redrive with neither an id nor --all (exit 2) and a tenant token (exit 3)', { timeout: 120_000 }, async () => {
    const neither = await stratus('admin-secret', 'admin', 'failures', 'redrive');
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('Give one failure id, or --all');
    expect((await stratus('admin-secret', 'admin', 'failures', 'redrive', 'x', '--all')).code).toBe(2);
    expect((await stratus('tenant-token', 'admin', 'failures', 'ls')).code).toBe(3);
  });
});
