import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleScheduledEvent } from '../../../functions/schedules/run-schedule.ts';
import { startLocalStack, type LocalStack } from '../../../local/stack.ts';
import { apiClient } from '../../support/api-client.ts';
import { makeTempDir } from '../../support/temp-dir.ts';

/** The cron function's work: what an EventBridge schedule's Input delivers. */
describe('the cron handler', () => {
  const tmp = makeTempDir();
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    stack = await startLocalStack({ dataDir: tmp.dir, schedulerTickMs: 3_600_000 });
    api = apiClient(stack.apiUrl, stack.token);
  });
  afterAll(async () => {
    await stack.stop();
    tmp.cleanup();
  });

  it("runs the schedule's prompt as a turn of its session, once per firing time", async () => {
    const sessionId = await api.createSession();
    const schedule = (await api.request('POST', '/v1/schedules', { name: 'nightly', cron: '0 3 * * *', prompt: 'nightly check', sessionId })).json;
    stack.model!.enqueue({ content: [{ type: 'text', text: 'All green.' }] });
    const firedAt = '2026-12-01T03:00:00.000Z';
    const run = await handleScheduledEvent(stack.deps, { kind: 'scheduled_task', scheduleId: schedule.id, firedAt }, Date.now() + 600_000);
    expect(run).toMatchObject({ sessionId, outcome: 'end_turn', firedAt });
    const texts = (await api.messages(sessionId)).map((m) => m.content[0].text);
    expect(texts).toEqual(['nightly check', 'All green.']);
    // Scheduler retries deliver the same firing again: it does not run twice.
    expect(await handleScheduledEvent(stack.deps, { kind: 'scheduled_task', scheduleId: schedule.id, firedAt })).toBeUndefined();
  });

  it('rejects an event that is not a scheduled task', async () => {
    await expect(handleScheduledEvent(stack.deps, { kind: 'scheduled_turn', sessionId: 's' })).rejects.toThrow(/Not a scheduled task event/);
  });
});
