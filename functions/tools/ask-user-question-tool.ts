import { z } from 'zod';
import { buildTool } from './tool.ts';

export const ASK_USER_QUESTION_TOOL_NAME = 'AskUserQuestion';

/** The longest header the model is told to write (a chip in the reference's UI; not enforced there either). */
const MAX_HEADER_CHARS = 12;

const option = z.object({
  label: z.string().describe('The text of the choice that the person sees and picks: short (1-5 words) and clear.'),
  description: z.string().describe('What this choice means or what will happen when it is picked: its trade-offs or consequences.'),
  preview: z.string().optional().describe('Optional content shown beside the option (a mockup, a code snippet) to help compare the choices.'),
});

const question = z.object({
  question: z.string().describe('The whole question, clear and specific, ending with a question mark.'),
  header: z.string().describe(`A very short label for the question (at most ${MAX_HEADER_CHARS} characters), e.g. "Library" or "Approach".`),
  options: z
    .array(option)
    .min(2)
    .max(4)
    .describe(
      'The 2-4 choices, distinct (mutually exclusive unless multiSelect). Do not add an "Other" choice: the person can always answer in their own words.',
    ),
  multiSelect: z.boolean().default(false).describe('True when the person may pick several choices.'),
});

/** Texts of a question must differ, and labels within a question: an answer names them. */
const UNIQUE_MESSAGE = 'Question texts must be unique, option labels must be unique within each question';

function uniqueTexts(input: { questions: { question: string; options: { label: string }[] }[] }): boolean {
  const texts = input.questions.map((q) => q.question);
  if (new Set(texts).size !== texts.length) return false;
  return input.questions.every((q) => new Set(q.options.map((o) => o.label)).size === q.options.length);
}

const inputSchema = z
  .strictObject({
    questions: z.array(question).min(1).max(4).describe('The questions to ask (1-4)'),
    answers: z.record(z.string(), z.string()).optional().describe('The answers, filled in by the harness from what the person chose'),
    annotations: z
      .record(z.string(), z.object({ preview: z.string().optional(), notes: z.string().optional() }))
      .optional()
      .describe("Per-question notes the person added, keyed by the question's text (filled in by the harness)"),
    metadata: z
      .object({ source: z.string().optional().describe('Where the question comes from, for tracking; never shown') })
      .optional()
      .describe('Tracking data; never shown to the person'),
  })
  .refine(uniqueTexts, { message: UNIQUE_MESSAGE });

export type AskUserQuestionInput = z.output<typeof inputSchema>;

/** What the call answers: what a person chose, or why no one did. */
export type QuestionOutcome =
  | { kind: 'answered'; answers: Record<string, string>; annotations?: AskUserQuestionInput['annotations'] }
  | { kind: 'unanswered'; why: 'timed_out' | 'unattended'; questions: string[] };

const DESCRIPTION = [
  'Asks the person you work for one to four multiple-choice questions and waits for their answers.',
  'Use it when a decision is theirs to make: an ambiguous request, a preference, a choice between approaches with different trade-offs.',
  'Each question has 2-4 options with a label and a description; the person can always answer in their own words instead. Set multiSelect when several options may apply.',
  'If you recommend an option, put it first and end its label with "(Recommended)".',
  'The session pauses until they answer (through the API, the CLI, the console, or a reply on the GitHub issue or pull request); it costs nothing meanwhile. If no one answers in time, or no one can (an unattended run), you are told so: then make the choice yourself and say which you made.',
  'Do not use it for permission to go on or to ask whether a plan is ready.',
].join('\n');

/** The reference's result text for answered questions, word for word. */
export function answeredText(answers: Record<string, string>, annotations: AskUserQuestionInput['annotations']): string {
  const parts = Object.entries(answers).map(([text, answer]) => {
    const note = annotations?.[text];
    const pieces = [`"${text}"="${answer}"`];
    if (note?.preview) pieces.push(`selected preview:\n${note.preview}`);
    if (note?.notes) pieces.push(`user notes: ${note.notes}`);
    return pieces.join(' ');
  });
  return `User has answered your questions: ${parts.join(', ')}. You can now continue with the user's answers in mind.`;
}

/** Stratus's own text when nobody answered; each question as the reference lists one left without an answer. */
export function unansweredText(why: 'timed_out' | 'unattended', questions: string[]): string {
  const reason =
    why === 'timed_out' ? 'No one answered your questions in the time this session allows for an answer.' : 'No one can answer questions in this session.';
  const listed = questions.map((q) => `- "${q}"\n  (No answer provided)`).join('\n');
  return `${reason}\n\nQuestions asked:\n${listed}\n\nGo on without the answers: choose what you think best, and say which choice you made and why.`;
}

export const askUserQuestionTool = buildTool({
  name: ASK_USER_QUESTION_TOOL_NAME,
  inputSchema,
  description: DESCRIPTION,
  maxResultSizeChars: 100_000,
  searchHint: 'prompt the user with a multiple-choice question',
  // Not deferred, unlike the reference: like NotebookEdit, TaskOutput and the web tools here, a
  // built-in is always loaded, so ToolSearch (and its message at the head of every request) comes
  // only with MCP tools (docs/tool-pipeline.md, "ToolSearch").
  shouldDefer: false,
  interaction: 'question',
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  // Asking changes nothing: no permission is needed, in any mode (the wait for the answer is the pipeline's).
  checkPermissions: async () => ({ behavior: 'allow' as const }),
  async call(input, ctx): Promise<{ data: QuestionOutcome }> {
    const questions = input.questions.map((q) => q.question);
    // Answers count only when they came back with the closed question (the model may fill the field in itself).
    if (ctx.resumedInteraction && input.answers && Object.keys(input.answers).length > 0) {
      return { data: { kind: 'answered', answers: input.answers, ...(input.annotations ? { annotations: input.annotations } : {}) } };
    }
    return { data: { kind: 'unanswered', why: ctx.resumedInteraction ? 'timed_out' : 'unattended', questions } };
  },
  mapToolResultToToolResultBlockParam(output: QuestionOutcome, toolUseId) {
    const content = output.kind === 'answered' ? answeredText(output.answers, output.annotations) : unansweredText(output.why, output.questions);
    return { type: 'tool_result', tool_use_id: toolUseId, content };
  },
});
