import { UserError } from '../shared/errors.ts';
import type { AskedQuestion } from '../stores/turn-event.ts';

/** What a person sends for a waiting question: options by label, or their own words ("other"), per question text. */
export interface QuestionAnswerInput {
  /** Question text → the label picked (multiSelect: the labels). */
  answers?: Record<string, string | string[]>;
  /** Question text → an answer in the person's own words (the reference's "Other"). */
  other?: Record<string, string>;
  /** Question text → a note to go with the answer. */
  notes?: Record<string, string>;
}

/** The answers in the shape the tool reports them: question text → answer (multiSelect: joined with ", "), plus notes. */
export interface ToolAnswers {
  answers: Record<string, string>;
  annotations?: Record<string, { preview?: string; notes?: string }>;
}

const quoted = (texts: readonly string[]) => texts.map((t) => JSON.stringify(t)).join(', ');

/** Checks an answer against the questions asked (400 with what is wrong) and turns it into the tool's answers. */
export function toolAnswers(questions: readonly AskedQuestion[], input: QuestionAnswerInput): ToolAnswers {
  const asked = questions.map((q) => q.question);
  for (const field of ['answers', 'other', 'notes'] as const) {
    for (const key of Object.keys(input[field] ?? {})) {
      if (!asked.includes(key)) throw new UserError(`"${field}" names ${JSON.stringify(key)}, which is not a question asked (${quoted(asked)}).`);
    }
  }
  const unanswered = asked.filter((text) => input.answers?.[text] === undefined && input.other?.[text] === undefined);
  if (unanswered.length > 0) {
    throw new UserError(
      `${asked.length} question${asked.length === 1 ? ' was' : 's were'} asked and ${asked.length - unanswered.length} answered: ` +
        `no answer for ${quoted(unanswered)} (give an option's label in "answers", or your own words in "other").`,
    );
  }
  const answers: Record<string, string> = {};
  const annotations: NonNullable<ToolAnswers['annotations']> = {};
  for (const q of questions) {
    const picked = labelsOf(input.answers?.[q.question]);
    const own = input.other?.[q.question];
    answers[q.question] = answerText(q, picked, own);
    const preview = !q.multiSelect ? q.options.find((o) => o.label === picked[0])?.preview : undefined;
    const notes = input.notes?.[q.question];
    if (preview !== undefined || notes !== undefined)
      annotations[q.question] = { ...(preview !== undefined ? { preview } : {}), ...(notes !== undefined ? { notes } : {}) };
  }
  return { answers, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) };
}

function labelsOf(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

/** One question's answer: its labels checked against its options and counted, then as the reference joins them. */
function answerText(q: AskedQuestion, picked: string[], own: string | undefined): string {
  const labels = q.options.map((o) => o.label);
  const unknown = picked.filter((label) => !labels.includes(label));
  if (unknown.length > 0) {
    throw new UserError(
      `${quoted(unknown)} ${unknown.length === 1 ? 'is not an option' : 'are not options'} of ${JSON.stringify(q.question)} (its options: ${quoted(labels)}).`,
    );
  }
  if (new Set(picked).size !== picked.length) throw new UserError(`${JSON.stringify(q.question)} was given the same option twice.`);
  const given = picked.length + (own === undefined ? 0 : 1);
  if (!q.multiSelect && given !== 1) {
    throw new UserError(`${JSON.stringify(q.question)} takes one answer (an option's label, or your own words in "other"); ${given} were given.`);
  }
  if (given === 0) throw new UserError(`${JSON.stringify(q.question)} needs at least one option, or your own words in "other".`);
  return [...picked, ...(own === undefined ? [] : [own])].join(', ');
}
