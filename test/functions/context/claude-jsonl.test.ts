import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClaudeJsonl, toClaudeJsonl, uuidFrom } from '../../../functions/context/claude-jsonl.ts';
import type { StoredMessage } from '../../../functions/stores/message-store.ts';

// Written by @anthropic-ai/claude-code 2.1.88 itself (a `claude -p` run against the scripted model).
const fixture = readFileSync(path.join(import.meta.dirname, '../../support/fixtures/claude-2.1.88-bash-session.jsonl'), 'utf8');

describe('reading a Claude Code transcript', () => {
  it('takes the conversation and joins the per-block assistant entries of one response', () => {
    expect(parseClaudeJsonl(fixture)).toEqual([
      { kind: 'message', role: 'user', content: [{ type: 'text', text: 'run echo hi' }], compactSummary: false },
      {
        kind: 'message',
        role: 'assistant',
        compactSummary: false,
        model: 'claude-sonnet-4-6',
        stopReason: 'tool_use',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_01abc', name: 'Bash', input: { command: 'echo hi', description: 'say hi' } },
        ],
      },
      { kind: 'message', role: 'user', content: [{ tool_use_id: 'toolu_01abc', type: 'tool_result', content: 'hi', is_error: false }], compactSummary: false },
      {
        kind: 'message',
        role: 'assistant',
        compactSummary: false,
        model: 'claude-sonnet-4-6',
        stopReason: 'end_turn',
        content: [{ type: 'text', text: 'It printed hi.' }],
      },
    ]);
  });
});

describe('writing one', () => {
  const base = { sessionId: 'ses_1', turnId: 't', createdAt: '2026-01-01T00:00:00.000Z' };
  const log: StoredMessage[] = [
    { ...base, seq: 0, uuid: 'm0', kind: 'prompt', role: 'user', content: [{ type: 'text', text: 'hi' }] },
    { ...base, seq: 1, uuid: 'm1', kind: 'tombstone', role: 'assistant', content: [{ type: 'text', text: 'cut' }] },
    {
      ...base,
      seq: 2,
      uuid: 'm2',
      kind: 'assistant',
      role: 'assistant',
      content: [{ type: 'text', text: 'hello' }],
      model: 'm',
      stopReason: 'end_turn',
      usage: { inputTokens: 5, outputTokens: 2 },
      decisions: { seen: ['a'], replaced: [{ toolUseId: 'b', replacement: 'R' }] },
    },
  ];
  it('leaves tombstones out and round-trips through the reader', () => {
    const text = toClaudeJsonl('ses_1', log, '/p');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(['user', 'content-replacement', 'assistant']);
    expect(lines[2].parentUuid).toBe(uuidFrom('m0'));
    expect(lines[1]).toEqual({
      type: 'content-replacement',
      sessionId: uuidFrom('ses_1'),
      replacements: [{ kind: 'tool-result', toolUseId: 'b', replacement: 'R' }],
    });
    expect(parseClaudeJsonl(text)).toEqual([
      { kind: 'message', role: 'user', content: [{ type: 'text', text: 'hi' }], compactSummary: false },
      { kind: 'replacements', replaced: [{ toolUseId: 'b', replacement: 'R' }] },
      { kind: 'message', role: 'assistant', content: [{ type: 'text', text: 'hello' }], compactSummary: false, model: 'm', stopReason: 'end_turn' },
    ]);
  });
});
