import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { followTurn, turnEventsUrl } from '../turn/follow-turn.ts';
import type { TurnHandle } from '../turn/turn.ts';
import type { TurnEvent } from '../stores/turn-event.ts';
import type { Deps, DepsOf } from '../deps/deps.ts';
import { errorMessage } from '../shared/errors.ts';
import { startSseHeartbeat } from './sse-heartbeat.ts';

/** What answering with a turn uses: a log, and the event log a continued turn is followed through. */
export type TurnResponseDeps = Pick<Deps, 'log' | 'config'> & DepsOf<typeof followTurn>;

/** A JSON caller following a continued turn stops this long before its own deadline. */
const FOLLOW_MARGIN_MS = 5_000;

/**
 * Answers with a running turn: SSE while it runs when the client accepts `text/event-stream`
 * (event ids are the event log's, for Last-Event-ID), otherwise JSON once it ends — following
 * the event log if the turn continued in another invocation, while this one lasts. Either way
 * the turn runs to its end even if the client leaves.
 */
export async function respondWithTurn(c: Context, deps: TurnResponseDeps, turn: TurnHandle, deadlineAt?: number) {
  // Where this turn's events are: a client (or an idempotent retry) can follow them from there.
  c.header('Content-Location', turnEventsUrl(turn.sessionId, turn.turnId));
  if ((c.req.header('accept') ?? '').includes('text/event-stream')) return streamTurn(c, deps, turn);
  return c.json(...(await turnAsJson(deps, turn, deadlineAt)));
}

/** The turn's live events as SSE; a client that leaves stops getting them, the turn goes on. */
function streamTurn(c: Context, deps: TurnResponseDeps, turn: TurnHandle): Response {
  return streamSSE(c, async (stream) => {
    let clientGone = false;
    stream.onAbort(() => {
      clientGone = true;
    });
    const stopHeartbeat = startSseHeartbeat(stream, deps.config.api.sseHeartbeatMs);
    for await (const { seq, event } of turn.events.live.read()) {
      if (clientGone) continue;
      try {
        await stream.writeSSE({ id: String(seq), event: event.type, data: JSON.stringify(event) });
      } catch (err) {
        clientGone = true;
        deps.log.info('SSE client went away; the turn continues', { turnId: turn.turnId, error: errorMessage(err) });
      }
    }
    stopHeartbeat();
    await turn.done;
  });
}

/** The turn once it ends (200), or as far as it got before this invocation's deadline (202 `checkpoint`). */
async function turnAsJson(deps: TurnResponseDeps, turn: TurnHandle, deadlineAt: number | undefined) {
  const collected: TurnEvent[] = [];
  let lastSeq = -1;
  const collect = (seq: number, event: TurnEvent) => {
    lastSeq = seq;
    if (event.type !== 'text_delta' && event.type !== 'turn_continued') collected.push(event);
  };
  for await (const { seq, event } of turn.events.live.read()) collect(seq, event);
  await turn.done;
  // A turn that moved to another invocation: follow its event log while this one may.
  if (!collected.some((e) => e.type === 'turn_end')) {
    const keepGoing = () => deadlineAt === undefined || deadlineAt - Date.now() > FOLLOW_MARGIN_MS;
    for await (const { seq, event } of followTurn(deps, turn.sessionId, turn.turnId, lastSeq, keepGoing)) collect(seq, event);
  }
  const end = collected.find((e) => e.type === 'turn_end');
  const ended = end?.type === 'turn_end' ? end : undefined;
  const body = {
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    stopReason: ended ? ended.stopReason : 'checkpoint',
    usage: ended ? ended.usage : null,
    error: ended ? (ended.error ?? null) : null,
    eventsUrl: turnEventsUrl(turn.sessionId, turn.turnId),
    events: collected,
  };
  return [body, ended ? 200 : 202] as const;
}
