import { afterEach, describe, expect, it } from 'vitest';
import { apiClient } from '../support/api-client.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const PLAN = '1. Add formatDate\n2. Test it';

describe('a plan that outlives its process', () => {
  const tmp = makeTempDir();
  let running: StackProcess | undefined;
  afterEach(async () => {
    await running?.stop();
    tmp.cleanup();
  });

  it('is approved after a kill -9 and a restart on the same data, and the turn resumes exactly once in the chosen mode', { timeout: 180_000 }, async () => {
    running = await startStackProcess(tmp.dir);
    let api = apiClient(running.apiUrl, running.token);
    const created = await api.request('POST', '/v1/sessions', { settings: { permissionMode: 'default' } });
    const sessionId = created.json.id as string;
    await running.script([
      { content: [{ type: 'tool_use', id: 'toolu_in', name: 'EnterPlanMode', input: {} }] },
      { content: [{ type: 'tool_use', id: 'toolu_plan', name: 'ExitPlanMode', input: { plan: PLAN } }] },
    ]);
    const first = await api.turn(sessionId, 'add dates');
    expect(first.json.stopReason).toBe('awaiting_permission');

    await running.kill();
    running = await startStackProcess(tmp.dir);
    api = apiClient(running.apiUrl, running.token);
    // The plan is still there for whoever asks the new process, and the session still in plan mode.
    const waiting = (await api.request('GET', `/v1/sessions/${sessionId}`)).json;
    expect([waiting.permissions.mode, waiting.plans.map((p: any) => [p.toolUseId, p.plan])]).toEqual(['plan', [['toolu_plan', PLAN]]]);

    await running.script([{ content: [{ type: 'text', text: 'Starting.' }] }]);
    const path = `/v1/sessions/${sessionId}/plans/toolu_plan`;
    // Two decisions race: one resumes the turn, the other is told it came too late.
    const [a, b] = await Promise.all([
      api.request('POST', path, { decision: 'approve', mode: 'acceptEdits' }),
      api.request('POST', path, { decision: 'reject', feedback: 'no' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const approvedWon = a.status === 200;
    expect((approvedWon ? a : b).json.stopReason).toBe('end_turn');

    const messages = await api.messages(sessionId);
    const results = messages.flatMap((m: any) => m.content).filter((block: any) => block.type === 'tool_result' && block.tool_use_id === 'toolu_plan');
    expect(results).toHaveLength(1);
    expect(results[0].content).toMatch(approvedWon ? /^User has approved your plan\./ : /the user said:\nno$/);
    // One model request after the restart: the resumed turn ran once.
    expect(await running.modelRequests()).toHaveLength(1);
    const after = (await api.request('GET', `/v1/sessions/${sessionId}`)).json;
    expect(after).toMatchObject({ status: 'idle', turnCount: 2, plans: [], permissions: { mode: approvedWon ? 'acceptEdits' : 'plan' } });
  });
});
