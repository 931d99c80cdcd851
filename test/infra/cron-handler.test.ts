import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScheduledTurn } from '../../functions/handlers/scheduled-turn.ts';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { makeTempDir } from '../support/temp-dir.ts';

describe('the cron handler', () => {
  const tmp = makeTempDir();
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    stack = await startLocalStack({ dataDir: tmp.dir, brain: () => ({ error: { status: 500, type: 'api_error', message: 'unscripted' } }) });
    api = apiClient(stack.apiUrl, stack.token);
  });
  afterAll(async () => {
    await stack.stop();
    tmp.cleanup();
  });

  const event = (sessionId: string) => ({ kind: 'scheduled_turn', scheduleName: 'nightly', tenantId: 'local', sessionId, prompt: 'nightly check' });

  it('runs the scheduled prompt as a turn of the session', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'text', text: 'All green.' }] });
    const outcome = await runScheduledTurn(stack.deps, event(sessionId));
    expect(outcome).toMatchObject({ status: 'ran', stopReason: 'end_turn' });
    const messages = await api.request('GET', `/v1/sessions/${sessionId}/messages`);
    expect(JSON.stringify(messages.json)).toContain('nightly check');
    expect(JSON.stringify(messages.json)).toContain('All green.');
  });

  it('skips the tick when the session is running a turn', async () => {
    const sessionId = await api.createSession();
    const now = Date.now();
    await stack.deps.sessions.acquireLease(sessionId, { owner: 'other/turn_x', turnId: 'turn_x', expiresAt: now + 60_000 }, now);
    expect(await runScheduledTurn(stack.deps, event(sessionId))).toEqual({ status: 'skipped_busy' });
  });

  it('rejects an event that is not a scheduled turn', async () => {
    await expect(runScheduledTurn(stack.deps, { kind: 'scheduled_turn', sessionId: 's' })).rejects.toThrow(/scheduleName/);
  });
});
