import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { EGRESS_TOKEN_TTL_MS, withEgressTokens } from '../runner-client/egress-tokens.ts';
import { createStsWorkspaceCredentialSource } from '../runner-client/sts-credentials.ts';
import { createStsPurgeCredentialSource, type PurgeCredentialSource } from '../runner-client/purge-credentials.ts';
import { configFromEnv } from '../deps/config.ts';
import type { Deps } from '../deps/deps.ts';
import { createDeps } from './create-deps.ts';
import { once } from './once.ts';
import { NO_TRACING } from '../shared/tracing.ts';
import { createXRayTracing } from './xray-tracing.ts';
import { withOtlpExport } from './otel-tracing.ts';

/**
 * The composition root for Lambda. The environment (set by the CDK app) names tables, bucket,
 * runner and secrets; the secrets themselves are read from Secrets Manager once, at cold start,
 * and live as long as the container. Workspace credentials come from STS, scoped per workspace.
 *
 * Environment: everything `configFromEnv` reads except the two secrets, plus
 * STRATUS_ANTHROPIC_KEY_SECRET (ARN, plain-text secret; only with STRATUS_MODEL_PROVIDER
 * anthropic, the default), STRATUS_API_TOKENS_SECRET (ARN,
 * "token=tenant,..."), STRATUS_WORKSPACE_ROLE_ARN, and with STRATUS_EGRESS=proxy
 * STRATUS_EGRESS_KEY_SECRET (ARN, the key egress tokens are signed with); optionally
 * STRATUS_GITHUB_WEBHOOK_SECRET_ARN (the API function) and STRATUS_GITHUB_APP_KEY_SECRET (the
 * GitHub worker; PEM), whose values become STRATUS_GITHUB_WEBHOOK_SECRET and
 * STRATUS_GITHUB_APP_PRIVATE_KEY; on the API function, STRATUS_PURGE_ROLE_ARN (the role a deleted
 * session's objects are removed with).
 */
export async function loadLambdaDeps(env: NodeJS.ProcessEnv): Promise<Deps> {
  const region = required(env, 'AWS_REGION');
  // The CDK app turns tracing on with the functions' X-Ray tracing (Powertools' variable).
  const xray = env.POWERTOOLS_TRACE_ENABLED === 'true' ? await createXRayTracing(env.POWERTOOLS_SERVICE_NAME || 'stratus') : NO_TRACING;
  const secrets = xray.captureClient(new SecretsManagerClient({ region }));
  const tokensSecret = required(env, 'STRATUS_API_TOKENS_SECRET');
  // Bedrock signs with the function's role: no key secret exists, none is read.
  const bedrock = env.STRATUS_MODEL_PROVIDER === 'bedrock';
  const [anthropicKey, apiTokens] = await Promise.all([
    bedrock ? undefined : readSecret(secrets, required(env, 'STRATUS_ANTHROPIC_KEY_SECRET')),
    readSecret(secrets, tokensSecret),
  ]);
  // Checked here so a malformed value (or the deploy-time placeholder) is reported without echoing it into the logs.
  if (!apiTokens.split(',').every((pair) => pair.trim().lastIndexOf('=') > 0)) {
    throw new Error(`The secret ${tokensSecret} must hold "token=tenant" pairs separated by commas (docs/deploy.md).`);
  }
  // GitHub: the API function reads the webhook secret, the worker the App's private key; each only what it uses.
  const [webhookSecret, appKey] = await Promise.all([
    env.STRATUS_GITHUB_WEBHOOK_SECRET_ARN ? readSecret(secrets, env.STRATUS_GITHUB_WEBHOOK_SECRET_ARN) : undefined,
    env.STRATUS_GITHUB_APP_KEY_SECRET ? readSecret(secrets, env.STRATUS_GITHUB_APP_KEY_SECRET) : undefined,
  ]);
  const config = configFromEnv({
    ...env,
    ANTHROPIC_API_KEY: anthropicKey,
    STRATUS_API_TOKENS: apiTokens,
    ...(webhookSecret ? { STRATUS_GITHUB_WEBHOOK_SECRET: webhookSecret } : {}),
    ...(appKey ? { STRATUS_GITHUB_APP_PRIVATE_KEY: appKey } : {}),
  });
  const tracing = await withOtlpExport(xray, config);
  // Built on the first runner call (LazyClient): no request needs STS before.
  const sts = once(async () => {
    const { STSClient } = await import('@aws-sdk/client-sts');
    return tracing.captureClient(new STSClient({ region }));
  });
  const workspaceCredentials = createStsWorkspaceCredentialSource({ sts, roleArn: required(env, 'STRATUS_WORKSPACE_ROLE_ARN'), bucket: config.bucket });
  // Only the API function purges deleted sessions; the other functions are given no purge role.
  const purgeCredentials = env.STRATUS_PURGE_ROLE_ARN
    ? createStsPurgeCredentialSource({ sts, roleArn: env.STRATUS_PURGE_ROLE_ARN, bucket: config.bucket })
    : noPurge;
  const deps = createDeps(config, { workspaceCredentials, purgeCredentials, tracing });
  if (config.egress !== 'proxy') return deps;
  // The egress proxy admits only what this key signed; the runner never sees the key.
  const key = await readSecret(secrets, required(env, 'STRATUS_EGRESS_KEY_SECRET'));
  return { ...deps, runner: withEgressTokens(deps.runner, { key, ttlMs: EGRESS_TOKEN_TTL_MS, clock: deps.clock }) };
}

export async function readSecret(client: SecretsManagerClient, secretId: string): Promise<string> {
  const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
  if (out.SecretString === undefined) throw new Error(`Secret ${secretId} has no string value; store it as plain text.`);
  return out.SecretString.trim();
}

const noPurge: PurgeCredentialSource = {
  forSession: () =>
    Promise.reject(new Error('This function has no session-purge role (STRATUS_PURGE_ROLE_ARN): only the API function purges deleted sessions.')),
};

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set; the CDK app sets it on every function.`);
  return value;
}
