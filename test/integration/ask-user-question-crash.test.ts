import { afterEach, describe, expect, it } from 'vitest';
import { apiClient } from '../support/api-client.ts';
import { LIBRARY_QUESTION as question } from '../support/questions.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';

describe('a question that outlives its process', () => {
  const tmp = makeTempDir();
  let running: StackProcess | undefined;
  afterEach(async () => {
    await running?.stop();
    tmp.cleanup();
  });

  it('is answered after a kill -9 and a restart on the same data, and the turn resumes exactly once', { timeout: 180_000 }, async () => {
    running = await startStackProcess(tmp.dir);
    let api = apiClient(running.apiUrl, running.token);
    const sessionId = await api.createSession();
    await running.script([{ content: [{ type: 'tool_use', id: 'toolu_q', name: 'AskUserQuestion', input: { questions: [question] } }] }]);
    const first = await api.turn(sessionId, 'add dates');
    expect(first.json.stopReason).toBe('awaiting_answer');

    await running.kill();
    running = await startStackProcess(tmp.dir);
    api = apiClient(running.apiUrl, running.token);
    // The question is still there for whoever asks the new process.
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.questions.map((q: any) => q.toolUseId)).toEqual(['toolu_q']);

    await running.script([{ content: [{ type: 'text', text: 'Using luxon.' }] }]);
    const path = `/v1/sessions/${sessionId}/questions/toolu_q/answer`;
    // Two answers race: one resumes the turn, the other is told it came too late.
    const [a, b] = await Promise.all([
      api.request('POST', path, { answers: { [question.question]: 'luxon' } }),
      api.request('POST', path, { answers: { [question.question]: 'dayjs' } }),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 409]);
    const winner = a.status === 200 ? 'luxon' : 'dayjs';
    expect((a.status === 200 ? a : b).json.stopReason).toBe('end_turn');

    const messages = await api.messages(sessionId);
    const results = messages.flatMap((m: any) => m.content).filter((block: any) => block.type === 'tool_result');
    expect(results).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_q',
        content: `User has answered your questions: "Which library should we use?"="${winner}". You can now continue with the user's answers in mind.`,
      },
    ]);
    // One model request after the restart: the resumed turn ran once.
    expect(await running.modelRequests()).toHaveLength(1);
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json).toMatchObject({ status: 'idle', turnCount: 2, questions: [] });
  });
});
