import type { z } from 'zod';

/**
 * Turns a schema failure into sentences the model can act on, one per bad field:
 * missing, unexpected, or of the wrong type.
 */
export function describeInputIssues(toolName: string, error: z.ZodError): string {
  const lines: string[] = [];
  for (const issue of error.issues) {
    const field = issue.path.join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.push(`An unexpected parameter \`${[...issue.path, key].join('.')}\` was provided`);
    } else if (issue.code === 'invalid_type' && issue.input === undefined) {
      lines.push(`The required parameter \`${field}\` is missing`);
    } else if (issue.code === 'invalid_type') {
      lines.push(`The parameter \`${field}\` type is expected as \`${issue.expected}\` but provided as \`${typeName(issue.input)}\``);
    } else {
      lines.push(field ? `The parameter \`${field}\` is invalid: ${issue.message}` : issue.message);
    }
  }
  const noun = lines.length > 1 ? 'issues' : 'issue';
  return `InputValidationError: ${toolName} failed due to the following ${noun}:\n${lines.join('\n')}`;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
