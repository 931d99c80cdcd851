import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDynamoServer } from '../../local/dynamo-server.ts';
import type { EmbeddedServer } from '../../local/service-child.ts';
import { freshLocalCredentials } from '../../local/local-credentials.ts';
import { agentCall } from '../support/agent-requests.ts';
import { apiClient } from '../support/api-client.ts';
import { bash, text } from '../support/stack-fixture.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

interface Listed {
  id: string;
  event: { kind: string; sessionId?: string };
  error: { type: string; message: string };
}

/**
 * Asynchronous work that throws mid-way: the stack runs on a DynamoDB of this test's own
 * (STRATUS_DYNAMODB_ENDPOINT), stopped while the work runs, so the handler's next write fails
 * and the invocation throws. It is listed with its error; once DynamoDB is back (on the same
 * folder and port) the redrive completes it. (A purge that throws: async-failures.test.ts.)
 */
describe('asynchronous work whose store fails mid-way, then redriven', () => {
  const tmp = makeTempDir();
  let running: StackProcess | undefined;
  let dynamo: EmbeddedServer | undefined;
  afterEach(async () => {
    await running?.stop();
    await dynamo?.close();
    tmp.cleanup();
  });

  /** The stack process on a DynamoDB of this test's own, and a way to bring that DynamoDB back after stopping it. */
  const stackOnOwnDynamo = async () => {
    const key = freshLocalCredentials();
    const dynamoDir = path.join(tmp.dir, 'own-dynamo');
    dynamo = await startDynamoServer({ dir: dynamoDir, credentials: key });
    const port = Number(new URL(dynamo.url).port);
    running = await startStackProcess(path.join(tmp.dir, 'stack'), {
      STRATUS_HEARTBEAT_MS: '1000',
      STRATUS_DYNAMODB_ENDPOINT: dynamo.url,
      AWS_ACCESS_KEY_ID: key.accessKeyId,
      AWS_SECRET_ACCESS_KEY: key.secretAccessKey,
    });
    const admin = apiClient(running.apiUrl, readFileSync(path.join(tmp.dir, 'stack', 'admin-token'), 'utf8').trim());
    return {
      api: apiClient(running.apiUrl, running.token),
      // The failures store is the local file, readable without DynamoDB (the admin token is a configured one).
      failures: async () => (await admin.request('GET', '/v1/admin/async-failures')).json.failures as Listed[],
      redrive: async (id: string) => (await admin.request('POST', `/v1/admin/async-failures/${id}/redrive`)).status,
      restartDynamo: async () => {
        dynamo = await startDynamoServer({ dir: dynamoDir, credentials: key, port });
      },
    };
  };

  it('a turn run asynchronously whose writes fail ends itself (the turn engine catches the error): nothing to redrive, nothing left running', {
    timeout: 240_000,
  }, async () => {
    const { api, failures, restartDynamo } = await stackOnOwnDynamo();
    const sessionId = await api.createSession();
    await running!.script([{ forFirstText: 'slow', content: [bash('toolu_s', 'sleep 4; echo slept')] }]);
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
    await dynamo!.close();
    // The command ends, its result cannot be stored, the turn fails inside its invocation.
    await new Promise((r) => setTimeout(r, 10_000));
    await restartDynamo();
    const session = await until(
      async () => (await api.request('GET', `/v1/sessions/${sessionId}`)).json,
      (s) => s.status !== 'running' && s.lastTurn !== null,
      900,
    );
    expect(['crashed', 'internal_error']).toContain(session.lastTurn.stopReason);
    expect((await failures()).filter((f) => f.event.kind === 'continue_turn')).toEqual([]);
    await running!.script([{ forFirstText: 'slow', ...text('Back again.') }]);
    expect((await api.turn(sessionId, 'go on')).json).toMatchObject({ stopReason: 'end_turn' });
  });

  it('a background sub-agent whose writes fail is listed as failed, and its redrive finishes it from its log', { timeout: 240_000 }, async () => {
    const { api, failures, redrive, restartDynamo } = await stackOnOwnDynamo();
    const sessionId = await api.createSession();
    const agentId = 'agent_toolu_bge';
    await running!.script([
      {
        forFirstText: 'launch',
        content: [agentCall('toolu_bge', { description: 'step', prompt: 'SUB-E: one step', subagent_type: 'general-purpose', run_in_background: true })],
      },
      { forFirstText: 'launch', ...text('Launched.') },
      { forFirstText: 'SUB-E', content: [bash('toolu_e1', 'sleep 4; echo stepped')] },
    ]);
    expect((await api.turn(sessionId, 'launch the work')).json).toMatchObject({ stopReason: 'end_turn' });
    const logPath = `/v1/sessions/${sessionId}/agents/${agentId}/messages`;
    await until(
      async () => (await api.request('GET', logPath)).json.messages ?? [],
      (log: unknown[]) => log.length >= 2,
    );
    // DynamoDB goes away while the command runs: the agent's next write (the result) fails.
    await dynamo!.close();
    const [failure] = await until(
      async () => (await failures()).filter((f) => f.event.kind === 'run_subagent'),
      (found) => found.length > 0,
      900,
    );
    expect(failure!.event).toMatchObject({ sessionId });
    expect(failure!.error.type).not.toBe('Runtime.ExitError');

    await restartDynamo();
    await running!.script([{ forFirstText: 'SUB-E', ...text('The step is done.') }]);
    // Its lease is dead three missed beats after the failure; the redrive then takes it and goes on.
    await new Promise((r) => setTimeout(r, 4_000));
    expect(await redrive(failure!.id)).toBe(202);
    const agents = await until(
      async () => (await api.request('GET', `/v1/sessions/${sessionId}/agents`)).json.agents as { status: string }[],
      (list) => list[0]?.status === 'completed',
      600,
    );
    expect(agents).toHaveLength(1);
    const log = (await api.request('GET', logPath)).json.messages as { kind: string }[];
    expect(log.at(-1)!.kind).toBe('assistant');
    expect(await failures()).toEqual([]);
  });
});
