import { describe, expect, it } from 'vitest';
import { createLogWriter } from '../../../functions/agent/turn-recorder.ts';
import { turnLease } from '../../../functions/agent/turn-lease.ts';
import { useLocalStack } from '../../support/stack-fixture.ts';

/**
 * The write-ahead append with the session's head written behind it (docs/turns.md, "The write
 * order"), against the local stack's DynamoDB: every item is in the log when its append returns,
 * head updates land in order, and a lease lost under a queued head update fails what follows.
 */
describe('the write-ahead append with the head off the critical path', () => {
  const fx = useLocalStack({});

  async function leasedSession() {
    const { stack, api } = fx;
    const sessionId = await api.createSession();
    const turnId = stack.deps.newId('turn');
    const now = Date.now();
    const session = await stack.deps.sessions.acquireLease(sessionId, turnLease(stack.deps, turnId, now, now), now);
    const owner = session.lease!.owner;
    const writer = createLogWriter(stack.deps, { sessionId, owner, turnId, firstSeq: session.messageCount, lease: session.lease, leaseMarginMs: 2_000 });
    const text = (t: string) => [{ type: 'text' as const, text: t }];
    return { stack, sessionId, turnId, owner, writer, text };
  }

  it('stores each item before its append returns and moves the head in order to the last one', async () => {
    const { stack, sessionId, writer, text } = await leasedSession();
    for (let i = 0; i < 12; i++) {
      const stored = await writer.append('prompt', 'user', text(`m${i}`));
      // Durable at once: the model may be sent this item next.
      expect((await stack.deps.messages.loadFrom(sessionId, stored.seq)).map((m) => m.seq)).toEqual([stored.seq]);
    }
    await writer.head.flush();
    expect((await stack.deps.sessions.get(sessionId))!.messageCount).toBe(12);
    expect((await stack.deps.messages.loadFrom(sessionId)).map((m) => m.content[0])).toEqual(
      Array.from({ length: 12 }, (_, i) => ({ type: 'text', text: `m${i}` })),
    );
  });

  it('lands head updates queued back to back with the latest value of every field', async () => {
    const { stack, sessionId, writer } = await leasedSession();
    // Updates not started yet merge into one write: the result must be what the last of each field said.
    writer.head.update({ cwd: '/workspace/a', messageCount: 1 });
    writer.head.update({ denials: { Bash: 1 }, messageCount: 2 });
    writer.head.update({ cwd: '/workspace/c' });
    // A field given as undefined is not written, merged or not (saveSettings(undefined) keeps what was there).
    writer.head.update({ cwd: undefined });
    writer.head.update({ denials: { Bash: 2 }, messageCount: 3 });
    await writer.head.flush();
    expect((await stack.deps.sessions.get(sessionId))!).toMatchObject({ cwd: '/workspace/c', denials: { Bash: 2 }, messageCount: 3 });
  });

  it('fails the next append and the flush once the lease is lost under a queued head update, keeping every stored item', async () => {
    const { stack, sessionId, owner, writer, text } = await leasedSession();
    await writer.append('prompt', 'user', text('before'));
    await writer.head.flush();
    // Another holder takes the session (as after a takeover): the head updates queued from now on are refused.
    const now = Date.now();
    await stack.deps.sessions.takeOverLease(sessionId, owner, turnLease(stack.deps, stack.deps.newId('turn'), now, now), now);
    const during = await writer.append('assistant', 'assistant', text('while the lease went'));
    expect(during.seq).toBe(1);
    await expect(writer.head.flush()).rejects.toThrow();
    await expect(writer.append('tool_result', 'user', text('after'))).rejects.toThrow();
    // A tool with effects would not start either.
    await expect(writer.head.leaseHeld()).rejects.toThrow();
    // The log keeps what was stored; the head stays where the last accepted update left it, and
    // the next turn's reload goes by the log (skipTo), not by the head.
    expect((await stack.deps.messages.loadFrom(sessionId)).map((m) => m.seq)).toEqual([0, 1]);
    expect((await stack.deps.sessions.get(sessionId))!.messageCount).toBe(1);
    await writer.head.settled();
  });

  it('lets work with effects start at once while the lease is surely held, and waits for the head when it may lapse', async () => {
    const { stack, sessionId, owner, writer, text } = await leasedSession();
    await writer.append('prompt', 'user', text('one'));
    // The lease as acquired is alive for three beats (6 s with the default 2 s beat): well past the 2 s margin.
    expect(writer.head.leaseHeld()).toBeUndefined();
    await writer.head.flush();
    expect(writer.head.leaseHeld()).toBeUndefined();

    // A writer that knows of no live lease (nothing confirmed it) waits for its queued head update first.
    const unsure = createLogWriter(stack.deps, { sessionId, owner, turnId: 'turn_unsure', firstSeq: 1, leaseMarginMs: 2_000 });
    await unsure.append('prompt', 'user', text('two'));
    const waited = unsure.head.leaseHeld();
    expect(waited).toBeInstanceOf(Promise);
    await waited;
    expect((await stack.deps.sessions.get(sessionId))!.messageCount).toBe(2);
  });

  it('numbers items appended behind at once, stores them in order, and runs what waits for them after', async () => {
    const { stack, sessionId, writer, text } = await leasedSession();
    const seen: string[] = [];
    const seqs = [0, 1, 2, 3, 4].map((i) => writer.appendBehind('tool_result', 'user', text(`b${i}`)).seq);
    expect(seqs).toEqual([0, 1, 2, 3, 4]);
    expect(writer.nextSeq()).toBe(5);
    // Asked for before the puts land: it must see all five stored (a client never sees what the log may lose).
    writer.afterStored(() => seen.push('after five'));
    await writer.durable();
    expect(seen).toEqual(['after five']);
    expect(writer.storedCount()).toBe(5);
    expect((await stack.deps.messages.loadFrom(sessionId)).map((m) => m.content[0])).toEqual(
      Array.from({ length: 5 }, (_, i) => ({ type: 'text', text: `b${i}` })),
    );
    // With nothing on its way, what waits runs at once.
    writer.afterStored(() => seen.push('idle'));
    expect(seen).toEqual(['after five', 'idle']);
    await writer.flush();
    expect((await stack.deps.sessions.get(sessionId))!.messageCount).toBe(5);
  });

  it('throws a failed put behind the request at the barrier, keeps the prefix, and stops everything after it', async () => {
    const { stack, sessionId, owner, turnId, writer, text } = await leasedSession();
    await writer.append('prompt', 'user', text('stored'));
    // Another writer already holds seq 2 (as a second holder would): the create-only put at 2 is refused.
    const other = createLogWriter(stack.deps, { sessionId, owner, turnId, firstSeq: 2, leaseMarginMs: 2_000 });
    await other.append('assistant', 'assistant', text('taken'));
    const seen: string[] = [];
    writer.appendBehind('assistant', 'assistant', text('one'));
    writer.appendBehind('tool_result', 'user', text('two, refused'));
    writer.appendBehind('assistant', 'assistant', text('three, never put'));
    writer.afterStored(() => seen.push('never'));
    await expect(writer.durable()).rejects.toThrow();
    expect(seen).toEqual([]);
    expect(() => writer.appendBehind('tool_result', 'user', text('later'))).toThrow();
    // The log is a prefix plus the other writer's item: nothing after the refused seq was stored by this writer.
    expect((await stack.deps.messages.loadFrom(sessionId)).map((m) => (m.content[0] as { text: string }).text)).toEqual(['stored', 'one', 'taken']);
    await writer.settled();
    await other.settled();
  });
});
