import { RemovalPolicy } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { StageConfig } from '../config/stages.ts';

/**
 * The secrets the functions read at cold start, each created only when the feature that reads
 * it is configured: an unused secret still costs 0.40 USD a month. CloudFormation creates them with a random
 * placeholder; the operator stores the real values after the first deploy (docs/deploy.md).
 * A placeholder API-tokens value has no "token=tenant" pair, so the API refuses to start with
 * it instead of accepting a token nobody chose.
 */
export class AppSecrets extends Construct {
  /** Only with the `anthropic` model provider: Bedrock uses the functions' role, and an unused secret still costs money. */
  readonly anthropicApiKey?: secretsmanager.Secret;
  /** "token=tenant,token2=tenant2": the bearer tokens of the HTTP API. */
  readonly apiTokens: secretsmanager.Secret;
  /** Only with the stage's `githubApp`. */
  readonly githubAppPrivateKey?: secretsmanager.Secret;
  readonly githubWebhookSecret?: secretsmanager.Secret;

  constructor(scope: Construct, id: string, props: { stage: StageConfig }) {
    super(scope, id);
    const make = (logicalId: string, name: string, description: string) =>
      new secretsmanager.Secret(this, logicalId, {
        secretName: `${props.stage.prefix}/${name}`,
        description,
        removalPolicy: props.stage.protectData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      });
    if (props.stage.model.provider === 'anthropic') {
      this.anthropicApiKey = make('AnthropicApiKey', 'anthropic-api-key', 'Anthropic API key (plain text).');
    }
    this.apiTokens = make('ApiTokens', 'api-tokens', 'HTTP API bearer tokens: "token=tenant,token2=tenant2".');
    if (props.stage.githubApp) {
      this.githubAppPrivateKey = make('GithubAppPrivateKey', 'github-app-private-key', 'GitHub App private key (PEM).');
      this.githubWebhookSecret = make('GithubWebhookSecret', 'github-webhook-secret', 'GitHub webhook HMAC secret.');
    }
  }

  all(): secretsmanager.Secret[] {
    return [this.anthropicApiKey, this.apiTokens, this.githubAppPrivateKey, this.githubWebhookSecret].filter((s) => s !== undefined);
  }
}
