import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { STAGES } from './config/stages.ts';
import { withModelContext } from './config/model-context.ts';
import { domainFromContext } from './config/domain-context.ts';
import { tracesFromContext } from './config/traces-context.ts';
import { StratusStack } from './stratus-stack.ts';

/**
 * One stack per stage (`Stratus-dev`, `Stratus-prod`): synth checks both, deploy picks one by
 * name. cdk-nag's AwsSolutions pack runs on every synth; an unacknowledged finding fails it.
 * `-c runnerDockerfile=path` builds the runner image from another Dockerfile; `-c egressProxy=true`
 * (or `false`) overrides the stages' `network.egressProxy`. The model is chosen without a code
 * edit: `-c modelProvider=bedrock` (or `anthropic`), `-c model=<id>`, `-c fallbackModel=<id>`
 * (a provider without a model name gets that provider's default, functions/model/model-names.ts).
 * `-c corsOrigins=https://a.example,https://b.example` lets those browser origins call the API.
 * `-c domainName=agents.example.com -c certificateArn=<us-east-1 ACM ARN>` puts CloudFront in front.
 * `-c otelTracesEndpoint=<OTLP/HTTP traces URL>` (with `-c otelHeaders=name=value,…`) exports the spans there too.
 */
const app = new App();
const dockerfile = app.node.tryGetContext('runnerDockerfile') as string | undefined;
const egressProxy = app.node.tryGetContext('egressProxy') as string | boolean | undefined;
const corsOrigins = app.node.tryGetContext('corsOrigins') as string | undefined;
const domain = domainFromContext(app.node.tryGetContext('domainName') as string | undefined, app.node.tryGetContext('certificateArn') as string | undefined);
const otel = {
  endpoint: app.node.tryGetContext('otelTracesEndpoint') as string | undefined,
  headers: app.node.tryGetContext('otelHeaders') as string | undefined,
};
const model = {
  provider: app.node.tryGetContext('modelProvider') as string | undefined,
  name: app.node.tryGetContext('model') as string | undefined,
  fallback: app.node.tryGetContext('fallbackModel') as string | undefined,
};
for (const base of Object.values(STAGES)) {
  let stage = dockerfile ? { ...base, runner: { ...base.runner, dockerfile } } : base;
  if (egressProxy !== undefined) stage = { ...stage, network: { ...stage.network, egressProxy: egressProxy === true || egressProxy === 'true' } };
  stage = { ...stage, model: withModelContext(stage.model, model) };
  if (domain) stage = { ...stage, api: { ...stage.api, domain } };
  const traces = tracesFromContext(stage.traces, otel.endpoint, otel.headers);
  if (traces) stage = { ...stage, traces };
  if (corsOrigins !== undefined)
    stage = {
      ...stage,
      api: {
        ...stage.api,
        corsOrigins: corsOrigins
          .split(',')
          .map((o) => o.trim())
          .filter(Boolean),
      },
    };
  new StratusStack(app, `Stratus-${stage.name}`, {
    stage,
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
    description: `Stratus cloud coding agent (${stage.name})`,
  });
}
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
