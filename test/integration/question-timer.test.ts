import { describe, expect, it } from 'vitest';
import { toQuestionTimerRequest } from '../../functions/deps/question-timers.ts';
import { handleCronEvent } from '../../functions/schedules/cron-event.ts';
import { LIBRARY_QUESTION as library } from '../support/questions.ts';
import { unscripted, useLocalStack } from '../support/stack-fixture.ts';

const ask = (id: string) => ({ content: [{ type: 'tool_use' as const, id, name: 'AskUserQuestion', input: { questions: [library] } }] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A question's one-time timer (AWS: an EventBridge Scheduler `at()` schedule) as the cron function receives it. */
describe('the question timeout timer', () => {
  // The local scheduler never ticks here: only the timer's event resumes the turn.
  const fx = useLocalStack({ brain: unscripted, schedulerTickMs: 3_600_000 });
  const waitingSession = async (toolUseId: string) => {
    const sessionId = (await fx.api.request('POST', '/v1/sessions', { settings: { questionTimeoutSeconds: 1 } })).json.id as string;
    fx.stack.model!.enqueue(ask(toolUseId));
    expect((await fx.api.turn(sessionId, 'add dates')).json.stopReason).toBe('awaiting_answer');
    return sessionId;
  };
  const toolResults = async (sessionId: string) =>
    (await fx.api.messages(sessionId)).flatMap((m: any) => m.content).filter((b: any) => b.type === 'tool_result');

  it('is a one-time schedule that fires the cron function at the next whole minute after the question expires, and deletes itself', () => {
    const target = { groupName: 'stratus-dev', targetArn: 'arn:aws:lambda:eu-west-1:1:function:stratus-dev-cron', roleArn: 'arn:aws:iam::1:role/scheduler' };
    const request = toQuestionTimerRequest({ sessionId: 'ses_1', toolUseId: 'toolu_1', expiresAt: '2026-12-02T16:07:31.500Z' }, target);
    expect(request).toMatchObject({
      GroupName: 'stratus-dev',
      ScheduleExpression: 'at(2026-12-02T16:08:00)',
      ScheduleExpressionTimezone: 'UTC',
      ActionAfterCompletion: 'DELETE',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: target.targetArn, RoleArn: target.roleArn },
    });
    expect(request.Name).toMatch(/^question-[0-9a-f]{40}$/);
    expect(JSON.parse(request.Target!.Input!)).toEqual({ kind: 'question_timeout', sessionId: 'ses_1' });
    // On a whole minute already: that minute.
    expect(toQuestionTimerRequest({ sessionId: 's', toolUseId: 't', expiresAt: '2026-12-02T16:08:00.000Z' }, target).ScheduleExpression).toBe(
      'at(2026-12-02T16:08:00)',
    );
  });

  it('resumes the turn with "no answer" once the time ran out; a second firing does nothing', async () => {
    const sessionId = await waitingSession('toolu_timer');
    // Too early (a firing before the time): nothing closes, nothing resumes.
    expect(await handleCronEvent(fx.stack.deps, { kind: 'question_timeout', sessionId })).toBeUndefined();
    expect((await fx.api.request('GET', `/v1/sessions/${sessionId}/questions`)).json.questions).toHaveLength(1);
    await sleep(1100);
    fx.stack.model!.enqueue({ content: [{ type: 'text', text: 'Chose dayjs myself.' }] });
    const summary = (await handleCronEvent(fx.stack.deps, { kind: 'question_timeout', sessionId })) as { stopReason: string };
    expect(summary.stopReason).toBe('end_turn');
    expect((await toolResults(sessionId)).map((b: any) => b.content)).toEqual([expect.stringContaining('No one answered your questions in the time')]);
    expect(await handleCronEvent(fx.stack.deps, { kind: 'question_timeout', sessionId })).toBeUndefined();
    expect((await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json).toMatchObject({ status: 'idle', turnCount: 2 });
  });

  it('racing an answer, exactly one of them closes the question and the turn resumes once', async () => {
    const sessionId = await waitingSession('toolu_race');
    await sleep(1100);
    fx.stack.model!.enqueue({ content: [{ type: 'text', text: 'Done.' }] });
    const [answered] = await Promise.all([
      fx.api.request('POST', `/v1/sessions/${sessionId}/questions/toolu_race/answer`, { answers: { [library.question]: 'luxon' } }),
      handleCronEvent(fx.stack.deps, { kind: 'question_timeout', sessionId }),
    ]);
    // The answer either closed the question (its turn ran here, or the timer's resume took it: 409
    // session_busy) or came too late (409 already_answered): never both, never a second resume.
    const tooLate = answered.status === 409 && answered.json.error.code === 'already_answered';
    expect(tooLate || answered.status === 200 || answered.json.error.code === 'session_busy').toBe(true);
    const results = await toolResults(sessionId);
    expect(results).toHaveLength(1);
    expect(results[0].content).toEqual(
      tooLate ? expect.stringContaining('No one answered') : expect.stringContaining('"Which library should we use?"="luxon"'),
    );
    const session = (await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json;
    expect(session).toMatchObject({ status: 'idle', turnCount: 2 });
  });
});
