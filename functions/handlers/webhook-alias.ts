/**
 * The name of the API function's alias whose Function URL receives GitHub's webhooks when the
 * API's own URL sits behind CloudFront (infra/stratus-stack.ts); requests through it reach only
 * the webhook route (createWebhookApp).
 */
export const WEBHOOK_ALIAS = 'webhook';
