import { cliFetch } from './http.ts';
import { createInterface } from 'node:readline/promises';
import { apiError, ok, type Api } from './client.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { createTurnRenderer } from './render.ts';
import { followEvents, readEvents, type TurnEvent } from './sse.ts';
import { storedCallTimings } from './stored-timing.ts';

export interface TurnOptions {
  json: boolean;
  out: NodeJS.WriteStream;
  /** Ask about each waiting tool call on the terminal (only when stdin is one). */
  interactive: boolean;
}

/** The exit code of a finished turn. */
export function exitFor(end: Extract<TurnEvent, { type: 'turn_end' }> | undefined): number {
  if (!end) return EXIT.failed;
  if (end.stopReason === 'awaiting_permission') return EXIT.awaitingPermission;
  return ['model_error', 'internal_error', 'crashed'].includes(end.stopReason) ? EXIT.failed : EXIT.ok;
}

/**
 * Streams one response that carries a turn (POST …/turns, or the last permission answer),
 * following the event log if the turn moves to another invocation. Returns the turn_end.
 */
export async function streamTurn(client: Api, sessionId: string, res: Response, opts: TurnOptions) {
  const render = createTurnRenderer(opts.out, opts);
  let end: Extract<TurnEvent, { type: 'turn_end' }> | undefined;
  let turnId: string | undefined;
  let continued = false;
  try {
    const onEvent = (event: TurnEvent) => {
      if (event.type === 'turn_start') turnId = event.turnId;
      if (event.type === 'turn_end') end = event;
      if (event.type === 'turn_continued') continued = true;
      else render.event(event);
    };
    const lastId = await readEvents(res, onEvent);
    if (!end && turnId && continued) await followEvents(client, sessionId, turnId, onEvent, lastId);
  } finally {
    render.close();
  }
  return end;
}

/** Runs a prompt in a session and streams it; answers permission requests on a terminal. Returns the exit code. */
export async function runPrompt(client: Api, sessionId: string, prompt: string, opts: TurnOptions): Promise<number> {
  const res = await cliFetch(`${client.url}/v1/sessions/${encodeURIComponent(sessionId)}/turns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${client.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ prompt }),
  });
  let end = await streamTurn(client, sessionId, res, opts);
  while (end?.stopReason === 'awaiting_permission' && opts.interactive) {
    end = await answerPending(client, sessionId, undefined, 'ask', opts);
  }
  return exitFor(end);
}

/** Follows the session's running (or last) turn to its end. */
export async function attach(client: Api, sessionId: string, opts: TurnOptions): Promise<number> {
  const session = ok(await client.api.GET('/v1/sessions/{id}', { params: { path: { id: sessionId } } }));
  const turnId = session.currentTurnId ?? session.lastTurn?.turnId;
  if (!turnId) throw new CliError(`Session ${sessionId} has run no turn yet.`, EXIT.notFound);
  const render = createTurnRenderer(opts.out, { ...opts, timings: opts.json ? undefined : await storedCallTimings(client, sessionId, turnId) });
  let end: Extract<TurnEvent, { type: 'turn_end' }> | undefined;
  try {
    await followEvents(client, sessionId, turnId, (event) => {
      if (event.type === 'turn_end') end = event;
      render.event(event);
    });
  } finally {
    render.close();
  }
  return exitFor(end);
}

/**
 * Answers waiting tool calls: the one named, else each pending one (`ask`: on the terminal,
 * one by one). The answer that completes the set resumes the turn, which is streamed here.
 */
export async function answerPending(
  client: Api,
  sessionId: string,
  toolUseId: string | undefined,
  decision: 'allow' | 'deny' | 'ask',
  opts: TurnOptions & AnswerOptions,
) {
  const state = ok(await client.api.GET('/v1/sessions/{id}/permissions', { params: { path: { id: sessionId } } }));
  const waiting = state.pending.filter((p) => p.kind === 'ask' && p.decision === null && (!toolUseId || p.toolUseId === toolUseId));
  if (waiting.length === 0)
    throw new CliError(
      toolUseId ? `Tool call ${toolUseId} is not waiting in session ${sessionId}.` : `Nothing waits for permission in session ${sessionId}.`,
      EXIT.notFound,
    );
  const rl = decision === 'ask' ? createInterface({ input: process.stdin, output: process.stderr }) : undefined;
  let end: Extract<TurnEvent, { type: 'turn_end' }> | undefined;
  try {
    for (const call of waiting) {
      let answer: 'allow' | 'deny' = decision === 'ask' ? 'deny' : decision;
      if (rl) {
        const reply = (await rl.question(`Allow ${call.toolName} ${JSON.stringify(call.input)}? [y/N] `)).trim().toLowerCase();
        answer = reply === 'y' || reply === 'yes' ? 'allow' : 'deny';
      }
      const res = await cliFetch(`${client.url}/v1/sessions/${encodeURIComponent(sessionId)}/permissions/${encodeURIComponent(call.toolUseId)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${client.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(answerBody(answer, opts)),
      });
      if (res.status === 202) {
        await res.body?.cancel();
        continue;
      }
      if (!res.ok) throw apiError(res.status, await res.json().catch(() => undefined));
      end = await streamTurn(client, sessionId, res, opts);
    }
  } finally {
    rl?.close();
  }
  return end;
}

/** `remember` (approve): keep allowing the call; `message` (deny): what the model is told instead. */
export interface AnswerOptions {
  remember?: boolean;
  message?: string;
}

function answerBody(answer: 'allow' | 'deny', opts: AnswerOptions) {
  if (answer === 'allow') return { decision: answer, ...(opts.remember ? { remember: true } : {}) };
  return { decision: answer, ...(opts.message ? { message: opts.message } : {}) };
}

export async function answerCommand(
  client: Api,
  sessionId: string,
  toolUseId: string | undefined,
  decision: 'allow' | 'deny',
  opts: TurnOptions & AnswerOptions,
): Promise<number> {
  const end = await answerPending(client, sessionId, toolUseId, decision, opts);
  return end ? exitFor(end) : EXIT.awaitingPermission;
}

/**
 * Stops a session's turn (the one named, else the running one) wherever it runs. Prints whether
 * it has ended or is still finishing; the turn's own end is on its events (`stratus attach`).
 */
export async function interruptTurn(client: Api, sessionId: string, turnId: string | undefined, print: (human: string, value: unknown) => void): Promise<void> {
  let id = turnId;
  if (!id) {
    const session = ok(await client.api.GET('/v1/sessions/{id}', { params: { path: { id: sessionId } } }));
    id = session.currentTurnId ?? undefined;
    if (!id) throw new CliError(`No turn is running in session ${sessionId}.`, EXIT.notFound);
  }
  const outcome = ok(await client.api.POST('/v1/sessions/{id}/turns/{turnId}/interrupt', { params: { path: { id: sessionId, turnId: id } } }));
  print(
    outcome.state === 'stopped'
      ? `${id} interrupted`
      : `${id} is stopping (it finishes a tool call that cannot be interrupted); \`stratus attach ${sessionId}\` follows it`,
    outcome,
  );
}
