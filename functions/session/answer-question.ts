import type { Deps } from '../deps/deps.ts';
import { NotFoundError } from '../shared/errors.ts';
import { QuestionAlreadyAnsweredError, waitsForPerson, type PendingApproval } from '../stores/approval-store.ts';
import type { AskedQuestion } from '../stores/turn-event.ts';
import { toolAnswers, type QuestionAnswerInput } from './question-answers.ts';

type QuestionDeps = Pick<Deps, 'approvals' | 'clock'>;

/** The waiting question of that id: 404 when there is none, 409 when it was closed already. */
async function waitingQuestion(deps: QuestionDeps, sessionId: string, toolUseId: string): Promise<PendingApproval> {
  const item = await deps.approvals.get(sessionId, toolUseId);
  if (item?.kind === 'answered' || (item?.kind === 'question' && item.decision !== undefined)) throw new QuestionAlreadyAnsweredError(toolUseId);
  if (item?.kind !== 'question') throw new NotFoundError(`No question ${toolUseId} waits for an answer in session ${sessionId}.`);
  return item;
}

/** The call's input without what only a person may fill in (the model may have written its own). */
function withoutAnswers(input: unknown): Record<string, unknown> {
  const { answers: _answers, annotations: _annotations, ...rest } = input as Record<string, unknown>;
  return rest;
}

/** The questions a waiting AskUserQuestion call asked. */
export function questionsOf(item: Pick<PendingApproval, 'input'>): AskedQuestion[] {
  return (item.input as { questions: AskedQuestion[] }).questions;
}

/**
 * Records a person's answer to a waiting question (checked against its options: 400 with what is
 * wrong) with a conditional write, so one answer wins whichever instance gets several. Returns
 * what still waits for a person: when nothing does, the caller resumes the turn.
 */
export async function answerQuestion(deps: QuestionDeps, sessionId: string, toolUseId: string, input: QuestionAnswerInput): Promise<PendingApproval[]> {
  const item = await waitingQuestion(deps, sessionId, toolUseId);
  const { answers, annotations } = toolAnswers(questionsOf(item), input);
  const updatedInput = { ...withoutAnswers(item.input), answers, ...(annotations ? { annotations } : {}) };
  await deps.approvals.closeQuestion(sessionId, toolUseId, { updatedInput, decidedAt: new Date(deps.clock()).toISOString() });
  return (await deps.approvals.listForSession(sessionId)).filter(waitsForPerson);
}

/**
 * Records that a person declined a waiting question (with, optionally, what they told the
 * agent): the call gets the reference's text for a rejected tool use and the turn goes on.
 * One close wins, as for an answer. Returns what still waits for a person.
 */
export async function declineQuestion(deps: QuestionDeps, sessionId: string, toolUseId: string, feedback?: string): Promise<PendingApproval[]> {
  await waitingQuestion(deps, sessionId, toolUseId);
  const decidedAt = new Date(deps.clock()).toISOString();
  await deps.approvals.closeQuestion(sessionId, toolUseId, { decision: 'deny', decidedAt, ...(feedback === undefined ? {} : { feedback }) });
  return (await deps.approvals.listForSession(sessionId)).filter(waitsForPerson);
}

/**
 * Closes the session's questions whose time ran out, without an answer (a concurrent answer may
 * win: then it stands). Returns the ids of the questions this call closed.
 */
export async function expireQuestions(deps: QuestionDeps, sessionId: string): Promise<string[]> {
  const now = deps.clock();
  const waiting = (await deps.approvals.listForSession(sessionId)).filter(waitsForPerson);
  const expired = waiting.filter((p) => p.kind === 'question' && p.expiresAt !== undefined && Date.parse(p.expiresAt) <= now);
  const closed: string[] = [];
  for (const item of expired) {
    // The model's own `answers` never pass for a person's: the call runs with none.
    const updatedInput = { ...withoutAnswers(item.input), answers: {} };
    try {
      await deps.approvals.closeQuestion(sessionId, item.toolUseId, { updatedInput, decidedAt: new Date(now).toISOString(), timedOut: true });
      closed.push(item.toolUseId);
    } catch (err) {
      if (!(err instanceof QuestionAlreadyAnsweredError)) throw err;
    }
  }
  return closed;
}
