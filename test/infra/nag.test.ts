import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { STAGES } from '../../infra/config/stages.ts';
import { StratusStack } from '../../infra/stratus-stack.ts';

process.env.CDK_VALIDATION = 'false';

describe('cdk-nag AwsSolutions', () => {
  it.each([
    ['with an account and region', { account: '123456789012', region: 'eu-west-1' }],
    ['environment-agnostic', {}],
  ])('finds nothing unacknowledged in either stage or with the egress proxy, %s', { timeout: 90_000 }, (_label, env) => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    for (const stage of Object.values(STAGES)) {
      new StratusStack(app, `Stratus-${stage.name}`, {
        stage: { ...stage, runner: { ...stage.runner, dockerfile: 'test/infra/fixtures/runner.Dockerfile' } },
        env,
      });
    }
    // And with the optional egress proxy, whose findings are acknowledged only when it exists.
    const dev = STAGES.dev;
    new StratusStack(app, 'Stratus-dev-egress', {
      stage: {
        ...dev,
        runner: { ...dev.runner, dockerfile: 'test/infra/fixtures/runner.Dockerfile' },
        network: { ...dev.network, egressProxy: true, egressProxyDockerfile: 'test/infra/fixtures/egress-proxy.Dockerfile' },
      },
      env,
    });
    // And with the model through Bedrock (a profile and a foundation model), whose grants are acknowledged only then.
    new StratusStack(app, 'Stratus-dev-bedrock', {
      stage: {
        ...dev,
        runner: { ...dev.runner, dockerfile: 'test/infra/fixtures/runner.Dockerfile' },
        model: { provider: 'bedrock', name: 'global.anthropic.claude-sonnet-5-5', fallback: 'anthropic.claude-haiku-5-0' },
      },
      env,
    });
    // And with the custom domain (CloudFront + origin access control) and GitHub issue fixing's webhook alias.
    new StratusStack(app, 'Stratus-prod-domain', {
      stage: {
        ...STAGES.prod,
        runner: { ...STAGES.prod.runner, dockerfile: 'test/infra/fixtures/runner.Dockerfile' },
        githubApp: true,
        api: {
          ...STAGES.prod.api,
          domain: { names: ['agents.example.com'], certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666' },
        },
      },
      env,
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    const errors: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => errors.push(args.join(' '));
    let failure = '';
    try {
      app.synth();
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
    } finally {
      console.error = original;
    }
    // On failure, the report printed by the plugin names each unacknowledged finding.
    expect({ failure, report: errors.filter((line) => line.includes('ERROR')) }).toEqual({ failure: '', report: [] });
  });
});
