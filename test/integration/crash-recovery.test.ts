import { afterEach, describe, expect, it } from 'vitest';
import { apiClient, readLive, type LiveEvent } from '../support/api-client.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { MISSING_RESULT_TEXT } from '../../functions/context/transcript.ts';
import { withoutCacheControl } from '../support/request-bodies.ts';
import { useLocalStack } from '../support/stack-fixture.ts';
import { turnLease } from '../../functions/agent/turn-lease.ts';

describe('a process killed mid-turn', () => {
  const tmp = makeTempDir();
  let running: StackProcess | undefined;
  afterEach(async () => {
    await running?.stop();
    tmp.cleanup();
  });

  // The default one-minute lease: the session must come free through missed heartbeats, not expiry.
  const env = { STRATUS_HEARTBEAT_MS: '1000' };

  it('keeps everything stored, ends the dead turn for its followers within seconds, and frees the session', { timeout: 120_000 }, async () => {
    running = await startStackProcess(tmp.dir, env);
    let api = apiClient(running.apiUrl, running.token);
    const sessionId = await api.createSession({ 'a.txt': 'alpha\n' });
    await running.script([
      {
        content: [
          { type: 'text', text: 'Working.' },
          { type: 'tool_use', id: 'toolu_slow', name: 'Bash', input: { command: 'echo started > started.txt; sleep 30' } },
        ],
      },
    ]);

    // Start the turn and read its live events until the tool runs.
    const res = await fetch(`${running.apiUrl}/v1/sessions/${sessionId}/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ prompt: 'do the slow thing' }),
    });
    const live = await readLive(res, (events) => events.some((e) => e.event.type === 'tool_use'));
    const turnId = live[0]!.event.turnId as string;
    expect(live[0]!.event.type).toBe('turn_start');

    // While it runs, another prompt is refused with how long to wait: at most the few missed beats
    // that would make the turn dead (3 s here), not the lease's minute.
    const busy = await api.turn(sessionId, 'me too');
    expect(busy.status).toBe(409);
    expect(busy.json.error.code).toBe('session_busy');
    expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(busy.headers.get('retry-after'))).toBeLessThanOrEqual(3);

    await running.kill();

    // A new process on the same data folder: everything written before the kill is there.
    running = await startStackProcess(tmp.dir, env);
    const restartedAt = Date.now();
    api = apiClient(running.apiUrl, running.token);
    const before = await api.messages(sessionId);
    expect(before.map((m) => m.kind)).toEqual(['prompt', 'assistant']);
    expect(before[1].content[1]).toMatchObject({ type: 'tool_use', id: 'toolu_slow' });

    // Nobody posts a new turn: an SSE follower and a JSON poller of the dead turn both get its end.
    const eventsPath = `/v1/sessions/${sessionId}/turns/${turnId}/events`;
    const follow = async () => {
      const r = await fetch(`${running!.apiUrl}${eventsPath}`, {
        headers: { authorization: `Bearer ${running!.token}`, accept: 'text/event-stream' },
        signal: AbortSignal.timeout(30_000),
      });
      const events = await readLive(r, () => false);
      return { events, tookMs: Date.now() - restartedAt };
    };
    const poll = async () => {
      const events: LiveEvent[] = [];
      let after = -1;
      for (;;) {
        const page = await api.request('GET', `${eventsPath}?after=${after}`);
        events.push(...page.json.events);
        after = page.json.next;
        if (page.json.done) return { events, tookMs: Date.now() - restartedAt };
        if (Date.now() - restartedAt > 30_000) throw new Error('the poller never saw the turn end');
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const [followed, polled] = await Promise.all([follow(), poll()]);
    const stored = (await api.request('GET', eventsPath)).json.events as LiveEvent[];
    // Exactly one end, the log's last event, after everything the dead process stored.
    expect(stored.filter((e) => e.event.type === 'turn_end')).toHaveLength(1);
    expect(stored.at(-1)!.event).toMatchObject({ type: 'turn_end', turnId, stopReason: 'crashed' });
    expect(followed.events).toEqual(stored);
    expect(polled.events).toEqual(stored);
    // Within seconds, where the lease alone would have kept them waiting a minute.
    expect(followed.tookMs).toBeLessThan(20_000);
    expect(polled.tookMs).toBeLessThan(20_000);
    // Whatever the client saw live is in the log, in the same place.
    expect(stored.slice(0, live.length)).toEqual(live);

    const status = await api.request('GET', `/v1/sessions/${sessionId}`);
    expect(status.json).toMatchObject({ status: 'idle', currentTurnId: null, turnCount: 1, lastTurn: { turnId, stopReason: 'crashed' } });

    // The next turn runs at once, and the transcript is valid again.
    await running.script([{ content: [{ type: 'text', text: 'Recovered.' }] }]);
    const next = await api.turn(sessionId, 'carry on');
    expect(next.status).toBe(200);
    expect(next.json.error).toBeNull();
    expect(next.json.stopReason).toBe('end_turn');

    const after = await api.messages(sessionId);
    expect(after.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'synthetic', 'prompt', 'assistant']);
    expect(after[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_slow', content: MISSING_RESULT_TEXT, is_error: true }]);
    const models = await running.modelRequests<{ messages: { role: string; content: unknown[] }[] }>();
    const sent = models.at(-1)!.messages;
    expect(sent.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_slow', is_error: true });
    // (the newest block carries the moving prompt-cache breakpoint)
    expect(withoutCacheControl(sent[2]!.content[1])).toEqual({ type: 'text', text: 'carry on' });
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json).toMatchObject({ status: 'idle', turnCount: 2, lastTurn: { stopReason: 'end_turn' } });
  });
});

describe('what a killed process leaves behind, staged in the stores', () => {
  const fx = useLocalStack({});

  it('a new prompt frees the session of a turn whose heartbeats stopped, and ends that turn', async () => {
    const { stack, api } = fx;
    const sessionId = await api.createSession();
    // A turn that started 10 s ago and beat once: three 2-second beats missed, the minute's lease still running.
    const then = Date.now() - 10_000;
    const deadTurn = stack.deps.newId('turn');
    await stack.deps.sessions.acquireLease(sessionId, turnLease(stack.deps, deadTurn, then, then), then);
    await stack.deps.events.append(sessionId, [{ turnId: deadTurn, seq: 0, event: { type: 'turn_start', sessionId, turnId: deadTurn } }]);

    stack.model!.enqueue({ content: [{ type: 'text', text: 'fine' }] });
    const res = await api.turn(sessionId, 'next');
    expect(res.json).toMatchObject({ stopReason: 'end_turn', error: null });
    const dead = (await api.request('GET', `/v1/sessions/${sessionId}/turns/${deadTurn}/events`)).json;
    expect(dead.events.map((e: { id: number; event: { type: string; stopReason?: string } }) => [e.id, e.event.type, e.event.stopReason])).toEqual([
      [0, 'turn_start', undefined],
      [1, 'turn_end', 'crashed'],
    ]);
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json).toMatchObject({ status: 'idle', turnCount: 2, lastTurn: { stopReason: 'end_turn' } });
  });

  it('answers a prompt for a session whose turn still beats with 409 and Retry-After', async () => {
    const { stack, api } = fx;
    const sessionId = await api.createSession();
    const now = Date.now();
    await stack.deps.sessions.acquireLease(sessionId, turnLease(stack.deps, 'turn_alive', now, now), now);
    const res = await api.turn(sessionId, 'next');
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('session_busy');
    // Until the turn would count as dead if it stopped beating now: at most three 2-second beats.
    const wait = Number(res.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(5);
    expect(wait).toBeLessThanOrEqual(6);
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json).toMatchObject({ status: 'running', currentTurnId: 'turn_alive' });
  });

  it('a crash between appending a message and moving the session counter does not make the next turn overwrite it', async () => {
    const { stack, api } = fx;
    const sessionId = await api.createSession();
    // What a process killed right after the append leaves behind: seq 0 exists, the counter says 0.
    await stack.deps.messages.append({
      sessionId,
      seq: 0,
      uuid: 'msg_orphan',
      turnId: 'turn_dead',
      kind: 'prompt',
      role: 'user',
      content: [{ type: 'text', text: 'written just before the crash' }],
      createdAt: new Date().toISOString(),
    });
    stack.model!.enqueue({ content: [{ type: 'text', text: 'fine' }] });
    const res = await api.turn(sessionId, 'next');
    expect(res.json).toMatchObject({ stopReason: 'end_turn', error: null });
    const messages = await api.messages(sessionId);
    expect(messages.map((m) => [m.seq, m.content[0].text])).toEqual([
      [0, 'written just before the crash'],
      [1, 'next'],
      [2, 'fine'],
    ]);
  });
  it('a crash that leaves the counter several items behind (head writes trail the appends) loses nothing', async () => {
    const { stack, api } = fx;
    const sessionId = await api.createSession();
    // Appends do not wait for the head: a process killed after two appends can leave both past the counter.
    for (const [seq, text] of [
      [0, 'first before the crash'],
      [1, 'second before the crash'],
    ] as const) {
      await stack.deps.messages.append({
        sessionId,
        seq,
        uuid: `msg_orphan${seq}`,
        turnId: 'turn_dead',
        kind: 'prompt',
        role: 'user',
        content: [{ type: 'text', text }],
        createdAt: new Date().toISOString(),
      });
    }
    stack.model!.enqueue({ content: [{ type: 'text', text: 'fine' }] });
    const res = await api.turn(sessionId, 'next');
    expect(res.json).toMatchObject({ stopReason: 'end_turn', error: null });
    expect((await api.messages(sessionId)).map((m) => [m.seq, m.content[0].text])).toEqual([
      [0, 'first before the crash'],
      [1, 'second before the crash'],
      [2, 'next'],
      [3, 'fine'],
    ]);
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json).toMatchObject({ messageCount: 4, status: 'idle' });
  });

  it('a lease lost while a head update is on its way fails the turn, keeps every stored message, and the next holder goes on from the log', {
    timeout: 60_000,
  }, async () => {
    const { stack, api } = fx;
    const sessionId = await api.createSession({ 'a.txt': 'alpha\n' });
    const requestsBefore = stack.model!.requests.length;
    stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: '/workspace/a.txt' } }] });
    // The second response is slow: the lease changes hands while the model answers.
    stack.model!.enqueue({ content: [{ type: 'text', text: 'read it' }], delayMs: 300 });
    const turn = api.turn(sessionId, 'read a.txt');
    while (stack.model!.requests.length < requestsBefore + 2) await new Promise((r) => setTimeout(r, 20));
    // The tool result's head update trails its append: take the lease once it has landed.
    while ((await stack.deps.sessions.get(sessionId))!.messageCount < 3) await new Promise((r) => setTimeout(r, 20));
    const held = (await stack.deps.sessions.get(sessionId))!.lease!;
    const now = Date.now();
    const other = turnLease(stack.deps, stack.deps.newId('turn'), now, now);
    await stack.deps.sessions.takeOverLease(sessionId, held.owner, other, now);

    const res = await turn;
    expect(res.json.stopReason).toBe('internal_error');
    // Everything the model was sent or said is in the log, the last response included.
    const messages = await api.messages(sessionId);
    expect(messages.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'assistant']);
    expect(messages[3].content[0]).toEqual({ type: 'text', text: 'read it' });
    // The turn wrote nothing under the new holder's lease: its head stayed where the lease was lost.
    const session = (await stack.deps.sessions.get(sessionId))!;
    expect(session.lease!.owner).toBe(other.owner);
    expect(session.messageCount).toBe(3);

    // The new holder gives the session back; the next turn continues from the log, not the counter.
    await stack.deps.sessions.releaseLease(sessionId, other.owner, { status: 'idle' });
    stack.model!.enqueue({ content: [{ type: 'text', text: 'carrying on' }] });
    const next = await api.turn(sessionId, 'go on');
    expect(next.json).toMatchObject({ stopReason: 'end_turn', error: null });
    expect((await api.messages(sessionId)).map((m) => [m.seq, m.kind])).toEqual([
      [0, 'prompt'],
      [1, 'assistant'],
      [2, 'tool_result'],
      [3, 'assistant'],
      [4, 'prompt'],
      [5, 'assistant'],
    ]);
  });
});
