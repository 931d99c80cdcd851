import type { QuestionAnswerInput } from '../session/question-answers.ts';
import type { AskedQuestion } from '../stores/turn-event.ts';
import { stripHiddenContent } from './untrusted-text.ts';

export const QUESTION_MARK = '<!-- stratus-question -->';

/** How a reply answers, said in the question's comment and again when a reply is unclear. */
const HOW_TO_REPLY =
  "Reply with a comment: an option's number or label, or your own words. For several questions, one line each, like `1: dayjs`; for several options, separate them with commas.";

/** The comment that asks a thread the agent's questions, each with its options numbered. */
export function questionComment(o: { questions: readonly AskedQuestion[]; session: string; expiresAt: string }): string {
  const blocks = o.questions.map((q, i) =>
    [
      `**${o.questions.length > 1 ? `${i + 1}. ` : ''}${q.question}** (${q.header}${q.multiSelect ? '; several may be picked' : ''})`,
      ...q.options.map((opt, j) => `${j + 1}. **${opt.label}** — ${opt.description}`),
    ].join('\n'),
  );
  return [
    QUESTION_MARK,
    `❓ **Stratus** has ${o.questions.length === 1 ? 'a question' : 'questions'} in session ${o.session}:`,
    '',
    blocks.join('\n\n'),
    '',
    `${HOW_TO_REPLY} A reply by someone with write access answers, and the run goes on. Without an answer by ${o.expiresAt}, the agent makes the choice itself.`,
  ].join('\n');
}

/** The reply's own words: hidden parts, quoted lines (a reply quoting the question) and the mention dropped. */
function replyText(body: string, mention: string): string {
  return stripHiddenContent(body)
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('>'))
    .join('\n')
    .replaceAll(new RegExp(mention.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), '')
    .trim();
}

/** An option by its label (ignoring case) or number. */
function optionOf(q: AskedQuestion, part: string): string | undefined {
  const n = /^\d+$/.test(part) ? Number(part) : NaN;
  return q.options.find((o) => o.label.toLowerCase() === part.toLowerCase())?.label ?? q.options[n - 1]?.label;
}

/** One question's answer: its options when every part names one, else the reply's words as the person's own answer. */
function answerOf(q: AskedQuestion, value: string, into: Required<Pick<QuestionAnswerInput, 'answers' | 'other'>>): void {
  const parts = q.multiSelect ? value.split(',').map((p) => p.trim().replace(/\.$/, '')) : [value.trim().replace(/\.$/, '')];
  const labels = parts.map((p) => optionOf(q, p));
  if (labels.every((l): l is string => l !== undefined)) into.answers[q.question] = q.multiSelect ? labels : labels[0]!;
  else into.other[q.question] = value.trim();
}

/**
 * A reply comment as the answer to the questions asked, or what is unclear about it. One question
 * takes the whole reply; several take a line each (`1: dayjs`, `2. Search, Export`).
 */
export function answerFromReply(questions: readonly AskedQuestion[], body: string, mention: string): QuestionAnswerInput | { unclear: string } {
  const text = replyText(body, mention);
  if (!text) return { unclear: `The reply has no answer in it. ${HOW_TO_REPLY}` };
  const into = { answers: {}, other: {} } as Required<Pick<QuestionAnswerInput, 'answers' | 'other'>>;
  if (questions.length === 1) {
    answerOf(questions[0]!, text, into);
    return into;
  }
  const lines = new Map<number, string>();
  for (const line of text.split('\n')) {
    const match = /^\s*(\d+)\s*[.):]\s*(\S[\s\S]*)$/.exec(line);
    if (match) lines.set(Number(match[1]), match[2]!);
  }
  const missing = questions.map((_, i) => i + 1).filter((n) => !lines.has(n));
  if (missing.length > 0) return { unclear: `The reply does not answer question${missing.length === 1 ? '' : 's'} ${missing.join(', ')}. ${HOW_TO_REPLY}` };
  for (const [i, q] of questions.entries()) answerOf(q, lines.get(i + 1)!, into);
  return into;
}
