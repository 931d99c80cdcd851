import type { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';

/** Prefixes of Bedrock's system-defined cross-region inference profiles (`us.anthropic.claude-...`). */
const PROFILE_PREFIX = /^(us|eu|apac|jp|au|ca|us-gov|global)\.(.+)$/;

/** The foundation models reached through the inference profiles among `modelIds` (granted in every region, through the profile only). */
export function modelsBehindProfiles(modelIds: readonly string[]): string[] {
  return [...new Set(modelIds.flatMap((id) => (id.startsWith('arn:') ? [] : (PROFILE_PREFIX.exec(id)?.slice(2, 3) ?? []))))];
}

/**
 * The statements that let a role stream from exactly the configured Bedrock models: nothing
 * but `bedrock:InvokeModelWithResponseStream` (every model call streams).
 *
 * - A foundation model id (`anthropic.claude-...`): that model in the stack's region.
 * - An inference profile id (`us.anthropic.claude-...`, `global.anthropic.claude-...`): the
 *   profile in the stack's region, plus the underlying model in whichever region the profile
 *   routes to, and only when the request comes through that profile (the
 *   `bedrock:InferenceProfileArn` condition). Global profiles route to region-less model ARNs.
 * - A full ARN (an application inference profile, provisioned throughput): as given; grant
 *   what it routes to yourself (docs/deploy.md).
 */
export function bedrockInvokeStatements(scope: Stack, modelIds: readonly string[]): iam.PolicyStatement[] {
  const direct: string[] = [];
  const viaProfile: string[] = [];
  const profiles: string[] = [];
  const model = (region: string, id: string) => `arn:${scope.partition}:bedrock:${region}::foundation-model/${id}`;
  for (const id of new Set(modelIds)) {
    if (id.startsWith('arn:')) {
      direct.push(id);
      continue;
    }
    const profile = PROFILE_PREFIX.exec(id);
    if (!profile) {
      direct.push(model(scope.region, id));
      continue;
    }
    const profileArn = `arn:${scope.partition}:bedrock:${scope.region}:${scope.account}:inference-profile/${id}`;
    profiles.push(profileArn);
    direct.push(profileArn);
    viaProfile.push(model('*', profile[2]!));
    if (profile[1] === 'global') viaProfile.push(model('', profile[2]!));
  }
  const action = 'bedrock:InvokeModelWithResponseStream';
  const statements = [new iam.PolicyStatement({ actions: [action], resources: direct })];
  if (viaProfile.length > 0) {
    statements.push(
      new iam.PolicyStatement({ actions: [action], resources: viaProfile, conditions: { StringEquals: { 'bedrock:InferenceProfileArn': profiles } } }),
    );
  }
  return statements;
}
