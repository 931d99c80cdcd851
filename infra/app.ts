import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { STAGES } from './config/stages.ts';
import { StratusStack } from './stratus-stack.ts';

/**
 * One stack per stage (`Stratus-dev`, `Stratus-prod`): synth checks both, deploy picks one by
 * name. cdk-nag's AwsSolutions pack runs on every synth; an unacknowledged finding fails it.
 * `-c runnerDockerfile=path` builds the runner image from another Dockerfile; `-c egressProxy=true`
 * (or `false`) overrides the stages' `network.egressProxy`.
 */
const app = new App();
const dockerfile = app.node.tryGetContext('runnerDockerfile') as string | undefined;
const egressProxy = app.node.tryGetContext('egressProxy') as string | boolean | undefined;
for (const base of Object.values(STAGES)) {
  let stage = dockerfile ? { ...base, runner: { ...base.runner, dockerfile } } : base;
  if (egressProxy !== undefined) stage = { ...stage, network: { ...stage.network, egressProxy: egressProxy === true || egressProxy === 'true' } };
  new StratusStack(app, `Stratus-${stage.name}`, {
    stage,
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
    description: `Stratus cloud coding agent (${stage.name})`,
  });
}
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
