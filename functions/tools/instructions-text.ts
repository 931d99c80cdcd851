import path from 'node:path';
import type { InstructionFile } from '../../sandbox-runner/protocol.ts';

/** File names looked for in the workspace root and, on Read, in each directory above a file read. */
export const INSTRUCTIONS_FILE_NAMES = ['CLAUDE.md', 'AGENTS.md'] as const;

/**
 * A file's text as the model gets it: cut files end with a note that says so and how to read
 * the rest (the cap is STRATUS_INSTRUCTIONS_MAX_FILE_CHARS; docs/context.md).
 */
export function instructionsBody(file: Pick<InstructionFile, 'path' | 'content' | 'chars' | 'truncated'>): string {
  const body = file.content.replace(/\n+$/, '');
  if (!file.truncated) return body;
  return `${body}\n\n[Cut by Stratus: ${file.path} has ${file.chars.toLocaleString('en-US')} characters and only the first ${file.content.length.toLocaleString('en-US')} are shown here. Read the file for the rest.]`;
}

/**
 * The reminder a Read result carries for instructions files of the directories above the file
 * it read (each file once per session): which file, which part of the tree it governs, its text.
 */
export function nestedInstructionsReminder(files: readonly InstructionFile[]): string {
  const parts = files.map((file) => {
    const origin = file.importedBy ? `imported by ${file.importedBy}` : `for the files under ${path.posix.dirname(file.path)}/`;
    return `Instructions from ${file.path} (${origin}):\n\n${instructionsBody(file)}`;
  });
  return `<system-reminder>\n${parts.join('\n\n')}\n</system-reminder>`;
}
