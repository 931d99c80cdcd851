import { afterAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { largestToolResultTotal, prefixProblem } from '../support/request-bodies.ts';
import { bash, chars, text, unscripted } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const BUDGET = 60_000;

describe('the tool-result budget across turns and a restart', () => {
  const tmp = makeTempDir();
  let stack: LocalStack | undefined;
  afterAll(async () => {
    await stack?.stop();
    tmp.cleanup();
  });

  it('keeps every request under budget, decides once, and repeats the same bytes', async () => {
    const start = (budget: number) => startLocalStack({ dataDir: tmp.dir, brain: unscripted, context: { perMessageBudgetChars: budget } });
    stack = await start(BUDGET);
    let api = apiClient(stack.apiUrl, stack.token);
    const sessionId = await api.createSession();
    const raws: string[] = [];

    // Turn 1: three ~200 KB outputs, each past Bash's threshold: persisted one by one to S3.
    stack.model!.enqueue(
      { content: [bash('toolu_big1', 'seq 1 40000'), bash('toolu_big2', 'seq 2 40001'), bash('toolu_big3', 'seq 3 40002')] },
      text('Three big outputs.'),
    );
    expect((await api.turn(sessionId, 'make big outputs')).json.stopReason).toBe('end_turn');
    // Turn 2: three results under the per-tool threshold that together pass the message budget.
    stack.model!.enqueue(
      {
        content: [bash('toolu_b1', chars(20_000, 'a')), bash('toolu_b2', chars(28_000, 'b')), bash('toolu_b3', chars(25_000, 'c'))],
      },
      text('Three medium outputs.'),
    );
    expect((await api.turn(sessionId, 'make medium outputs')).json.stopReason).toBe('end_turn');
    stack.model!.enqueue(text('Third turn.'));
    await api.turn(sessionId, 'turn three');
    raws.push(...stack.model!.requests.map((r) => r.raw));

    // A restart: every process-local thing is gone; only DynamoDB and S3 on disk remain. The new
    // process also runs with a lower budget (a config change between deploys): a harness that
    // re-derived decisions instead of reloading them would now replace toolu_b3 and change bytes
    // the model has already cached.
    await stack.stop();
    stack = await start(40_000);
    api = apiClient(stack.apiUrl, stack.token);
    stack.model!.enqueue(text('Fourth turn.'));
    await api.turn(sessionId, 'turn four');
    stack.model!.enqueue(text('Fifth turn.'));
    await api.turn(sessionId, 'turn five');
    raws.push(...stack.model!.requests.map((r) => r.raw));

    expect(raws).toHaveLength(7);
    for (const raw of raws) expect(largestToolResultTotal(raw)).toBeLessThanOrEqual(BUDGET);
    for (let i = 1; i < raws.length; i++) expect(prefixProblem(raws[i - 1]!, raws[i]!), `request ${i} vs ${i - 1}`).toBeUndefined();

    // The budget replaced exactly the largest fresh result, with the reference's message.
    const last = JSON.parse(raws.at(-1)!) as { messages: { role: string; content: any[] }[] };
    const results = new Map(
      last.messages
        .flatMap((m) => (m.role === 'user' ? m.content : []))
        .filter((b) => b.type === 'tool_result')
        .map((b) => [b.tool_use_id, b.content]),
    );
    expect(results.get('toolu_b1')).toBe('a'.repeat(20_000));
    expect(results.get('toolu_b3')).toBe('c'.repeat(25_000));
    expect(results.get('toolu_b2')).toBe(
      '<persisted-output>\nOutput too large (27.3KB). Full output saved to: /workspace/.stratus/tool-results/toolu_b2.txt\n\n' +
        `Preview (first 2KB):\n${'b'.repeat(2000)}\n...\n</persisted-output>`,
    );
    for (const id of ['toolu_big1', 'toolu_big2', 'toolu_big3']) {
      expect(results.get(id)).toMatch(
        new RegExp(
          `^<persisted-output>\\nOutput too large \\(223\\.5KB\\)\\. Full output saved to: /workspace/\\.stratus/tool-results/${id}\\.txt\\n\\nPreview \\(first 2KB\\):\\n`,
        ),
      );
    }
    expect(results.get('toolu_big1')).toContain('Preview (first 2KB):\n1\n2\n3\n');

    // Decided once: one record per decision, none repeated by later turns or the restart. (The
    // persisted ones are no candidates: they already are previews.)
    const log = await stack.deps.messages.loadFrom(sessionId, 0);
    const decisions = log.filter((m) => m.decisions).map((m) => m.decisions);
    expect(log.filter((m) => m.decisions).map((m) => m.kind)).toEqual(['assistant']);
    expect(decisions.flatMap((d) => d!.replaced.map((r) => r.toolUseId))).toEqual(['toolu_b2']);
    expect(decisions.flatMap((d) => d!.seen)).toEqual(['toolu_b1', 'toolu_b3']);
  });
});
