import { z } from 'zod';

/**
 * What a webhook delivery asks of Stratus, cut down from the payload to the facts a run needs
 * (the issue's text is read again through the REST API when the run starts). It is what the
 * webhook route hands the worker, so it stays small whatever the payload's size.
 */
export const githubTriggerSchema = z.object({
  deliveryId: z.string().min(1).max(200),
  /**
   * label, mention: an issue or PR; review: review comments on a Stratus PR; check: its failing checks (review-trigger.ts);
   * queued: a run of its own for a comment queued while another run worked (functions/github/queue-into-run.ts);
   * answer: a comment on a thread whose agent waits on a question (functions/github/github-questions.ts);
   * resumed: the run's wait closed outside GitHub (the API, the console, a question's timeout) and its turn goes on (functions/github/resumed-run.ts).
   */
  trigger: z.enum(['label', 'mention', 'review', 'check', 'queued', 'answer', 'resumed']),
  /** `owner/name` as GitHub spells it. */
  repository: z.string().min(3).max(200),
  /** GitHub's repository id: the connection the run belongs to (names change hands, ids do not). */
  repositoryId: z.number().int(),
  owner: z.string().min(1),
  name: z.string().min(1),
  cloneUrl: z.string().min(1),
  defaultBranch: z.string().min(1),
  installationId: z.number().int().optional(),
  number: z.number().int().positive(),
  isPullRequest: z.boolean(),
  title: z.string(),
  sender: z.object({ login: z.string(), type: z.string() }),
  /** The comment that mentioned Stratus, or that answers its question. */
  commentId: z.number().int().optional(),
  /** The review comments to answer in their threads (one comment, or a review's). */
  review: z.object({ commentIds: z.array(z.number().int()).max(100), reviewId: z.number().int().optional() }).optional(),
  /** The commit whose checks failed; `limitReached`: the PR's fix attempts are used up (a comment, no run). */
  checks: z.object({ headSha: z.string().min(1).max(100), limitReached: z.boolean().optional() }).optional(),
  /** A writer's `@stratus budget +…` command: the item's budgets are raised, no run. */
  budgetRaise: z
    .object({ usd: z.number().positive().optional(), tokens: z.number().int().positive().optional(), runs: z.number().int().positive().optional() })
    .optional(),
  /** With `queued`: the queued message (functions/stores/steer-store.ts) the run is for. */
  steerId: z.string().max(300).optional(),
});
export type GithubTrigger = z.infer<typeof githubTriggerSchema>;

/** The repository as every delivery names it. */
export const repositorySchema = z.object({
  id: z.number().int(),
  full_name: z.string(),
  name: z.string(),
  owner: z.object({ login: z.string() }),
  clone_url: z.string(),
  default_branch: z.string(),
});
export const userSchema = z.object({ login: z.string(), type: z.string() });

/** The part of a trigger every delivery gives alike: the repository, its installation and who sent it. */
export function deliveryBase(
  deliveryId: string,
  trigger: GithubTrigger['trigger'],
  p: { repository: z.infer<typeof repositorySchema>; sender: z.infer<typeof userSchema>; installation?: { id: number } },
) {
  return {
    deliveryId,
    trigger,
    repository: p.repository.full_name,
    repositoryId: p.repository.id,
    owner: p.repository.owner.login,
    name: p.repository.name,
    cloneUrl: p.repository.clone_url,
    defaultBranch: p.repository.default_branch,
    ...(p.installation ? { installationId: p.installation.id } : {}),
    sender: { login: p.sender.login, type: p.sender.type },
  };
}
const issueSchema = z.object({ number: z.number().int(), title: z.string(), pull_request: z.unknown().optional() });

const labeledSchema = z.object({
  action: z.literal('labeled'),
  label: z.object({ name: z.string() }),
  issue: issueSchema,
  repository: repositorySchema,
  sender: userSchema,
  installation: z.object({ id: z.number().int() }).optional(),
});

const commentSchema = z.object({
  action: z.literal('created'),
  comment: z.object({ id: z.number().int(), body: z.string().nullable() }),
  issue: issueSchema,
  repository: repositorySchema,
  sender: userSchema,
  installation: z.object({ id: z.number().int() }).optional(),
});

/** Who a delivery's repository says it is: GitHub's ids (signed with the delivery), and its current name. */
export interface DeliveredRepository {
  id: number;
  fullName: string;
  installationId?: number;
}

/** The repository a delivery concerns (its id and name) and the installation it came through, when it names one. */
export function deliveryRepository(payload: unknown): DeliveredRepository | undefined {
  const parsed = z
    .object({ repository: z.object({ id: z.number().int(), full_name: z.string() }), installation: z.object({ id: z.number().int() }).optional() })
    .safeParse(payload);
  if (!parsed.success) return undefined;
  const { repository, installation } = parsed.data;
  return { id: repository.id, fullName: repository.full_name, ...(installation ? { installationId: installation.id } : {}) };
}

/**
 * The trigger a delivery carries for a repository connected with `label` and `mention`, or why
 * it carries none (other events, other labels, comments that do not mention Stratus).
 */
export function triggerFromDelivery(
  event: string,
  deliveryId: string,
  payload: unknown,
  match: { label: string; mention: string },
): { trigger: GithubTrigger } | { ignored: string } {
  if (event === 'issues') {
    const parsed = labeledSchema.safeParse(payload);
    if (!parsed.success) return { ignored: 'an issues event other than "labeled"' };
    if (parsed.data.label.name !== match.label) return { ignored: `label "${parsed.data.label.name}" is not "${match.label}"` };
    return { trigger: build('label', deliveryId, parsed.data) };
  }
  if (event === 'issue_comment') {
    const parsed = commentSchema.safeParse(payload);
    if (!parsed.success) return { ignored: 'an issue_comment event other than "created"' };
    if (!mentions(parsed.data.comment.body ?? '', match.mention)) return { ignored: `the comment does not mention ${match.mention}` };
    return { trigger: { ...build('mention', deliveryId, parsed.data), commentId: parsed.data.comment.id } };
  }
  return { ignored: `event "${event}" does not start runs` };
}

/**
 * A new comment as the answer to the question a thread waits on: any `issue_comment.created`
 * but a bot's (the App's own question and progress comments included); whether its author may
 * answer (write access) is the worker's check, as for a mention.
 */
export function answerFromDelivery(event: string, deliveryId: string, payload: unknown): { trigger: GithubTrigger } | { ignored: string } | undefined {
  if (event !== 'issue_comment') return undefined;
  const parsed = commentSchema.safeParse(payload);
  if (!parsed.success) return undefined;
  const { sender } = parsed.data;
  if (isBot(sender)) return { ignored: "a bot's comment does not answer a question" };
  return { trigger: { ...build('answer', deliveryId, parsed.data), commentId: parsed.data.comment.id } };
}

/** A bot account: GitHub's `type`, or the `[bot]` suffix its App accounts carry. */
export function isBot(sender: { login: string; type: string }): boolean {
  return sender.type === 'Bot' || sender.login.endsWith('[bot]');
}

/** A mention is the handle as a word of its own (`@stratus`, not `@stratus-bot` or `x@stratus`). */
export function mentions(body: string, mention: string): boolean {
  const escaped = mention.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w@-])${escaped}(?![\\w-])`, 'i').test(body);
}

function build(trigger: GithubTrigger['trigger'], deliveryId: string, p: z.infer<typeof labeledSchema> | z.infer<typeof commentSchema>): GithubTrigger {
  return {
    ...deliveryBase(deliveryId, trigger, p),
    number: p.issue.number,
    isPullRequest: p.issue.pull_request !== undefined && p.issue.pull_request !== null,
    title: p.issue.title,
  };
}
