import type { Octokit } from '@octokit/rest';

/**
 * The hidden mark on a comment Stratus posts that carries no mark of its own (the progress,
 * question and rate-limit comments have theirs). GitHub renders an HTML comment as nothing; a
 * delivery for a comment holding `<!-- stratus-` is Stratus hearing itself and starts nothing
 * (functions/github/own-activity.ts), also where no App id tells (a plain token posts as a person).
 */
export const OWN_COMMENT_MARK = '<!-- stratus-comment -->';

/** Issue and PR comments, their edits, and replies in review threads (as templates and as sent). */
const COMMENT_WRITES = [
  /\/issues\/(\{issue_number\}|\d+)\/comments$/,
  /\/issues\/comments\/(\{comment_id\}|\d+)$/,
  /\/pulls\/(\{pull_number\}|\d+)\/comments\/(\{comment_id\}|\d+)\/replies$/,
];

/** Every comment this client writes carries a Stratus mark, whichever code path wrote it. */
export function markOwnComments(octokit: Octokit): Octokit {
  octokit.hook.before('request', (options) => {
    const body = (options as { body?: unknown }).body;
    if (options.method === 'GET' || typeof body !== 'string' || body.includes('<!-- stratus-')) return;
    if (COMMENT_WRITES.some((route) => route.test(String(options.url)))) (options as { body?: unknown }).body = `${OWN_COMMENT_MARK}\n${body}`;
  });
  return octokit;
}
