import type { z } from 'zod';

/**
 * Turns a schema failure into sentences the model can act on, grouped
 * (docs/tool-pipeline.md, "One call"): missing parameters, then unexpected ones, then wrong types. Anything else falls back
 * to zod's own message.
 */
export function describeInputIssues(toolName: string, error: z.ZodError): string {
  const issues = error.issues;
  const isMissing = (i: z.core.$ZodIssue) => i.code === 'invalid_type' && /received undefined/.test(i.message);
  const missing = issues.filter(isMissing).map((i) => `The required parameter \`${formatPath(i.path)}\` is missing`);
  const unexpected = issues
    .filter((i): i is z.core.$ZodIssueUnrecognizedKeys => i.code === 'unrecognized_keys')
    .flatMap((i) => i.keys.map((key) => `An unexpected parameter \`${key}\` was provided`));
  const wrongType = issues
    .filter((i): i is z.core.$ZodIssueInvalidType => i.code === 'invalid_type' && !isMissing(i))
    .map(
      (i) =>
        `The parameter \`${formatPath(i.path)}\` type is expected as \`${i.expected}\` but provided as \`${/received (\w+)/.exec(i.message)?.[1] ?? 'unknown'}\``,
    );
  const lines = [...missing, ...unexpected, ...wrongType];
  if (lines.length === 0) return `InputValidationError: ${error.message}`;
  return `InputValidationError: ${toolName} failed due to the following ${lines.length > 1 ? 'issues' : 'issue'}:\n${lines.join('\n')}`;
}

/** `a.b[2].c`: how the error texts print a path. */
function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, part, i) => (typeof part === 'number' ? `${acc}[${part}]` : i === 0 ? String(part) : `${acc}.${String(part)}`), '');
}
