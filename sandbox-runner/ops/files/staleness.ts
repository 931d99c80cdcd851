import type { FileStateEntry } from './file-state.ts';

export const NOT_READ_MESSAGE = 'File has not been read yet. Read it first before writing to it.';
export const MODIFIED_SINCE_READ_MESSAGE = 'File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.';
export const UNEXPECTEDLY_MODIFIED_MESSAGE = 'File has been unexpectedly modified. Read it again before attempting to write it.';

/** Why an existing file may not be overwritten yet, or undefined when the model's view is current. */
export function stalenessRefusal(known: FileStateEntry | undefined, currentHash: string): string | undefined {
  if (!known || known.isPartialView) return NOT_READ_MESSAGE;
  if (known.hash !== currentHash) return MODIFIED_SINCE_READ_MESSAGE;
  return undefined;
}

/** Validation-stage refusals reach the model wrapped in <tool_use_error>. */
export function toolUseError(message: string): string {
  return `<tool_use_error>${message}</tool_use_error>`;
}
