import { cliFetch } from './http.ts';
import { apiError, ok, type Api } from './client.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { answerBody, questionLines, type GivenAnswers } from './question-answer.ts';
import { exitFor, streamTurn, type TurnOptions } from './turn-commands.ts';

type Print = (human: string, json: unknown) => void;

async function waitingQuestions(client: Api, sessionId: string) {
  return ok(await client.api.GET('/v1/sessions/{id}/questions', { params: { path: { id: sessionId } } })).questions;
}

/** The call to answer: the one named, else the only one waiting. */
async function questionCall(client: Api, sessionId: string, toolUseId: string | undefined) {
  const waiting = await waitingQuestions(client, sessionId);
  const call = toolUseId ? waiting.find((q) => q.toolUseId === toolUseId) : waiting[0];
  if (!call)
    throw new CliError(
      toolUseId ? `Question ${toolUseId} is not waiting in session ${sessionId}.` : `No question waits in session ${sessionId}.`,
      EXIT.notFound,
    );
  if (!toolUseId && waiting.length > 1)
    throw new CliError(`${waiting.length} questions wait in session ${sessionId} (${waiting.map((q) => q.toolUseId).join(', ')}): name one.`, EXIT.usage);
  return call;
}

/** POSTs an answer or a decline and streams the turn it resumes; 202: other calls still wait. */
async function closeQuestion(client: Api, sessionId: string, toolUseId: string, action: 'answer' | 'decline', body: unknown, opts: TurnOptions) {
  const res = await cliFetch(`${client.url}/v1/sessions/${encodeURIComponent(sessionId)}/questions/${encodeURIComponent(toolUseId)}/${action}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${client.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
  });
  if (res.status === 202) {
    await res.body?.cancel();
    opts.out.write(opts.json ? `${JSON.stringify({ status: 'waiting', toolUseId })}\n` : `${toolUseId} ${action}ed; other calls still wait\n`);
    return EXIT.awaitingAnswer;
  }
  if (!res.ok) throw apiError(res.status, await res.json().catch(() => undefined));
  return exitFor(await streamTurn(client, sessionId, res, opts));
}

/** `stratus answer`: lists the waiting questions, or answers one (by option labels or numbers, or own words) or declines it. */
export async function answerQuestions(
  client: Api,
  sessionId: string,
  toolUseId: string | undefined,
  given: GivenAnswers & { decline?: boolean; message?: string },
  opts: TurnOptions & { print: Print },
): Promise<number> {
  const answering = given.answer.length + given.other.length > 0;
  if (!answering && !given.decline) {
    const waiting = await waitingQuestions(client, sessionId);
    opts.print(waiting.map(questionLines).join('\n') || `(no question waits in session ${sessionId})`, { questions: waiting });
    return waiting.length > 0 ? EXIT.awaitingAnswer : EXIT.ok;
  }
  if (answering && given.decline) throw new CliError('Give answers or --decline, not both.', EXIT.usage);
  const call = await questionCall(client, sessionId, toolUseId);
  if (given.decline) return closeQuestion(client, sessionId, call.toolUseId, 'decline', given.message ? { feedback: given.message } : {}, opts);
  return closeQuestion(client, sessionId, call.toolUseId, 'answer', answerBody(call.questions, given), opts);
}
