import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { demoBrain } from '../../local/scripted-model/demo-brain.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

/**
 * docs/local-stack.md, "Telling the scripted model what to do": its example script, sent as the
 * doc sends it (POST /_script over HTTP) to the model `npm start` runs, makes the turn call the
 * tool it names; GET /_requests shows what Stratus sent.
 */
describe('the scripted model driven over HTTP as docs/local-stack.md shows', () => {
  const fx = useLocalStack({ brain: demoBrain });

  it('runs the documented script: Write, then the scripted answer', { timeout: 60_000 }, async () => {
    const doc = readFileSync('docs/local-stack.md', 'utf8');
    const script = /curl -s -X POST \$MODEL\/_script -H 'content-type: application\/json' -d '(\[[\s\S]*?\])'/.exec(doc)?.[1];
    expect(script).toBeDefined();
    const model = fx.stack.model!.url;
    const queued = await fetch(`${model}/_script`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: script });
    expect(await queued.json()).toEqual({ queued: 2 });

    const sessionId = await fx.api.createSession();
    const turn = await fx.api.turn(sessionId, 'any prompt');
    expect(turn.json.stopReason).toBe('end_turn');
    expect((await fx.api.request('GET', `/v1/sessions/${sessionId}/workspace/files/note.txt`)).text).toBe('scripted\n');
    const messages = await fx.api.messages(sessionId);
    expect(messages.at(-1).content).toEqual([{ type: 'text', text: 'Wrote the note.' }]);

    const requests = (await (await fetch(`${model}/_requests`)).json()) as { messages: { content: { type: string }[] }[] }[];
    expect(requests.at(-1)!.messages.at(-1)!.content[0]).toMatchObject({ type: 'tool_result' });
    // The queue ran dry: the demo brain answers the next prompt again.
    const next = await fx.api.turn(sessionId, 'please run `echo brain-again`');
    expect(next.json.stopReason).toBe('end_turn');
    expect(JSON.stringify((await fx.api.messages(sessionId)).filter((m) => m.kind === 'tool_result').at(-1).content)).toContain('brain-again');
  });
});
