import { describe, expect, it } from 'vitest';
import { answerFromReply } from '../../../functions/github/question-reply.ts';
import { LIBRARY_QUESTION as library } from '../../support/questions.ts';

const features = {
  question: 'Which features?',
  header: 'Features',
  options: [
    { label: 'Dark mode', description: 'A dark theme' },
    { label: 'Search', description: 'Full-text search' },
  ],
  multiSelect: true,
};

describe('a reply comment as the answer to questions', () => {
  it('takes one question from the whole reply: a label (any case), a number, else the words as the own answer', () => {
    expect(answerFromReply([library], 'LUXON.', '@stratus')).toEqual({ answers: { [library.question]: 'luxon' }, other: {} });
    expect(answerFromReply([library], '@stratus 1', '@stratus')).toEqual({ answers: { [library.question]: 'dayjs' }, other: {} });
    expect(answerFromReply([library], '> quoted question\nNeither: use Temporal<!-- hidden -->', '@stratus')).toEqual({
      answers: {},
      other: { [library.question]: 'Neither: use Temporal' },
    });
  });

  it('takes several questions from a line each, several options from commas, and says what is missing', () => {
    expect(answerFromReply([library, features], '1: dayjs\n2. Search, dark mode', '@stratus')).toEqual({
      answers: { [library.question]: 'dayjs', [features.question]: ['Search', 'Dark mode'] },
      other: {},
    });
    expect(answerFromReply([library, features], '1) luxon', '@stratus')).toEqual({
      unclear: expect.stringMatching(/^The reply does not answer question 2\. /),
    });
    expect(answerFromReply([library], '> only a quote', '@stratus')).toEqual({ unclear: expect.stringMatching(/^The reply has no answer in it\. /) });
  });
});
