import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { tableNames } from '../../functions/stores/tables.ts';
import { startDynamoServer } from '../../local/dynamo-server.ts';
import { freshLocalCredentials } from '../../local/local-credentials.ts';
import { startS3Server } from '../../local/s3-server.ts';
import { API_FUNCTION, LOCAL_BUCKET } from '../../local/stack.ts';
import type { MessagesRequest } from '../../local/scripted-model/script.ts';
import { agentCall, firstText } from '../support/agent-requests.ts';
import { apiClient } from '../support/api-client.ts';
import { bash, text } from '../support/stack-fixture.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

interface Listed {
  id: string;
  functionName: string;
  event: { kind: string; sessionId?: string; agentLogId?: string; turnId?: string };
  error: { type: string; message: string };
}

/**
 * Each asynchronous path of the API function killed mid-work (SIGKILL of the whole stack, as
 * Lambda loses a runtime): the next start lists the invocation as failed (Runtime.ExitError),
 * the redrive sends it again, and the work then completes or ends with an outcome; nothing stays
 * running. Duplicate deliveries of the same event do no harm. (A thrown error is listed and
 * redriven in async-failures.test.ts; GitHub work in github-crash-redrive.test.ts.)
 */
describe('asynchronous work killed mid-way, then redriven', () => {
  const tmp = makeTempDir();
  let running: StackProcess | undefined;
  let lambda: LambdaClient | undefined;
  afterEach(async () => {
    lambda?.destroy();
    await running?.stop();
    tmp.cleanup();
  });
  // Beats every second: a killed holder's lease is dead three seconds later.
  const env = { STRATUS_HEARTBEAT_MS: '1000' };
  const start = async (more: Record<string, string> = {}) => {
    running = await startStackProcess(tmp.dir, { ...env, ...more });
    const lambdaUrl = /runner \(Lambda Invoke\) +(\S+)/.exec(running.printed().stdout)![1]!;
    lambda?.destroy();
    // The Lambda Invoke stand-in serves any signed request: what a duplicate delivery is sent through.
    lambda = new LambdaClient({ region: 'us-east-1', endpoint: lambdaUrl, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    return { api: apiClient(running.apiUrl, running.token), admin: apiClient(running.apiUrl, readFileSync(path.join(tmp.dir, 'admin-token'), 'utf8').trim()) };
  };
  const deliver = (event: unknown) =>
    lambda!.send(new InvokeCommand({ FunctionName: API_FUNCTION, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(event)) }));
  const failures = async (admin: ReturnType<typeof apiClient>) => (await admin.request('GET', '/v1/admin/async-failures?limit=100')).json.failures as Listed[];
  /** What the killed invocation left: in `running/` until the next start lists it failed. */
  const runningMarkers = () => {
    try {
      return readdirSync(path.join(tmp.dir, 'async-failures', 'running'));
    } catch {
      return [];
    }
  };

  /** DynamoDB and S3 stand-ins of this test's own, the stack process on them (STRATUS_*_ENDPOINT): what the work leaves is visible. */
  const ownStores = async () => {
    const key = freshLocalCredentials();
    const dynamo = await startDynamoServer({ dir: path.join(tmp.dir, 'ddb'), credentials: key });
    const s3 = await startS3Server({ dir: path.join(tmp.dir, 's3'), buckets: [], versionedBuckets: [LOCAL_BUCKET], credentials: key });
    const db = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.url, credentials: key }));
    const bucket = new S3Client({ region: 'us-east-1', endpoint: s3.url, credentials: key, forcePathStyle: true });
    const env = {
      STRATUS_DYNAMODB_ENDPOINT: dynamo.url,
      STRATUS_S3_ENDPOINT: s3.url,
      AWS_ACCESS_KEY_ID: key.accessKeyId,
      AWS_SECRET_ACCESS_KEY: key.secretAccessKey,
    };
    const sessionRecord = async (sessionId: string) => (await db.send(new GetCommand({ TableName: tableNames('stratus').sessions, Key: { sessionId } }))).Item;
    const close = async () => {
      await running?.stop();
      running = undefined;
      db.destroy();
      bucket.destroy();
      await s3.close();
      await dynamo.close();
    };
    return { env, bucket, sessionRecord, close };
  };

  it('a turn run asynchronously: listed as Runtime.ExitError, and its redrive ends the dead turn `crashed`; a duplicate changes nothing', {
    timeout: 240_000,
  }, async () => {
    const stores = await ownStores();
    let { api, admin } = await start(stores.env);
    const sessionId = await api.createSession();
    await running!.script([{ forFirstText: 'slow', content: [bash('toolu_slow', 'sleep 60')] }]);
    const accepted = await fetch(`${running!.apiUrl}/v1/sessions/${sessionId}/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running!.token}`, 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ prompt: 'slow: run it' }),
    });
    expect(accepted.status).toBe(202);
    await until(
      () => api.messages(sessionId),
      (log) => log.some((m) => m.kind === 'assistant'),
    );
    await new Promise((r) => setTimeout(r, 1_000));
    await running!.kill();
    const killedAt = Date.now();

    ({ api, admin } = await start(stores.env));
    const [failure] = (await failures(admin)).filter((f) => f.event.kind === 'continue_turn' && f.event.sessionId === sessionId);
    expect(failure).toMatchObject({ functionName: API_FUNCTION, error: { type: 'Runtime.ExitError', message: expect.stringContaining('signal: killed') } });
    // Once the dead holder's beats are missed, the redrive finds the turn dead and ends it.
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + 4_000 - Date.now())));
    expect((await admin.request('POST', `/v1/admin/async-failures/${failure!.id}/redrive`)).status).toBe(202);
    // The stored session itself is freed by the redrive, before any reader looks at it.
    const stored = await until(
      () => stores.sessionRecord(sessionId),
      (r) => r?.lease === undefined,
    );
    expect(stored!.lastTurn).toMatchObject({ turnId: failure!.event.turnId, stopReason: 'crashed' });
    const session = await until(
      async () => (await api.request('GET', `/v1/sessions/${sessionId}`)).json,
      (s) => s.status === 'idle',
    );
    expect(session.lastTurn).toMatchObject({ turnId: failure!.event.turnId, stopReason: 'crashed' });
    const turnEvents = async () =>
      ((await api.request('GET', `/v1/sessions/${sessionId}/turns/${failure!.event.turnId}/events`)).json.events as { event: { type: string } }[]).map(
        (e) => e.event,
      );
    expect((await turnEvents()).at(-1)).toMatchObject({ type: 'turn_end', stopReason: 'crashed' });
    // The same event delivered twice more: no failure, no second end, the session stays free for the next prompt.
    await deliver(failure!.event);
    await deliver(failure!.event);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await failures(admin)).toEqual([]);
    expect((await turnEvents()).filter((e) => e.type === 'turn_end')).toHaveLength(1);
    await running!.script([{ forFirstText: 'slow', ...text('Back again.') }]);
    expect((await api.turn(sessionId, 'go on')).json).toMatchObject({ stopReason: 'end_turn' });
    await stores.close();
  });

  it('a background sub-agent: listed as Runtime.ExitError; the redrive and a duplicate sent with it run it once, to its end', {
    timeout: 240_000,
  }, async () => {
    let { api, admin } = await start();
    const sessionId = await api.createSession();
    const agentId = 'agent_toolu_bgr';
    await running!.script([
      {
        forFirstText: 'launch',
        content: [agentCall('toolu_bgr', { description: 'slow', prompt: 'SUB-R: slow step', subagent_type: 'general-purpose', run_in_background: true })],
      },
      { forFirstText: 'launch', ...text('Launched.') },
      { forFirstText: 'SUB-R', content: [bash('toolu_r1', 'sleep 60')] },
    ]);
    expect((await api.turn(sessionId, 'launch the work')).json).toMatchObject({ stopReason: 'end_turn' });
    const logPath = `/v1/sessions/${sessionId}/agents/${agentId}/messages`;
    await until(
      async () => (await api.request('GET', logPath)).json.messages ?? [],
      (log: unknown[]) => log.length >= 2,
    );
    await new Promise((r) => setTimeout(r, 1_000));
    await running!.kill();
    const killedAt = Date.now();

    ({ api, admin } = await start());
    await running!.script([{ forFirstText: 'SUB-R', ...text('Slow step done.') }]);
    const [failure] = (await failures(admin)).filter((f) => f.event.kind === 'run_subagent');
    expect(failure).toMatchObject({ error: { type: 'Runtime.ExitError' }, event: { sessionId } });
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + 4_000 - Date.now())));
    // The redrive and a duplicate of the same event at once: one takes the agent's lease, the other finds it held.
    const [redriven] = await Promise.all([admin.request('POST', `/v1/admin/async-failures/${failure!.id}/redrive`), deliver(failure!.event)]);
    expect(redriven.status).toBe(202);
    const agents = await until(
      async () => (await api.request('GET', `/v1/sessions/${sessionId}/agents`)).json.agents as { status: string }[],
      (list) => list[0]?.status === 'completed',
    );
    expect(agents).toHaveLength(1);
    const log = (await api.request('GET', logPath)).json.messages as { kind: string }[];
    expect(log.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'synthetic', 'assistant']);
    const subRequests = (await running!.modelRequests<MessagesRequest>()).filter((r) => firstText(r).startsWith('SUB-R'));
    expect(subRequests).toHaveLength(1);
    // Once it ended, another duplicate does nothing: no model call, no failure.
    const calls = (await running!.modelRequests()).length;
    await deliver(failure!.event);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await running!.modelRequests()).toHaveLength(calls);
    expect((await api.request('GET', logPath)).json.messages).toHaveLength(4);
    expect(await failures(admin)).toEqual([]);
  });

  it("a session's purge: listed as Runtime.ExitError, and its redrive with two duplicates removes everything once", { timeout: 240_000 }, async () => {
    const stores = await ownStores();
    try {
      let { api, admin } = await start(stores.env);
      // Enough files that the purge's S3 deletions take a while.
      const files = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`f/${i}.txt`, `${i}\n`]));
      const sessionId = await api.createSession(files);
      const record = (await stores.sessionRecord(sessionId))!;
      const prefix = `workspaces/${record.workspace.id}/`;
      const versionsLeft = async () => {
        const out = await stores.bucket.send(new ListObjectVersionsCommand({ Bucket: LOCAL_BUCKET, Prefix: prefix }));
        return (out.Versions?.length ?? 0) + (out.DeleteMarkers?.length ?? 0);
      };
      expect(await versionsLeft()).toBeGreaterThan(0);
      expect((await api.request('DELETE', `/v1/sessions/${sessionId}`)).status).toBeLessThan(300);
      await until(
        async () => runningMarkers(),
        (markers) => markers.length > 0,
        600,
      );
      await running!.kill();

      ({ api, admin } = await start(stores.env));
      const [failure] = (await failures(admin)).filter((f) => f.event.kind === 'purge_session');
      expect(failure).toMatchObject({ event: { kind: 'purge_session', sessionId }, error: { type: 'Runtime.ExitError' } });
      const [redriven] = await Promise.all([
        admin.request('POST', `/v1/admin/async-failures/${failure!.id}/redrive`),
        deliver(failure!.event),
        deliver(failure!.event),
      ]);
      expect(redriven.status).toBe(202);
      await until(
        () => stores.sessionRecord(sessionId),
        (item) => item === undefined,
        600,
      );
      await until(
        async () => runningMarkers().length,
        (n) => n === 0,
        600,
      );
      expect(await versionsLeft()).toBe(0);
      expect(await failures(admin)).toEqual([]);
    } finally {
      await stores.close();
    }
  });
});
