import { z } from 'zod';

/**
 * The hidden mark every comment Stratus posts starts with (`<!-- stratus-progress -->`,
 * `<!-- stratus-queued -->`, ...). GitHub renders HTML comments as nothing, so a reader never sees
 * it, and a delivery for a comment that carries it is Stratus hearing itself.
 */
export const OWN_MARK_PREFIX = '<!-- stratus-';

/** Who Stratus is on GitHub: the App's id (its comments say `performed_via_github_app.id`) and the author of its commits. */
export interface OwnIdentity {
  appId?: string;
  commitAuthor: { email: string };
}

const appSchema = z.object({ id: z.number().int() }).nullish();
const authoredSchema = z.object({ body: z.string().nullish(), performed_via_github_app: appSchema, user: z.object({ login: z.string() }).nullish() }).nullish();
const commitSchema = z.object({ author: z.object({ email: z.string().nullish() }).nullish() }).nullish();
const payloadSchema = z.object({
  comment: authoredSchema,
  review: authoredSchema,
  sender: z.object({ login: z.string(), type: z.string() }).nullish(),
  head_commit: commitSchema,
});

/**
 * Why a delivery is Stratus's own doing and must start nothing (no loops): a comment or review
 * with its hidden mark or made through its App, or a push whose head commit is by its commit
 * author. Undefined when someone else acted. The mark covers a plain-token deployment too,
 * whose comments are posted under a person's account.
 */
export function ownActivity(payload: unknown, own: OwnIdentity): string | undefined {
  const parsed = payloadSchema.safeParse(payload);
  if (!parsed.success) return undefined;
  const p = parsed.data;
  for (const [what, item] of [
    ['comment', p.comment],
    ['review', p.review],
  ] as const) {
    if (item?.body?.includes(OWN_MARK_PREFIX)) return `the ${what} is one Stratus posted`;
    if (own.appId !== undefined && String(item?.performed_via_github_app?.id) === own.appId) return `the ${what} was made by Stratus's GitHub App`;
  }
  // A push's head commit only: a check suite or workflow run on a Stratus commit is CI's verdict on it, not Stratus acting.
  const email = p.head_commit?.author?.email?.toLowerCase();
  if (email && email === own.commitAuthor.email.toLowerCase()) return 'the commit is one Stratus made';
  return undefined;
}
