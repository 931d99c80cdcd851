import { describe, expect, it } from 'vitest';
import { contextFromLog } from '../../../functions/context/session-context.ts';
import type { StoredMessage } from '../../../functions/stores/message-store.ts';

const base = { sessionId: 's', turnId: 't', createdAt: '2026-01-01T00:00:00.000Z' };
const msg = (seq: number, kind: StoredMessage['kind'], extra: Partial<StoredMessage> = {}): StoredMessage => ({
  ...base,
  seq,
  uuid: `m${seq}`,
  kind,
  role: kind === 'assistant' || kind === 'tombstone' ? 'assistant' : 'user',
  content: [{ type: 'text', text: `#${seq}` }],
  ...extra,
});
const boundary = (seq: number, compactionId: string, startSeq: number) =>
  msg(seq, 'compact_boundary', {
    content: [],
    compactionId,
    compact: { trigger: 'auto', preTokens: 1, messagesSummarized: 2, startSeq, previousStartSeq: null },
  });
const seqs = (log: StoredMessage[]) => contextFromLog(log).conversation.map((m) => m.seq);

describe('what a reload continues from', () => {
  const before = [msg(0, 'prompt'), msg(1, 'assistant'), msg(2, 'tombstone'), msg(3, 'prompt'), msg(4, 'assistant')];

  it('leaves tombstones out of the conversation', () => {
    expect(seqs(before)).toEqual([0, 1, 3, 4]);
  });

  it('skips a compaction that crashed before its boundary was written', () => {
    const log = [...before, msg(5, 'compact_summary', { compactionId: 'c1' }), msg(6, 'prompt', { compactionId: 'c1' }), msg(7, 'prompt')];
    expect(seqs(log)).toEqual([0, 1, 3, 4, 7]);
  });

  it("restarts at a compaction that completed after the session's pointer last moved", () => {
    const log = [
      ...before,
      msg(5, 'compact_summary', { compactionId: 'c1' }),
      msg(6, 'assistant', { compactionId: 'c1' }),
      boundary(7, 'c1', 5),
      msg(8, 'prompt'),
    ];
    expect(seqs(log)).toEqual([5, 6, 8]);
  });

  it('folds decisions only from items that count', () => {
    const decided = (id: string) => ({ decisions: { seen: [], replaced: [{ toolUseId: id, replacement: 'R' }] } });
    const log = [msg(0, 'assistant', decided('a')), msg(1, 'compact_summary', { compactionId: 'lost', ...decided('b') })];
    expect([...contextFromLog(log).replacementState.replacements.keys()]).toEqual(['a']);
  });
});
