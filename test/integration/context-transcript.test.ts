import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { uuidFrom } from '../../functions/context/claude-jsonl.ts';
import { dateBlock, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

describe('transcripts in Claude Code JSONL', () => {
  const env = useLocalStack({ brain: unscripted, model: { retryBaseDelayMs: 1 } });

  it('exports a session as a chained transcript and imports it into a new session that continues it', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    stack.model!.enqueue(
      {
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'toolu_x1', name: 'Bash', input: { command: 'echo hi' } },
        ],
      },
      text('It printed hi.'),
    );
    await api.turn(sessionId, 'run echo hi');
    stack.model!.enqueue(text('SUMMARY: echo hi printed hi.'));
    expect((await api.request('POST', `/v1/sessions/${sessionId}/compact`)).status).toBe(200);

    const res = await fetch(`${stack.apiUrl}/v1/sessions/${sessionId}/transcript.jsonl?cwd=/home/me/project`, {
      headers: { authorization: `Bearer ${stack.token}` },
    });
    expect(res.status).toBe(200);
    const claudeId = uuidFrom(sessionId);
    expect(res.headers.get('x-claude-session-id')).toBe(claudeId);
    expect(claudeId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const body = await res.text();
    expect(body.endsWith('\n')).toBe(true);
    const entries = body
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(entries.map((e) => (e.type === 'system' ? `system:${e.subtype}` : e.type))).toEqual([
      'user',
      'assistant',
      'user',
      'assistant', // the turn
      'system:compact_boundary',
      'user',
      'assistant', // boundary, summary, the kept tail
    ]);
    // One chain: each entry's parent is the one before, and the boundary restarts it.
    for (let i = 1; i < entries.length; i++) {
      if (entries[i].type === 'system') expect(entries[i]).toMatchObject({ parentUuid: null, logicalParentUuid: entries[i - 1].uuid });
      else expect(entries[i].parentUuid).toBe(entries[i - 1].uuid);
    }
    expect(entries[0]).toMatchObject({
      parentUuid: null,
      isSidechain: false,
      type: 'user',
      userType: 'external',
      cwd: '/home/me/project',
      sessionId: claudeId,
      version: '2.1.88',
      message: { role: 'user', content: 'run echo hi' },
    });
    expect(entries[1].message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-5-5',
      stop_reason: 'tool_use',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'toolu_x1', name: 'Bash', input: { command: 'echo hi' } },
      ],
    });
    expect(entries[2].message.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_x1', content: 'hi' }]);
    expect(entries[4]).toMatchObject({ content: 'Conversation compacted', compactMetadata: { trigger: 'manual' } });
    expect(entries[5]).toMatchObject({ isCompactSummary: true });
    expect(entries[5].message.content).toContain('SUMMARY: echo hi printed hi.');

    // Import: a new session whose next turn sends what the original would have sent.
    const imported = await fetch(`${stack.apiUrl}/v1/sessions/import?title=from%20laptop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/x-ndjson' },
      body,
    });
    expect(imported.status).toBe(201);
    const newId = ((await imported.json()) as { id: string; title: string }).id;
    expect(newId).not.toBe(sessionId);
    stack.model!.enqueue(text('Original.'), text('Imported.'));
    await api.turn(sessionId, 'continue');
    await api.turn(newId, 'continue');
    const [original, copy] = stack.model!.requests.slice(-2);
    expect(copy!.body.messages).toEqual(original!.body.messages);
    // After the session's instructions block (here only the date: the workspace is empty), the summary.
    expect(copy!.body.messages[0]!.content).toEqual([
      { type: 'text', text: dateBlock() },
      { type: 'text', text: expect.stringContaining('SUMMARY: echo hi printed hi.') },
    ]);
  });

  it('continues a transcript written by Claude Code 2.1.88 itself', async () => {
    const { stack, api } = env;
    const fixture = readFileSync(path.join(import.meta.dirname, '../support/fixtures/claude-2.1.88-bash-session.jsonl'), 'utf8');
    const imported = await fetch(`${stack.apiUrl}/v1/sessions/import`, { method: 'POST', headers: { authorization: `Bearer ${stack.token}` }, body: fixture });
    expect(imported.status).toBe(201);
    const id = ((await imported.json()) as { id: string }).id;
    stack.model!.enqueue(text('Continuing.'));
    expect((await api.turn(id, 'and now?')).json.stopReason).toBe('end_turn');
    expect(stack.model!.requests.at(-1)!.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: dateBlock() },
          { type: 'text', text: 'run echo hi' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_01abc', name: 'Bash', input: { command: 'echo hi', description: 'say hi' } },
        ],
      },
      { role: 'user', content: [{ tool_use_id: 'toolu_01abc', type: 'tool_result', content: 'hi', is_error: false }] },
      { role: 'assistant', content: [{ type: 'text', text: 'It printed hi.' }] },
      { role: 'user', content: [{ type: 'text', text: 'and now?', cache_control: { type: 'ephemeral' } }] },
    ]);
  });

  it('refuses a transcript that is not JSONL, naming the line', async () => {
    const { stack } = env;
    const res = await fetch(`${stack.apiUrl}/v1/sessions/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}` },
      body: '{"type":"user","message":{"role":"user","content":"hi"}}\nnot json\n',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 'invalid_request', message: 'Invalid transcript: line 2 is not JSON' } });
  });
});
