import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { STAGES, type StageConfig } from '../../infra/config/stages.ts';
import { StratusStack } from '../../infra/stratus-stack.ts';

// The built-in CloudFormation validator costs seconds per synth; `npm run synth` runs it strictly.
process.env.CDK_VALIDATION = 'false';

export interface Synthesized {
  stack: StratusStack;
  template: Template;
  /** The logical id of a construct's CloudFormation resource. */
  id(construct: { node: { defaultChild?: unknown } }): string;
}

/** Synthesizes one stage's stack (optionally changed) without bundling (the template is what these tests read). */
export function synthStage(name: StageConfig['name'], change: (stage: StageConfig) => StageConfig = (s) => s): Synthesized {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stage = change(STAGES[name]);
  const stack = new StratusStack(app, `Stratus-${name}`, {
    stage: { ...stage, runner: { ...stage.runner, dockerfile: 'test/infra/fixtures/runner.Dockerfile' } },
    env: { account: '123456789012', region: 'eu-west-1' },
  });
  return {
    stack,
    template: Template.fromStack(stack),
    id: (construct) => stack.getLogicalId(construct.node.defaultChild as never),
  };
}

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown; Principal?: unknown };

/** Every statement of the inline policies attached to a role (by the role's logical id). */
export function statementsOf(template: Template, roleId: string): Statement[] {
  const policies = template.findResources('AWS::IAM::Policy');
  const out: Statement[] = [];
  for (const policy of Object.values(policies)) {
    const roles = (policy.Properties.Roles ?? []) as { Ref?: string }[];
    if (roles.some((r) => r.Ref === roleId)) out.push(...(policy.Properties.PolicyDocument.Statement as Statement[]));
  }
  const role = template.findResources('AWS::IAM::Role')[roleId];
  for (const inline of (role?.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]) {
    out.push(...inline.PolicyDocument.Statement);
  }
  return out;
}

export function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** Resolves the template's intrinsic-function JSON to a stable string for comparisons. */
export function show(value: unknown): string {
  return JSON.stringify(value);
}
