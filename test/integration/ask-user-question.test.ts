import { describe, expect, it } from 'vitest';
import { LIBRARY_QUESTION as library } from '../support/questions.ts';
import { unscripted, useLocalStack } from '../support/stack-fixture.ts';
import { withoutCacheControl } from '../support/request-bodies.ts';
import { until } from '../support/until.ts';

const features = {
  question: 'Which features do you want?',
  header: 'Features',
  options: [
    { label: 'Dark mode', description: 'A dark theme' },
    { label: 'Search', description: 'Full-text search' },
    { label: 'Export', description: 'CSV export' },
  ],
  multiSelect: true,
};
const ask = (id: string, questions: unknown[]) => ({ type: 'tool_use' as const, id, name: 'AskUserQuestion', input: { questions } });
const noAnswer = (why: string, questions: string[]) =>
  `${why}\n\nQuestions asked:\n${questions.map((q) => `- "${q}"\n  (No answer provided)`).join('\n')}\n\nGo on without the answers: choose what you think best, and say which choice you made and why.`;

/** AskUserQuestion: a durable question through the API, the turn engine and the approvals table (docs/tools.md). */
describe('the AskUserQuestion tool', () => {
  const fx = useLocalStack({ brain: unscripted, schedulerTickMs: 300 });
  const createSession = async (settings: Record<string, unknown> = {}) => {
    const res = await fx.api.request('POST', '/v1/sessions', { settings });
    expect(res.status).toBe(201);
    return res.json.id as string;
  };

  it('pauses the turn with the question, refuses bad answers, resumes on the answer with the reference text, and takes one answer', async () => {
    const { api, stack } = fx;
    const sessionId = await createSession();
    stack.model!.enqueue({ content: [{ type: 'text', text: 'Let me ask.' }, ask('toolu_q1', [library, features])] });
    const first = await api.turn(sessionId, 'add dates');
    expect(first.json.stopReason).toBe('awaiting_answer');
    const question = first.json.events.find((e: any) => e.type === 'question');
    expect(question).toMatchObject({ type: 'question', toolUseId: 'toolu_q1', questions: [library, features] });
    // A day by default.
    expect(Date.parse(question.expiresAt) - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect(first.json.events.filter((e: any) => e.type === 'tool_result')).toEqual([]);

    const session = (await api.request('GET', `/v1/sessions/${sessionId}`)).json;
    expect(session.status).toBe('awaiting_answer');
    expect(session.questions).toEqual([
      { toolUseId: 'toolu_q1', turnId: first.json.turnId, questions: [library, features], createdAt: expect.any(String), expiresAt: question.expiresAt },
    ]);
    expect((await api.request('GET', `/v1/sessions/${sessionId}/questions`)).json.questions).toEqual(session.questions);
    expect((await api.turn(sessionId, 'something else')).json.error.code).toBe('awaiting_permission');

    const answerPath = `/v1/sessions/${sessionId}/questions/toolu_q1/answer`;
    const bad = async (body: unknown) => {
      const res = await api.request('POST', answerPath, body);
      return [res.status, res.json.error.message];
    };
    expect(await bad({ answers: { [library.question]: 'moment', [features.question]: ['Search'] } })).toEqual([
      400,
      '"moment" is not an option of "Which library should we use?" (its options: "dayjs", "luxon").',
    ]);
    expect(await bad({ answers: { [library.question]: 'dayjs' } })).toEqual([
      400,
      '2 questions were asked and 1 answered: no answer for "Which features do you want?" (give an option\'s label in "answers", or your own words in "other").',
    ]);
    expect(await bad({ answers: { [library.question]: ['dayjs', 'luxon'], [features.question]: ['Search'] } })).toEqual([
      400,
      '"Which library should we use?" takes one answer (an option\'s label, or your own words in "other"); 2 were given.',
    ]);
    expect(await bad({ answers: { 'Why?': 'x', [library.question]: 'dayjs', [features.question]: 'Search' } })).toEqual([
      400,
      '"answers" names "Why?", which is not a question asked ("Which library should we use?", "Which features do you want?").',
    ]);
    expect((await api.request('POST', `/v1/sessions/${sessionId}/questions/toolu_nope/answer`, { answers: {} })).status).toBe(404);
    expect((await api.request('POST', `/v1/sessions/${sessionId}/permissions/toolu_q1`, { decision: 'allow' })).status).toBe(404);

    stack.model!.enqueue({ content: [{ type: 'text', text: 'Using dayjs.' }] });
    const resumed = await api.request('POST', answerPath, {
      answers: { [library.question]: 'dayjs', [features.question]: ['Search', 'Dark mode'] },
      other: { [features.question]: 'printing' },
      notes: { [library.question]: 'we already use it elsewhere' },
    });
    expect(resumed.status).toBe(200);
    expect(resumed.json.stopReason).toBe('end_turn');
    const expected =
      'User has answered your questions: "Which library should we use?"="dayjs" user notes: we already use it elsewhere, ' +
      '"Which features do you want?"="Search, Dark mode, printing". You can now continue with the user\'s answers in mind.';
    expect(resumed.json.events.filter((e: any) => e.type === 'tool_result').map((r: any) => [r.toolUseId, r.isError, r.content])).toEqual([
      ['toolu_q1', false, expected],
    ]);
    const sent = stack.model!.requests.at(-1)!.body.messages;
    expect(withoutCacheControl(sent.at(-1)!.content)).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_q1', content: expected }]);

    const twice = await api.request('POST', answerPath, { answers: { [library.question]: 'luxon', [features.question]: 'Export' } });
    expect([twice.status, twice.json.error.code]).toEqual([409, 'already_answered']);
    const after = (await api.request('GET', `/v1/sessions/${sessionId}`)).json;
    expect([after.status, after.questions]).toEqual(['idle', []]);
    expect((await api.request('GET', `/v1/sessions/${sessionId}/questions`)).json.questions).toEqual([]);
  });

  it('takes a decline: the call gets the reference text for a rejected tool use (with the feedback), and the turn goes on', async () => {
    const { api, stack } = fx;
    const rejected =
      "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file).";
    const sessionId = await createSession();
    stack.model!.enqueue({ content: [ask('toolu_d1', [library])] });
    expect((await api.turn(sessionId, 'add dates')).json.stopReason).toBe('awaiting_answer');
    stack.model!.enqueue({ content: [{ type: 'text', text: 'Understood.' }] });
    const declined = await api.request('POST', `/v1/sessions/${sessionId}/questions/toolu_d1/decline`);
    expect([declined.status, declined.json.stopReason]).toEqual([200, 'end_turn']);
    expect(declined.json.events.filter((e: any) => e.type === 'tool_result').map((r: any) => [r.isError, r.content])).toEqual([
      [true, `${rejected} STOP what you are doing and wait for the user to tell you how to proceed.`],
    ]);
    const again = await api.request('POST', `/v1/sessions/${sessionId}/questions/toolu_d1/decline`, {});
    expect([again.status, again.json.error.code]).toEqual([409, 'already_answered']);

    stack.model!.enqueue({ content: [ask('toolu_d2', [library])] });
    expect((await api.turn(sessionId, 'ask again')).json.stopReason).toBe('awaiting_answer');
    expect((await api.request('POST', `/v1/sessions/${sessionId}/questions/toolu_d2/decline`, { feedback: '' })).status).toBe(400);
    stack.model!.enqueue({ content: [{ type: 'text', text: 'Native Date it is.' }] });
    const withFeedback = await api.request('POST', `/v1/sessions/${sessionId}/questions/toolu_d2/decline`, { feedback: 'Use the built-in Date.' });
    expect(withFeedback.json.events.find((e: any) => e.type === 'tool_result').content).toBe(
      `${rejected} To tell you how to proceed, the user said:\nUse the built-in Date.`,
    );
  });

  it('ends awaiting_permission when a permission waits before a question', async () => {
    const { api, stack } = fx;
    const sessionId = await createSession({ permissionMode: 'default' });
    stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_m1', name: 'Bash', input: { command: 'rm -rf build' } }, ask('toolu_m2', [library])] });
    const turn = await api.turn(sessionId, 'clean and ask');
    expect(turn.json.stopReason).toBe('awaiting_permission');
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.status).toBe('awaiting_permission');
  });

  it('answers at once, without pausing, where no one can answer (an unattended session), and ignores answers the model wrote itself', async () => {
    const { api, stack } = fx;
    const sessionId = await createSession({ unattended: true });
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_u', name: 'AskUserQuestion', input: { questions: [library], answers: { [library.question]: 'luxon' } } }] },
      { content: [{ type: 'text', text: 'Going with dayjs.' }] },
    );
    const turn = await api.turn(sessionId, 'add dates');
    expect(turn.json.stopReason).toBe('end_turn');
    expect(turn.json.events.filter((e: any) => e.type === 'question')).toEqual([]);
    const result = turn.json.events.find((e: any) => e.type === 'tool_result');
    expect([result.isError, result.content]).toEqual([false, noAnswer('No one can answer questions in this session.', [library.question])]);
  });

  it('refuses input the reference refuses, with its texts', async () => {
    const { api, stack } = fx;
    const sessionId = await createSession();
    stack.model!.enqueue(
      {
        content: [
          ask('toolu_one', [{ ...library, options: [library.options[0]] }]),
          ask('toolu_dup', [{ ...library, options: [library.options[0], library.options[0]] }]),
          { type: 'tool_use', id: 'toolu_extra', name: 'AskUserQuestion', input: { questions: [library], bogus: 1 } },
        ],
      },
      { content: [{ type: 'text', text: 'Fine.' }] },
    );
    const turn = await api.turn(sessionId, 'ask badly');
    expect(turn.json.stopReason).toBe('end_turn');
    const results = turn.json.events.filter((e: any) => e.type === 'tool_result').map((r: any) => [r.toolUseId, r.isError, r.content]);
    expect(results).toEqual([
      ['toolu_one', true, expect.stringContaining('"message": "Too small: expected array to have >=2 items"')],
      ['toolu_dup', true, expect.stringContaining('Question texts must be unique, option labels must be unique within each question')],
      [
        'toolu_extra',
        true,
        '<tool_use_error>InputValidationError: AskUserQuestion failed due to the following issue:\nAn unexpected parameter `bogus` was provided</tool_use_error>',
      ],
    ]);
  });

  it('goes on without an answer when the question times out, with nothing waiting meanwhile', async () => {
    const { api, stack } = fx;
    const sessionId = await createSession({ questionTimeoutSeconds: 1 });
    stack.model!.enqueue({ content: [ask('toolu_t', [library])] });
    const first = await api.turn(sessionId, 'add dates');
    expect(first.json.stopReason).toBe('awaiting_answer');
    stack.model!.enqueue({ content: [{ type: 'text', text: 'Chose dayjs myself.' }] });
    // The local scheduler's tick finds the question past its time and resumes the turn.
    await until(
      async () => (await api.request('GET', `/v1/sessions/${sessionId}`)).json,
      (s) => s.turnCount === 2 && s.status === 'idle',
    );
    const messages = await api.messages(sessionId);
    const result = messages.at(-2)!.content[0];
    expect(result).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_t',
      content: noAnswer('No one answered your questions in the time this session allows for an answer.', [library.question]),
    });
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json).toMatchObject({ status: 'idle', lastTurn: { stopReason: 'end_turn' } });
    const late = await api.request('POST', `/v1/sessions/${sessionId}/questions/toolu_t/answer`, { answers: { [library.question]: 'luxon' } });
    expect(late.status).toBe(409);
  });
});
