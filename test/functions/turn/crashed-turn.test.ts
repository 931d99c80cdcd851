import { beforeAll, describe, expect, it } from 'vitest';
import { endTurnIfDead, reapDeadLease } from '../../../functions/turn/crashed-turn.ts';
import { TurnFeed } from '../../../functions/agent/turn-feed.ts';
import { turnLease, handOffLease } from '../../../functions/agent/turn-lease.ts';
import { configSchema } from '../../../functions/deps/config.ts';
import { createLogger } from '../../../functions/shared/logger.ts';
import { SessionBusyError } from '../../../functions/shared/errors.ts';
import { EventStore, type StoredTurnEvent } from '../../../functions/stores/event-store.ts';
import { SessionStore, type SessionRecord } from '../../../functions/stores/session-store.ts';
import { useDynamoTables } from '../../support/dynamo-fixture.ts';

const T0 = 1_800_000_000_000;

/**
 * Finding and ending dead turns, against the DynamoDB protocol server: who may free a session,
 * and that a dead turn's log gets exactly one `crashed` turn_end however many readers notice.
 */
describe('dead turns: heartbeat liveness and the crashed turn_end', () => {
  const fx = useDynamoTables();
  const TABLES = fx.tables;
  let now = T0;
  const deps = {} as {
    sessions: SessionStore;
    events: EventStore;
    clock: () => number;
    log: ReturnType<typeof createLogger>;
    config: ReturnType<typeof configSchema.parse>;
    instanceId: string;
  };

  beforeAll(() => {
    Object.assign(deps, {
      sessions: new SessionStore(fx.db, TABLES.sessions),
      events: new EventStore(fx.db, TABLES.events),
      clock: () => now,
      log: createLogger({ level: 'error' }),
      // One-second beats, three to a dead turn; a minute's lease.
      config: configSchema.parse({
        tables: TABLES,
        bucket: 'b',
        runnerFunction: 'r',
        selfFunction: 's',
        model: { apiKey: 'unused' },
        apiTokens: {},
        turn: { leaseMs: 60_000, heartbeatMs: 1_000 },
      }),
      instanceId: 'inst_test',
    });
  });

  let n = 0;
  /** A session whose turn `turnId` holds the lease since T0 and stored `events` events (turn_start first). */
  async function runningTurn(events: number, lease = (turnId: string) => turnLease(deps, turnId, T0, T0)) {
    const sessionId = `ses_${++n}`;
    const turnId = `turn_${n}`;
    const record: SessionRecord = {
      sessionId,
      tenantId: 't',
      createdAt: 'x',
      updatedAt: 'x',
      status: 'idle',
      messageCount: 0,
      workspace: { id: 'ws', version: 0 },
      cwd: '/workspace',
      usage: { inputTokens: 0, outputTokens: 0 },
      turnCount: 4,
    };
    await deps.sessions.create(record);
    await deps.sessions.acquireLease(sessionId, lease(turnId), T0);
    for (let seq = 0; seq < events; seq++) {
      await deps.events.append(sessionId, [
        {
          turnId,
          seq,
          event:
            seq === 0
              ? { type: 'turn_start', sessionId, turnId }
              : { type: 'assistant_message', seq, content: [], stopReason: 'tool_use', usage: { inputTokens: 10 * seq, outputTokens: seq } },
        },
      ]);
    }
    return { sessionId, turnId };
  }
  const log = (sessionId: string, turnId: string) => deps.events.listAfter(sessionId, turnId, -1);

  it('leaves a turn alone while it beats, and ends it exactly once when the beats stop', async () => {
    const { sessionId, turnId } = await runningTurn(3);
    // 2.5 s after the last beat: two beats missed, not three.
    now = T0 + 2_500;
    expect(await endTurnIfDead(deps, sessionId, turnId)).toBe(false);
    await expect(deps.sessions.acquireLease(sessionId, turnLease(deps, 'turn_other', now, now), now)).rejects.toBeInstanceOf(SessionBusyError);
    expect((await log(sessionId, turnId)).map((e) => e.seq)).toEqual([0, 1, 2]);

    // 3.5 s: dead, though the lease would run for another 56 s. Three readers notice at once.
    now = T0 + 3_500;
    const results = await Promise.all([
      endTurnIfDead(deps, sessionId, turnId),
      endTurnIfDead(deps, sessionId, turnId),
      reapDeadLease(deps, (await deps.sessions.get(sessionId))!),
    ]);
    expect(results.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    const events = await log(sessionId, turnId);
    expect(events.map((e) => [e.seq, e.event.type])).toEqual([
      [0, 'turn_start'],
      [1, 'assistant_message'],
      [2, 'assistant_message'],
      [3, 'turn_end'],
    ]);
    expect(events[3]!.event).toMatchObject({ type: 'turn_end', turnId, stopReason: 'crashed', usage: { inputTokens: 20, outputTokens: 2 } });
    expect((events[3]!.event as { error: string }).error).toContain(`no heartbeat since ${new Date(T0).toISOString()}`);
    const session = (await deps.sessions.get(sessionId))!;
    expect(session.lease).toBeUndefined();
    expect(session).toMatchObject({ status: 'idle', turnCount: 5, lastTurn: { turnId, stopReason: 'crashed', startedAt: new Date(T0).toISOString() } });
    // Asking again changes nothing.
    expect(await endTurnIfDead(deps, sessionId, turnId)).toBe(true);
    expect(await log(sessionId, turnId)).toHaveLength(4);
  });

  it('lets a holder that beats again keep its session', async () => {
    const { sessionId, turnId } = await runningTurn(1);
    now = T0 + 3_500;
    const seenDead = (await deps.sessions.get(sessionId))!;
    // The holder was only slow: its beat lands between a reader's look and its take-over.
    await deps.sessions.heartbeat(sessionId, `inst_test/${turnId}`, { at: now, staleAt: now + 3_000, expiresAt: now + 60_000 });
    expect(await reapDeadLease(deps, seenDead)).toBe(false);
    expect((await deps.sessions.get(sessionId))!.lease).toMatchObject({ turnId, heartbeatAt: now });
    expect(await log(sessionId, turnId)).toHaveLength(1);
  });

  it('treats a hand-off to a continuation as alive until the lease expires', async () => {
    const { sessionId, turnId } = await runningTurn(2, (turnId) => handOffLease(deps, `continuation/${turnId}/1`, turnId, T0, T0));
    now = T0 + 30_000;
    expect(await endTurnIfDead(deps, sessionId, turnId)).toBe(false);
    expect(await log(sessionId, turnId)).toHaveLength(2);
    now = T0 + 60_001;
    expect(await endTurnIfDead(deps, sessionId, turnId)).toBe(true);
    expect((await log(sessionId, turnId)).at(-1)!.event).toMatchObject({ type: 'turn_end', stopReason: 'crashed' });
  });

  it('ends the log of a turn that lost its session to a newer turn, but writes nothing for a turn id nobody used', async () => {
    const { sessionId, turnId } = await runningTurn(2);
    now = T0 + 4_000;
    // A new turn took the dead lease directly (nobody wrote the crashed end on the way).
    await deps.sessions.acquireLease(sessionId, turnLease(deps, 'turn_next', now, now), now);
    expect(await endTurnIfDead(deps, sessionId, turnId)).toBe(true);
    expect((await log(sessionId, turnId)).map((e) => e.event.type)).toEqual(['turn_start', 'assistant_message', 'turn_end']);
    expect((await deps.sessions.get(sessionId))!.lease).toMatchObject({ turnId: 'turn_next' });

    expect(await endTurnIfDead(deps, sessionId, 'turn_made_up')).toBe(false);
    expect(await log(sessionId, 'turn_made_up')).toEqual([]);
  });

  it('stops the feed of a turn that was ended for it, and gives its live readers that end', async () => {
    const { sessionId, turnId } = await runningTurn(0);
    const feed = new TurnFeed(deps.events, sessionId, turnId, deps.log);
    const seen: StoredTurnEvent[] = [];
    const reading = (async () => {
      for await (const e of feed.live.read()) seen.push(e);
    })();
    feed.push({ type: 'turn_start', sessionId, turnId });
    feed.push({ type: 'model_retry', attempt: 1, delayMs: 5, error: 'overloaded' });
    await feed.close().catch(() => undefined);
    // The holder stalled past its beats; a reader ended its log at the next number.
    now = T0 + 10_000;
    expect(await endTurnIfDead(deps, sessionId, turnId)).toBe(true);
    const zombie = new TurnFeed(deps.events, sessionId, turnId, deps.log, 2);
    const zombieSeen: StoredTurnEvent[] = [];
    const zombieReading = (async () => {
      for await (const e of zombie.live.read()) zombieSeen.push(e);
    })();
    zombie.push({ type: 'tool_use', id: 'toolu_late', name: 'Bash', input: {} });
    zombie.push({ type: 'tool_use', id: 'toolu_later', name: 'Bash', input: {} });
    await zombie.close();
    await Promise.all([reading, zombieReading]);
    expect(seen.map((e) => e.seq)).toEqual([0, 1]);
    expect(zombieSeen.map((e) => [e.seq, e.event.type, (e.event as { stopReason?: string }).stopReason])).toEqual([[2, 'turn_end', 'crashed']]);
    expect((await log(sessionId, turnId)).map((e) => e.event.type)).toEqual(['turn_start', 'model_retry', 'turn_end']);
  });
});
