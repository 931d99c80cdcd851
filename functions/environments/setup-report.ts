import type { SetupRecord } from '../stores/setup-record.ts';

/** The output the model is shown of a failed set-up: its last characters. */
const MODEL_TAIL_CHARS = 4_000;
/** The output a GitHub comment quotes. */
const COMMENT_TAIL_CHARS = 1_500;

/** What the set-up ran, in words: the repository's file, or the setting's script. */
export function setupCommandName(setup: Pick<SetupRecord, 'source'>): string {
  if (setup.source === 'repository_file') return '.stratus/setup.sh';
  if (setup.source === 'tenant_setting') return "the tenant's default set-up script";
  return setup.source === 'repository_setting' ? "the repository's set-up script" : "the session's set-up script";
}

function seconds(ms: number | undefined): string {
  return `${((ms ?? 0) / 1000).toFixed(1)} s`;
}

/** How the set-up ended, as one clause: "succeeded in 4.2 s", "failed with exit code 1 after 0.3 s", ... */
export function setupOutcome(setup: SetupRecord): string {
  if (setup.status === 'running') return 'is running';
  if (setup.status === 'interrupted') return 'were interrupted: the process running them stopped before they finished, and they are not run again';
  if (setup.restored) return 'were not run: the cached environment of an earlier run with the same set-up was restored';
  if (setup.status === 'succeeded') return `succeeded in ${seconds(setup.durationMs)}`;
  if (setup.error !== undefined && setup.exitCode === undefined) return `could not run: ${setup.error}`;
  if (setup.timedOut) return `did not finish within their ${setup.timeoutSeconds} s limit and were stopped`;
  return `failed with ${setup.exitCode === null ? 'a signal' : `exit code ${setup.exitCode}`} after ${seconds(setup.durationMs)}`;
}

function fenced(text: string, max: number): string {
  const tail = text.length > max ? `…${text.slice(-max)}` : text;
  return ['```', tail.replaceAll('```', '`\u200b``').trimEnd() || '(no output)', '```'].join('\n');
}

/**
 * The note the model gets with the first prompt after the set-up ended: that it ran, and
 * when it did not succeed, how it failed and the end of its output, so the model knows what is
 * (not) installed instead of finding out by trial.
 */
export function setupNoteForModel(setup: SetupRecord): string {
  return `<system-reminder>\n${setupNoteText(setup)}\n</system-reminder>`;
}

/** The note itself; the harness marks it as its own context, as it does the project's instructions. */
function setupNoteText(setup: SetupRecord): string {
  const what = `The set-up steps of this workspace (${setupCommandName(setup)}) ran before this conversation`;
  if (setup.status === 'succeeded') return `${what}: they ${setupOutcome(setup)}. What they installed is in place.`;
  return [
    `${what} and did not succeed: they ${setupOutcome(setup)}.`,
    ...(setup.outputTail ? ['The end of their output:', fenced(setup.outputTail, MODEL_TAIL_CHARS)] : []),
    'The workspace is as they left it. They are not run again in this session; your own commands reach only the hosts this session allows, so dependencies that failed to install may be missing. Say so in your answer if it matters.',
  ].join('\n');
}

/** The set-up's line (and, when it failed, the end of its output) for the GitHub progress comment. */
export function setupSummaryForComment(setup: SetupRecord | undefined): string[] {
  if (!setup) return [];
  const icon = setup.status === 'succeeded' ? '🧰' : '⚠️';
  const line = `${icon} Set-up steps (${setupCommandName(setup)}) ${setupOutcome(setup)}.`;
  if (setup.status === 'succeeded') return ['', line];
  return ['', `${line} The model was told.`, ...(setup.outputTail ? ['', fenced(setup.outputTail, COMMENT_TAIL_CHARS)] : [])];
}
