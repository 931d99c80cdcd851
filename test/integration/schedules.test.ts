import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import { runScheduledTask } from '../../functions/schedules/run-schedule.ts';
import { MAX_SCHEDULE_RUNS } from '../../functions/stores/schedule-store.ts';
import { apiClient } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

describe('scheduled tasks', () => {
  const fx = useLocalStack({ apiTokens: { a: 'tenant-a', b: 'tenant-b' }, schedulerTickMs: 3_600_000 });
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack } = fx);
    api = apiClient(stack.apiUrl, 'a');
  });

  it('creates, lists, validates and hides schedules per tenant', async () => {
    const created = await api.request('POST', '/v1/schedules', { name: 'nightly', cron: '0 3 * * *', prompt: 'check things' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'nightly', cron: '0 3 * * *', timezone: 'UTC', enabled: true, lastRun: null, target: { newSession: true } });
    expect(created.json.nextRunAt).toMatch(/T03:00:00.000Z$/);
    const bad = await api.request('POST', '/v1/schedules', { name: 'x', cron: '0 3 * *', prompt: 'p' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toBe('Invalid "cron": expected 5 fields (minute hour day-of-month month day-of-week), got 4.');
    expect((await apiClient(stack.apiUrl, 'b').request('GET', `/v1/schedules/${created.json.id}`)).status).toBe(404);
    const list = await api.request('GET', '/v1/schedules');
    expect(list.json.schedules.map((s: { id: string }) => s.id)).toContain(created.json.id);
    const off = await api.request('PATCH', `/v1/schedules/${created.json.id}`, { enabled: false });
    expect(off.json).toMatchObject({ enabled: false, nextRunAt: null });
    expect((await api.request('DELETE', `/v1/schedules/${created.json.id}`)).status).toBe(204);
    expect((await api.request('GET', `/v1/schedules/${created.json.id}`)).status).toBe(404);
  });

  it('refuses, with a 400 naming the reason, a schedule that can never fire (30 February), on create and on edit', async () => {
    const never = 'Invalid "cron": "0 9 30 2 *" never fires: no calendar date has that day of the month in that month (e.g. 30 February).';
    const before = (await api.request('GET', '/v1/schedules')).json.schedules.length;
    const created = await api.request('POST', '/v1/schedules', { name: 'never', cron: '0 9 30 2 *', prompt: 'p' });
    expect(created.status).toBe(400);
    expect(created.json.error).toEqual({ code: 'invalid_request', message: never });
    expect((await api.request('GET', '/v1/schedules')).json.schedules.length).toBe(before);
    const leap = await api.request('POST', '/v1/schedules', { name: 'leap day', cron: '0 9 29 2 *', prompt: 'p' });
    expect(leap.status).toBe(201);
    expect(leap.json.nextRunAt).toMatch(/-02-29T09:00:00.000Z$/);
    const edited = await api.request('PATCH', `/v1/schedules/${leap.json.id}`, { cron: '0 9 30 2 *' });
    expect(edited.status).toBe(400);
    expect(edited.json.error.message).toBe(never);
    expect((await api.request('GET', `/v1/schedules/${leap.json.id}`)).json.cron).toBe('0 9 29 2 *');
  });

  it('fires when due: a new unattended session runs the prompt with tools, and the run is recorded', async () => {
    const created = await api.request('POST', '/v1/schedules', {
      name: 'count files',
      cron: '*/5 * * * *',
      prompt: 'count the files',
      files: { 'a.txt': 'a', 'b.txt': 'b' },
    });
    const id = created.json.id as string;
    // Make it due now, as the clock would.
    const record = (await stack.deps.schedules.get(id))!;
    await stack.deps.schedules.put({ ...record, nextRunAt: Date.now() - 1 });
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'ls | wc -l' } }] },
      { content: [{ type: 'text', text: 'There are 2 files.' }] },
    );
    await stack.scheduler.tick();

    const after = (await api.request('GET', `/v1/schedules/${id}`)).json;
    expect(after.lastRun).toMatchObject({ outcome: 'end_turn' });
    // The next firing comes after the one that ran (cron: the next 5-minute boundary).
    expect(new Date(after.nextRunAt).getTime()).toBeGreaterThan(new Date(after.lastRun.firedAt).getTime());
    const session = (await api.request('GET', `/v1/sessions/${after.lastRun.sessionId}`)).json;
    expect(session).toMatchObject({ status: 'idle', turnCount: 1, title: `count files @ ${after.lastRun.firedAt}` });
    const messages = await api.messages(after.lastRun.sessionId);
    expect(messages.find((m) => m.kind === 'tool_result').content[0].content).toBe('2');

    // The same firing delivered again does nothing.
    const again = await runScheduledTask(stack.deps, { kind: 'scheduled_task', scheduleId: id, firedAt: after.lastRun.firedAt });
    expect(again).toBeUndefined();
  });

  it('runs on demand in an existing session, and records a busy session as skipped', async () => {
    const sessionId = await api.createSession();
    const created = await api.request('POST', '/v1/schedules', { name: 'poke', cron: '0 * * * *', prompt: 'poke', sessionId });
    stack.model!.enqueue({ content: [{ type: 'text', text: 'poked' }] });
    const run = await api.request('POST', `/v1/schedules/${created.json.id}/run`);
    expect(run.json.run).toMatchObject({ sessionId, outcome: 'end_turn' });

    stack.model!.enqueue({ content: [{ type: 'text', text: 'slow' }], delayMs: 80 });
    const busy = api.turn(sessionId, 'hold the session');
    while ((await api.request('GET', `/v1/sessions/${sessionId}`)).json.status !== 'running') await new Promise((r) => setTimeout(r, 10));
    const skipped = await api.request('POST', `/v1/schedules/${created.json.id}/run`);
    expect(skipped.json.run).toMatchObject({ outcome: 'skipped_session_busy' });
    await busy;
  });

  it('keeps a history of firings with cost, lets PATCH move the target and change the prompt, and gives new sessions its budgets', async () => {
    const created = await api.request('POST', '/v1/schedules', {
      name: 'history',
      cron: '0 * * * *',
      prompt: 'first prompt',
      budgets: { maxModelCallsPerTurn: 1 },
    });
    const id = created.json.id as string;
    expect(created.json.budgets).toEqual({ maxModelCallsPerTurn: 1 });
    const usage = { input_tokens: 1_000_000, output_tokens: 0 };
    // A new session per run, with the schedule's budget: one model call, then budget_exceeded.
    stack.model!.enqueue({ content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo hi' } }], usage });
    const first = (await api.request('POST', `/v1/schedules/${id}/run`)).json.run;
    expect(first).toMatchObject({ outcome: 'budget_exceeded', budget: 'maxModelCallsPerTurn' });
    expect(first.costUsd).toBeCloseTo(3, 6);
    expect(first.usage).toMatchObject({ inputTokens: 1_000_000 });

    const sessionId = await api.createSession();
    const moved = await api.request('PATCH', `/v1/schedules/${id}`, { sessionId, prompt: 'second prompt' });
    expect(moved.status).toBe(200);
    expect(moved.json).toMatchObject({ prompt: 'second prompt', target: { sessionId } });
    stack.model!.enqueue({ content: [{ type: 'text', text: 'in the given session' }] });
    const second = (await api.request('POST', `/v1/schedules/${id}/run`)).json.run;
    expect(second).toMatchObject({ sessionId, outcome: 'end_turn' });
    expect((await api.messages(sessionId))[0].content).toEqual([{ type: 'text', text: 'second prompt' }]);

    const back = await api.request('PATCH', `/v1/schedules/${id}`, { sessionId: null, files: { 'seed.txt': 'x' } });
    expect(back.json.target).toEqual({ newSession: true });
    expect((await api.request('PATCH', `/v1/schedules/${id}`, { sessionId: 'ses_nope' })).status).toBe(404);

    const view = (await api.request('GET', `/v1/schedules/${id}`)).json;
    expect(view.runs.map((r: { outcome: string }) => r.outcome)).toEqual(['end_turn', 'budget_exceeded']);
    expect(view.runs[1].sessionId).toBe(first.sessionId);
    expect(view.lastRun).toEqual(view.runs[0]);
  });

  it('keeps the last MAX_SCHEDULE_RUNS firings', async () => {
    const id = (await api.request('POST', '/v1/schedules', { name: 'many', cron: '0 * * * *', prompt: 'p' })).json.id as string;
    for (let i = 0; i < MAX_SCHEDULE_RUNS + 3; i++)
      await stack.deps.schedules.recordRun(id, { firedAt: `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z`, outcome: 'end_turn' });
    const runs = (await api.request('GET', `/v1/schedules/${id}`)).json.runs as { firedAt: string }[];
    expect(runs).toHaveLength(MAX_SCHEDULE_RUNS);
    expect(runs[0]!.firedAt).toBe(`2026-01-01T00:00:${MAX_SCHEDULE_RUNS + 2}.000Z`);
    expect(runs.at(-1)!.firedAt).toBe('2026-01-01T00:00:03.000Z');
  });
});
