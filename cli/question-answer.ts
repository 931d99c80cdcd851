import type { components } from './generated/api.d.ts';
import { CliError, EXIT } from './exit-codes.ts';

type AskedQuestion = components['schemas']['PendingQuestion']['questions'][number];

/** What `stratus answer` was given: each value optionally prefixed `N=` (the question's number, from 1). */
export interface GivenAnswers {
  answer: string[];
  other: string[];
  note: string[];
}

interface Targeted {
  index: number | undefined;
  value: string;
}

function targeted(raw: string, count: number): Targeted {
  const match = /^(\d+)=([\s\S]*)$/.exec(raw);
  if (!match) return { index: undefined, value: raw };
  const n = Number(match[1]);
  if (n < 1 || n > count) throw new CliError(`"${raw}" names question ${n}; there ${count === 1 ? 'is 1 question' : `are ${count} questions`}.`, EXIT.usage);
  return { index: n - 1, value: match[2]! };
}

/** An option by its label (exactly, else ignoring case) or by its number; anything else is left for the API to refuse with the options. */
function optionLabel(q: AskedQuestion, value: string): string {
  const exact = q.options.find((o) => o.label === value);
  if (exact) return exact.label;
  const loose = q.options.find((o) => o.label.toLowerCase() === value.toLowerCase());
  if (loose) return loose.label;
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  return q.options[n - 1]?.label ?? value;
}

/**
 * The body of POST …/answer from the command line. Without a number, the n-th `--answer` goes
 * to the n-th question, and each `--other` (own words) or `--note` to the next question without one.
 */
export function answerBody(questions: readonly AskedQuestion[], given: GivenAnswers) {
  const answers: Record<string, string[]> = {};
  const other: Record<string, string> = {};
  const notes: Record<string, string> = {};
  given.answer.forEach((raw, position) => {
    const { index = position, value } = targeted(raw, questions.length);
    const q = questions[index];
    if (!q)
      throw new CliError(
        `${given.answer.length} answers were given for ${questions.length} questions; number them (N=label) to pick options of one.`,
        EXIT.usage,
      );
    (answers[q.question] ??= []).push(optionLabel(q, value));
  });
  const nextWithout = (taken: Record<string, unknown>) => questions.findIndex((q) => answers[q.question] === undefined && taken[q.question] === undefined);
  for (const raw of given.other) {
    const { index = nextWithout(other), value } = targeted(raw, questions.length);
    if (index < 0) throw new CliError(`"${raw}" has no question left to answer; number it (N=text).`, EXIT.usage);
    other[questions[index]!.question] = value;
  }
  for (const raw of given.note) {
    const { index = questions.findIndex((q) => notes[q.question] === undefined), value } = targeted(raw, questions.length);
    if (index < 0) throw new CliError(`"${raw}" has no question left to go with; number it (N=text).`, EXIT.usage);
    notes[questions[index]!.question] = value;
  }
  // One label as a string for a single-choice question; several are sent as given, for the API to refuse.
  const single = (q: AskedQuestion) => (q.multiSelect || answers[q.question]!.length > 1 ? answers[q.question] : answers[q.question]![0]);
  const picked = Object.fromEntries(questions.filter((q) => answers[q.question]).map((q) => [q.question, single(q)!]));
  return { answers: picked, ...(Object.keys(other).length > 0 ? { other } : {}), ...(Object.keys(notes).length > 0 ? { notes } : {}) };
}

/** A waiting question call as the terminal shows it: each question, its options numbered. */
export function questionLines(call: components['schemas']['PendingQuestion']): string {
  const lines = [`${call.toolUseId}  (goes on without an answer at ${call.expiresAt})`];
  call.questions.forEach((q, i) => {
    lines.push(`  ${i + 1}. [${q.header}] ${q.question}${q.multiSelect ? '  (several may be picked)' : ''}`);
    lines.push(...q.options.map((o, j) => `     ${j + 1}) ${o.label} — ${o.description}`));
  });
  return lines.join('\n');
}
