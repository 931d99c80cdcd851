import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIBRARY_QUESTION as library } from '../support/questions.ts';
import { text, unscripted, useLocalStack } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const BIN = path.resolve('cli/stratus.mjs');
const features = {
  question: 'Which features do you want?',
  header: 'Features',
  options: [
    { label: 'Dark mode', description: 'A dark theme' },
    { label: 'Search', description: 'Full-text search' },
  ],
  multiSelect: true,
};
const ask = (id: string, questions: unknown[]) => ({ content: [{ type: 'tool_use' as const, id, name: 'AskUserQuestion', input: { questions } }] });

/** `stratus answer`: the agent's waiting questions listed, answered by label, number or own words, or declined. */
describe('stratus answer', () => {
  const fx = useLocalStack({ brain: unscripted });
  const tmp = makeTempDir();
  const stratus = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [BIN, ...args],
        { env: { ...process.env, STRATUS_CONFIG_DIR: path.join(tmp.dir, 'config'), NODE_OPTIONS: '' }, timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const newSession = async () => JSON.parse((await stratus('--json', 'new')).stdout).session.id as string;

  it('lists the questions, answers them by label, number and own words, and resumes the turn', { timeout: 120_000 }, async () => {
    expect((await stratus('login', '--url', fx.stack.apiUrl, '--token', fx.stack.token)).code).toBe(0);
    const sessionId = await newSession();
    fx.stack.model!.enqueue(ask('toolu_cli', [library, features]));
    const run = await stratus('run', 'add dates');
    expect(run.code).toBe(6);
    expect(run.stdout).toContain('? The agent asks  [toolu_cli]\n  1. Which library should we use?  (1) dayjs  2) luxon)');
    expect(run.stdout).toContain('— awaiting_answer');

    const listed = await stratus('answer', sessionId);
    expect(listed.code).toBe(6);
    expect(listed.stdout).toContain('toolu_cli  (goes on without an answer at ');
    expect(listed.stdout).toContain(
      '  2. [Features] Which features do you want?  (several may be picked)\n     1) Dark mode — A dark theme\n     2) Search — Full-text search',
    );
    expect(JSON.parse((await stratus('--json', 'answer', sessionId)).stdout).questions.map((q: any) => q.toolUseId)).toEqual(['toolu_cli']);

    // A label that is no option: the API's message, exit 2.
    const wrong = await stratus('answer', sessionId, '--answer', 'moment', '--answer', 'Search');
    expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringContaining('"moment" is not an option of "Which library should we use?"')]);

    fx.stack.model!.enqueue(text('Using luxon.'));
    const answered = await stratus(
      'answer',
      sessionId,
      'toolu_cli',
      '--answer',
      'LUXON',
      '--answer',
      '2=2',
      '--answer',
      '2=Dark mode',
      '--other',
      '2=printing',
    );
    expect(answered.stderr).toBe('');
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain('Using luxon.');
    const result = (await fx.api.messages(sessionId)).flatMap((m: any) => m.content).find((b: any) => b.type === 'tool_result');
    expect(result.content).toBe(
      'User has answered your questions: "Which library should we use?"="luxon", "Which features do you want?"="Search, Dark mode, printing". You can now continue with the user\'s answers in mind.',
    );
    expect((await stratus('answer', sessionId, '--answer', 'dayjs')).code).toBe(4); // nothing waits any more
  });

  it('declines a question with a message, and the turn goes on', { timeout: 120_000 }, async () => {
    const sessionId = await newSession();
    fx.stack.model!.enqueue(ask('toolu_no', [library]));
    expect((await stratus('run', '-s', sessionId, 'add dates')).code).toBe(6);
    expect((await stratus('answer', sessionId, '--answer', 'dayjs', '--decline')).code).toBe(2);
    fx.stack.model!.enqueue(text('Native Date, then.'));
    const declined = await stratus('answer', sessionId, '--decline', '-m', 'Use the built-in Date.');
    expect(declined.code).toBe(0);
    expect(declined.stdout).toContain('Native Date, then.');
    const result = (await fx.api.messages(sessionId)).flatMap((m: any) => m.content).find((b: any) => b.type === 'tool_result');
    expect(result).toMatchObject({ is_error: true, content: expect.stringContaining('To tell you how to proceed, the user said:\nUse the built-in Date.') });
  });
});
