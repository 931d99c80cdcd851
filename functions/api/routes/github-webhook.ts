import { createRoute, z } from '@hono/zod-openapi';
import type { Webhooks } from '@octokit/webhooks';
import type { Context } from 'hono';
import type { Deps } from '../../deps/deps.ts';
import { deliveryRepository } from '../../github-api/github-trigger.ts';
import { triggerForDelivery } from '../../github/follow-up-delivery.ts';
import { connectionForDelivery } from '../../github/route-delivery.ts';
import { LimitError, NotFoundError, UnauthorizedError, UserError } from '../../shared/errors.ts';
import { bodyLimit } from '../body-limit.ts';
import { createRouteApp } from '../route-app.ts';
import { errorResponses, json } from '../schemas/common.ts';

/** GitHub's own cap on a webhook payload. */
export const MAX_WEBHOOK_BYTES = 25 * 1024 * 1024;

/** Counted as the delivery arrives (body-limit.ts): the signature can only be checked over the whole body, which is never more than this. */
const webhookBodyLimit = bodyLimit(
  MAX_WEBHOOK_BYTES,
  (bytes) => new LimitError(`A webhook payload is at most ${MAX_WEBHOOK_BYTES} bytes; this one is at least ${bytes}.`, 'request_too_large'),
);

type WebhookDeps = Pick<Deps, 'config' | 'github' | 'githubInstallations' | 'githubItems' | 'githubDispatch' | 'clock' | 'log'>;

const webhookAnswerSchema = z
  .object({
    accepted: z.boolean().describe('true: a run was handed to the worker'),
    reason: z
      .string()
      .optional()
      .describe(
        "Why nothing starts: the repository is not connected, the event starts nothing (e.g. a review or check on a PR Stratus did not open, checks already being fixed or out of attempts), a redelivery, a Stratus PR's closing (recorded for the statistics), or an uninstalled App installation (its claim is released)",
      ),
  })
  .openapi('WebhookAnswer');

/**
 * Declared for the document, the 405 lookup and the client, but handled on the raw request: the
 * signature is checked over the exact bytes before anything parses them, so no validator runs.
 */
const webhook = createRoute({
  method: 'post',
  path: '/v1/github/webhook',
  tags: ['GitHub'],
  summary: 'A GitHub webhook delivery',
  description:
    "No bearer token: the delivery is authenticated by `X-Hub-Signature-256` (HMAC-SHA256 of the body with `STRATUS_GITHUB_WEBHOOK_SECRET`), checked before anything is parsed or stored. A body past 25 MB (GitHub's own cap) is a 413 as soon as that many bytes have arrived. A delivery that starts a run is recorded by `X-GitHub-Delivery` (a redelivery does nothing) and handed to the worker; the answer is 202 either way. 404 when the deployment has no webhook secret.",
  security: [],
  request: {
    headers: z.object({
      'x-hub-signature-256': z.string().describe('`sha256=<hex HMAC of the body>`'),
      'x-github-event': z
        .string()
        .describe(
          'The event name: `issues`, `issue_comment`, `pull_request_review`, `pull_request_review_comment`, `check_suite`, `check_run`, `workflow_run`, `pull_request` start or record work; others are answered 202 and ignored',
        ),
      'x-github-delivery': z.string().max(200).describe("The delivery's id (GUID): a redelivery carries the same one"),
    }),
    body: { content: { 'application/json': { schema: z.looseObject({}).describe("GitHub's event payload") } }, required: true },
  },
  responses: { 202: json(webhookAnswerSchema, 'Received; `accepted` says whether a run starts'), ...errorResponses(400, 404, 413) },
});

/**
 * `POST /v1/github/webhook`: no bearer token; the delivery's `X-Hub-Signature-256` is checked
 * with @octokit/webhooks (constant time) before anything is read or stored. A delivery that
 * starts a run is recorded by `X-GitHub-Delivery` with a create-only write (a redelivery does
 * nothing) and handed to the worker asynchronously; the answer is 202 either way.
 */
export function githubWebhookRoutes(deps: WebhookDeps) {
  const app = createRouteApp();
  const secret = deps.config.github.webhookSecret;
  // Loaded on the first delivery (docs/deploy.md, "Cold start and bundle size").
  let webhooks: Promise<Webhooks> | undefined;
  const verifier = secret ? () => (webhooks ??= import('@octokit/webhooks').then(({ Webhooks }) => new Webhooks({ secret }))) : undefined;
  app.openAPIRegistry.registerPath(webhook);
  app.post(webhook.path, webhookBodyLimit, async (c) => {
    if (!verifier) throw new NotFoundError('GitHub webhooks are not configured on this deployment (STRATUS_GITHUB_WEBHOOK_SECRET).');
    const delivery = await verifiedDelivery(c, await verifier());
    return c.json(await takeDelivery(deps, delivery), 202);
  });
  return app;
}

interface Delivery {
  event: string;
  deliveryId: string;
  payload: unknown;
}

/** The signed delivery, or the error that says why it is refused. */
async function verifiedDelivery(c: Context, webhooks: Webhooks): Promise<Delivery> {
  const body = await c.req.text();
  const signature = c.req.header('x-hub-signature-256');
  if (!signature || !(await webhooks.verify(body, signature).catch(() => false))) {
    throw new UnauthorizedError("Missing or invalid X-Hub-Signature-256: the delivery is not signed with this deployment's webhook secret.");
  }
  const event = c.req.header('x-github-event');
  const deliveryId = c.req.header('x-github-delivery');
  if (!event || !deliveryId || deliveryId.length > 200) throw new UserError('A GitHub delivery carries X-GitHub-Event and X-GitHub-Delivery headers.');
  try {
    return { event, deliveryId, payload: JSON.parse(body) };
  } catch {
    throw new UserError("The delivery is not JSON (set the webhook's content type to application/json).");
  }
}

/** The id of the installation an `installation.deleted` delivery reports. */
function deletedInstallation(payload: unknown): number | undefined {
  const parsed = z.object({ action: z.literal('deleted'), installation: z.object({ id: z.number().int() }) }).safeParse(payload);
  return parsed.success ? parsed.data.installation.id : undefined;
}

/** Starts a run for a delivery that asks for one, once per delivery id. */
async function takeDelivery(deps: WebhookDeps, { event, deliveryId, payload }: Delivery): Promise<z.infer<typeof webhookAnswerSchema>> {
  const log = deps.log.child({ deliveryId, event });
  const uninstalled = event === 'installation' ? deletedInstallation(payload) : undefined;
  if (uninstalled !== undefined) {
    // The App was uninstalled: GitHub never reuses the id, so its claim has nothing left to protect.
    const released = await deps.githubInstallations.release(uninstalled);
    log.info('GitHub App uninstalled; its claim is released', { installationId: uninstalled, tenantId: released?.tenantId ?? null });
    return { accepted: false, reason: 'installation deleted' };
  }
  const delivered = deliveryRepository(payload);
  const routed = delivered ? await connectionForDelivery(deps, delivered, log) : { ignored: 'repository not connected' };
  const repository = delivered?.fullName ?? null;
  if ('ignored' in routed) {
    log.info('webhook delivery for a repository that is not connected; ignored', { repository, repositoryId: delivered?.id ?? null });
    return { accepted: false, reason: routed.ignored };
  }
  const repo = routed;
  const found = await triggerForDelivery(deps, { event, deliveryId, payload }, repo, log);
  if ('ignored' in found) {
    log.info('webhook delivery starts nothing', { repository, reason: found.ignored });
    return { accepted: false, reason: found.ignored };
  }
  if (!(await deps.github.claimDelivery(deliveryId, event, deps.clock()))) {
    log.info('webhook redelivery ignored', { repository });
    return { accepted: false, reason: 'duplicate delivery' };
  }
  try {
    await deps.githubDispatch.dispatch({ kind: 'github_work', trigger: found.trigger });
  } catch (err) {
    // Not handed off: forget it, so GitHub's redelivery of this failed delivery is not taken for a duplicate.
    await deps.github.forgetDelivery(deliveryId);
    throw err;
  }
  log.info('webhook delivery accepted', { repository, number: found.trigger.number, trigger: found.trigger.trigger });
  return { accepted: true };
}
