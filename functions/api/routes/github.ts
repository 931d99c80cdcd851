import { Webhooks } from '@octokit/webhooks';
import { Hono } from 'hono';
import { z } from 'zod';
import { budgetsSchema } from '../../stores/budgets.ts';
import { NO_EGRESS } from '../../../sandbox-runner/isolation/egress-mode.ts';
import { allowListSchema } from '../../../sandbox-runner/isolation/network-allow-list.ts';
import type { Deps } from '../../deps/deps.ts';
import { deliveryRepository, triggerFromDelivery } from '../../github-api/github-trigger.ts';
import { assertValidRules } from '../../permissions/session-settings.ts';
import { permissionModeSchema, ruleListsSchema } from '../../permissions/types.ts';
import { LimitError, NotFoundError, UnauthorizedError, UserError } from '../../shared/errors.ts';
import type { GithubRepoRecord, GithubRunRecord } from '../../stores/github-store.ts';
import type { AuthVariables } from '../auth.ts';
import { parseJsonBody, parseWith } from '../validate.ts';

/** GitHub's own cap on a webhook payload. */
export const MAX_WEBHOOK_BYTES = 25 * 1024 * 1024;

/** `owner/name` as GitHub allows them (owner: letters, digits, hyphens; name: also `.` and `_`). */
export const repositoryNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/, 'expected "owner/name"')
  .refine((s) => !s.endsWith('/.') && !s.endsWith('/..'), 'expected "owner/name"');

export const githubRepoSettingsSchema = z.strictObject({
  permissionMode: permissionModeSchema.optional(),
  rules: ruleListsSchema.optional(),
  allowedDomains: allowListSchema.optional(),
  budgets: budgetsSchema.optional(),
});

export const connectRepositoryBody = z.strictObject({
  repository: repositoryNameSchema,
  label: z.string().min(1).max(50).default('stratus').describe('Labelling an issue with it starts a run'),
  mention: z.string().regex(/^@[A-Za-z0-9][A-Za-z0-9-]{0,38}$/, 'expected "@handle"').default('@stratus').describe('A writer mentioning it in a comment starts a run'),
  settings: githubRepoSettingsSchema.optional(),
  allowBots: z.boolean().default(false).describe('Let bot accounts trigger runs'),
});

export const patchRepositoryBody = z.strictObject({
  label: z.string().min(1).max(50).optional(),
  mention: z.string().regex(/^@[A-Za-z0-9][A-Za-z0-9-]{0,38}$/, 'expected "@handle"').optional(),
  settings: githubRepoSettingsSchema.optional(),
  allowBots: z.boolean().optional(),
});

export const githubPageQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50), cursor: z.string().optional() });

type GithubRouteDeps = Pick<Deps, 'config' | 'github' | 'githubDispatch' | 'clock' | 'log'>;

/**
 * `POST /v1/github/webhook`: no bearer token; the delivery's `X-Hub-Signature-256` is checked
 * with @octokit/webhooks (constant time) before anything is read or stored. A delivery that
 * starts a run is recorded by `X-GitHub-Delivery` with a create-only write (a redelivery does
 * nothing) and handed to the worker asynchronously; the answer is 202 either way.
 */
export function githubWebhookRoutes(deps: GithubRouteDeps) {
  const app = new Hono();
  const secret = deps.config.github.webhookSecret;
  const webhooks = secret ? new Webhooks({ secret }) : undefined;

  app.post('/v1/github/webhook', async (c) => {
    if (!webhooks) throw new NotFoundError('GitHub webhooks are not configured on this deployment (STRATUS_GITHUB_WEBHOOK_SECRET).');
    if (Number(c.req.header('content-length')) > MAX_WEBHOOK_BYTES) throw new LimitError(`A webhook payload is at most ${MAX_WEBHOOK_BYTES} bytes.`, 'request_too_large');
    const body = await c.req.text();
    const signature = c.req.header('x-hub-signature-256');
    if (!signature || !(await webhooks.verify(body, signature).catch(() => false))) {
      throw new UnauthorizedError('Missing or invalid X-Hub-Signature-256: the delivery is not signed with this deployment\'s webhook secret.');
    }
    const event = c.req.header('x-github-event');
    const deliveryId = c.req.header('x-github-delivery');
    if (!event || !deliveryId || deliveryId.length > 200) throw new UserError('A GitHub delivery carries X-GitHub-Event and X-GitHub-Delivery headers.');
    let payload: unknown;
    try {
      payload = JSON.parse(body);
    } catch {
      throw new UserError('The delivery is not JSON (set the webhook\'s content type to application/json).');
    }
    const log = deps.log.child({ deliveryId, event });
    const repository = deliveryRepository(payload);
    const repo = repository ? await deps.github.getRepo(repository) : undefined;
    if (!repo) {
      log.info('webhook delivery for a repository that is not connected; ignored', { repository: repository ?? null });
      return c.json({ accepted: false, reason: 'repository not connected' }, 202);
    }
    const found = triggerFromDelivery(event, deliveryId, payload, repo);
    if ('ignored' in found) {
      log.info('webhook delivery starts nothing', { repository, reason: found.ignored });
      return c.json({ accepted: false, reason: found.ignored }, 202);
    }
    if (!(await deps.github.claimDelivery(deliveryId, event, deps.clock()))) {
      log.info('webhook redelivery ignored', { repository });
      return c.json({ accepted: false, reason: 'duplicate delivery' }, 202);
    }
    try {
      await deps.githubDispatch.dispatch({ kind: 'github_work', trigger: found.trigger });
    } catch (err) {
      // Not handed off: forget it, so GitHub's redelivery of this failed delivery is not taken for a duplicate.
      await deps.github.forgetDelivery(deliveryId);
      throw err;
    }
    log.info('webhook delivery accepted', { repository, number: found.trigger.number, trigger: found.trigger.trigger });
    return c.json({ accepted: true }, 202);
  });

  return app;
}

/** Connected repositories and the runs they started, per tenant (`/v1/github/...`, bearer auth). */
export function githubRoutes(deps: GithubRouteDeps) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post('/repositories', async (c) => {
    const body = await parseJsonBody(c, connectRepositoryBody);
    checkSettings(deps, body.settings);
    const now = new Date(deps.clock()).toISOString();
    const record: GithubRepoRecord = {
      repository: body.repository.toLowerCase(),
      fullName: body.repository,
      tenantId: c.get('tenantId'),
      createdAt: now,
      updatedAt: now,
      label: body.label,
      mention: body.mention,
      allowBots: body.allowBots,
      ...(body.settings ? { settings: body.settings } : {}),
    };
    await deps.github.createRepo(record);
    return c.json(repositoryView(record), 201);
  });

  app.get('/repositories', async (c) => {
    const q = parseWith(githubPageQuery, c.req.query(), 'query');
    const page = await deps.github.listRepos(c.get('tenantId'), q);
    return c.json({ repositories: page.items.map(repositoryView), nextCursor: page.nextCursor ?? null });
  });

  app.get('/repositories/:owner/:name', async (c) => c.json(repositoryView(await deps.github.getRepoForTenant(repoParam(c.req.param()), c.get('tenantId')))));

  app.patch('/repositories/:owner/:name', async (c) => {
    const body = await parseJsonBody(c, patchRepositoryBody);
    checkSettings(deps, body.settings);
    const current = await deps.github.getRepoForTenant(repoParam(c.req.param()), c.get('tenantId'));
    const updated: GithubRepoRecord = { ...current, ...body, updatedAt: new Date(deps.clock()).toISOString() };
    await deps.github.putRepo(updated);
    return c.json(repositoryView(updated));
  });

  app.delete('/repositories/:owner/:name', async (c) => {
    const current = await deps.github.getRepoForTenant(repoParam(c.req.param()), c.get('tenantId'));
    await deps.github.deleteRepo(current.fullName);
    return c.body(null, 204);
  });

  app.get('/runs', async (c) => {
    const q = parseWith(githubPageQuery, c.req.query(), 'query');
    const page = await deps.github.listRuns(c.get('tenantId'), q);
    return c.json({ runs: page.items.map(runView), nextCursor: page.nextCursor ?? null });
  });

  return app;
}

function repoParam(params: { owner: string; name: string }): string {
  const full = `${params.owner}/${params.name}`;
  // A name that could never be connected is simply not connected.
  if (!repositoryNameSchema.safeParse(full).success) throw new NotFoundError(`Repository ${full.slice(0, 200)} is not connected.`);
  return full;
}

function checkSettings(deps: GithubRouteDeps, settings: z.output<typeof githubRepoSettingsSchema> | undefined): void {
  assertValidRules(settings?.rules, 'settings.rules');
  if (settings?.allowedDomains?.length && deps.config.egress === 'none') throw new UserError(NO_EGRESS, 'egress_unavailable');
}

export function repositoryView(r: GithubRepoRecord) {
  return {
    repository: r.fullName,
    label: r.label,
    mention: r.mention,
    allowBots: r.allowBots,
    settings: r.settings ?? {},
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export function runView(r: GithubRunRecord) {
  return {
    id: r.runId,
    deliveryId: r.deliveryId,
    repository: r.repository,
    number: r.number,
    kind: r.kind,
    trigger: r.trigger,
    sender: r.sender,
    sessionId: r.sessionId ?? null,
    branch: r.branch ?? null,
    commit: r.commit ?? null,
    pullRequestUrl: r.pullRequestUrl ?? null,
    outcome: r.outcome,
    detail: r.detail ?? null,
    cost: r.cost ?? null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
