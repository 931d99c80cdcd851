/** A single-choice AskUserQuestion question the question tests ask (the API, a killed process). */
export const LIBRARY_QUESTION = {
  question: 'Which library should we use?',
  header: 'Library',
  options: [
    { label: 'dayjs', description: 'Small' },
    { label: 'luxon', description: 'Rich' },
  ],
  multiSelect: false,
};
