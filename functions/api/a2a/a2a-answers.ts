import type { Message } from '@a2a-js/sdk';
import { z } from 'zod';
import { answerQuestion, questionsOf } from '../../session/answer-question.ts';
import { UserError } from '../../shared/errors.ts';
import type { PendingApproval } from '../../stores/approval-store.ts';
import type { RemoteDeps } from '../remote/remote-sessions.ts';
import { messageData, messageText } from './a2a-parts.ts';
import { waitingForPerson } from './a2a-task.ts';

const text = z.string().min(1).max(10_000);

/** What a message answering an input-required task may carry as its data part (docs/api.md, "A2A"). */
const answerData = z.strictObject({
  toolUseId: z.string().min(1).max(256).optional(),
  decision: z.enum(['allow', 'deny']).optional(),
  message: text.optional(),
  answers: z.record(z.string(), z.union([text, z.array(text).max(4)])).optional(),
  other: z.record(z.string(), text).optional(),
  notes: z.record(z.string(), text).optional(),
});
type AnswerData = z.output<typeof answerData>;

const ALLOW_WORDS = new Set(['allow', 'yes', 'approve', 'ok']);
const DENY_WORDS = new Set(['deny', 'no', 'reject']);

/**
 * Answers what the session waits for from the client's next message: a data part
 * (`decision` for permission asks, `answers`/`other` for a question, `toolUseId` to pick one
 * call), or plain text ("allow"/"deny", or the answer to a lone one-part question). Returns
 * true when nothing waits any more (the caller resumes the turn).
 */
export async function answerWaiting(deps: RemoteDeps, sessionId: string, message: Message, waiting: PendingApproval[]): Promise<boolean> {
  const data = answerOf(message, waiting);
  const targets = data.toolUseId === undefined ? waiting : waiting.filter((p) => p.toolUseId === data.toolUseId);
  if (targets.length === 0) throw new UserError(`No call ${data.toolUseId} waits for an answer in task ${sessionId}.`);
  const asks = targets.filter((p) => p.kind === 'ask');
  const questions = targets.filter((p) => p.kind === 'question');
  if (data.decision === undefined && !data.answers && !data.other) throw new UserError(howToAnswer(waiting));
  if (data.decision !== undefined) await decideAsks(deps, sessionId, asks, data);
  if (data.answers || data.other) {
    if (questions.length !== 1) throw new UserError('Name the question to answer with "toolUseId": more than one (or none) waits.');
    await answerQuestion(deps, sessionId, questions[0]!.toolUseId, { answers: data.answers, other: data.other, notes: data.notes });
  }
  return (await waitingForPerson(deps, sessionId)).length === 0;
}

/** The answer the message gives: its data part, else its text read as a decision or a lone question's answer. */
function answerOf(message: Message, waiting: PendingApproval[]): AnswerData {
  const data = messageData(message);
  if (data) {
    const parsed = answerData.safeParse(data);
    if (!parsed.success) throw new UserError(`The answer's data part is not valid: ${parsed.error.issues[0]?.message ?? 'unknown'}. ${howToAnswer(waiting)}`);
    return parsed.data;
  }
  const said = messageText(message);
  const word = said.toLowerCase().replace(/[.!]+$/, '');
  if (ALLOW_WORDS.has(word)) return { decision: 'allow' };
  if (DENY_WORDS.has(word)) return { decision: 'deny' };
  const questions = waiting.filter((p) => p.kind === 'question');
  const asked = questions.length === 1 ? questionsOf(questions[0]!) : [];
  if (asked.length !== 1 || !said) throw new UserError(howToAnswer(waiting));
  const only = asked[0]!;
  const picked = only.options.find((o) => o.label.toLowerCase() === said.toLowerCase());
  return picked ? { answers: { [only.question]: picked.label } } : { other: { [only.question]: said } };
}

async function decideAsks(deps: RemoteDeps, sessionId: string, asks: PendingApproval[], data: AnswerData): Promise<void> {
  if (asks.length === 0) throw new UserError('No tool call waits for permission: answer the question instead.');
  const decidedAt = new Date(deps.clock()).toISOString();
  for (const p of asks) {
    const feedback = data.decision === 'deny' && data.message ? { feedback: data.message } : {};
    await deps.approvals.decide(sessionId, p.toolUseId, { decision: data.decision!, remember: false, decidedAt, ...feedback });
  }
}

function howToAnswer(waiting: PendingApproval[]): string {
  const ids = waiting.map((p) => `${p.toolUseId} (${p.kind === 'question' ? 'a question' : `${p.toolName} waits for permission`})`).join(', ');
  return `The task waits for an answer to: ${ids}. Reply "allow" or "deny", or send a data part {"decision": "allow" | "deny"} or {"answers": {question: label}}, with "toolUseId" to pick one call.`;
}
