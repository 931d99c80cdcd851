import type { InstructionFile } from '../../sandbox-runner/protocol.ts';
import { instructionsBody } from '../tools/instructions-text.ts';

/** Instructions that come from settings rather than files. */
export interface SettingInstructions {
  /** The tenant's `instructions` setting. */
  tenant?: string;
  /** A GitHub run's repository connection setting. */
  repository?: { repository: string; text: string };
}

/**
 * The block that opens the first user message of every request: the session's instructions,
 * each part introduced by where it comes from (the tenant's settings, the repository
 * connection's settings, then the project's files as read from the workspace the turn starts
 * on), and today's date. Pure: the same inputs give the same bytes, so a turn whose files did
 * not change sends the prefix the prompt cache already holds. `maxTotalChars` bounds the files
 * together: one that does not fit is cut (or left out) with a note saying so.
 */
export function instructionsBlock(input: { settings: SettingInstructions; files: readonly InstructionFile[]; date: string; maxTotalChars: number }): string {
  const parts: string[] = [];
  if (input.settings.tenant?.trim())
    parts.push(`Instructions from the tenant's settings (for every session of this tenant):\n\n${input.settings.tenant.trim()}`);
  const repo = input.settings.repository;
  if (repo?.text.trim())
    parts.push(`Instructions from the settings of the repository connection ${repo.repository} (for every run on it):\n\n${repo.text.trim()}`);
  let room = input.maxTotalChars;
  for (const file of input.files) {
    const heading = `Instructions from ${file.path} (${originOf(file)})`;
    if (room <= 0) {
      parts.push(
        `${heading} were left out: this turn's instructions files reached their cap of ${input.maxTotalChars.toLocaleString('en-US')} characters. Read the file if it matters for the task.`,
      );
      continue;
    }
    const fitted = file.content.length > room ? { ...file, content: file.content.slice(0, room), truncated: true } : file;
    room -= fitted.content.length;
    parts.push(`${heading}:\n\n${instructionsBody(fitted)}`);
  }
  const lead =
    parts.length > 0
      ? 'The people who run this project ask you to follow these instructions. They take precedence over your general habits; where two disagree, the more specific one (a later part) wins.\n\n'
      : '';
  return `<system-reminder>\n${lead}${parts.join('\n\n')}${parts.length > 0 ? '\n\n' : ''}Today's date is ${input.date}.\n</system-reminder>`;
}

function originOf(file: InstructionFile): string {
  if (file.importedBy) return `imported by ${file.importedBy}`;
  return `the project's ${file.path.replace(/^\/workspace\//, '')}`;
}
