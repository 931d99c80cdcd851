import { beforeAll, describe, expect, it } from 'vitest';
import { withModelContext } from '../../infra/config/model-context.ts';
import { DEFAULT_MODELS } from '../../functions/model/model-names.ts';
import { actionsOf, statementsOf, synthStage, type Synthesized } from './synth-stack.ts';

const partition = { Ref: 'AWS::Partition' };
const arn = (rest: string) => ({ 'Fn::Join': ['', ['arn:', partition, rest]] });

describe('the model provider in the stack', () => {
  let anthropic: Synthesized;
  let bedrock: Synthesized;
  beforeAll(() => {
    anthropic = synthStage('dev');
    bedrock = synthStage('prod', (s) => ({
      ...s,
      model: { provider: 'bedrock', name: 'global.anthropic.claude-sonnet-5-5', fallback: 'anthropic.claude-haiku-5-0' },
    }));
  });
  const envOf = (s: Synthesized, fn: { node: { defaultChild?: unknown } }) =>
    s.template.findResources('AWS::Lambda::Function')[s.id(fn)]!.Properties.Environment.Variables as Record<string, unknown>;
  const bedrockStatements = (s: Synthesized, role: { node: { defaultChild?: unknown } }) =>
    statementsOf(s.template, s.id(role)).filter((st) => actionsOf(st).some((a) => a.startsWith('bedrock:')));

  it('with Bedrock, lets both turn functions stream from exactly the configured profile and model, nothing else', () => {
    const profile = arn(':bedrock:eu-west-1:123456789012:inference-profile/global.anthropic.claude-sonnet-5-5');
    for (const engine of [bedrock.stack.api, bedrock.stack.cron]) {
      expect(bedrockStatements(bedrock, engine.role)).toEqual([
        {
          Effect: 'Allow',
          Action: 'bedrock:InvokeModelWithResponseStream',
          Resource: [profile, arn(':bedrock:eu-west-1::foundation-model/anthropic.claude-haiku-5-0')],
        },
        {
          // The model behind the global profile, in whichever region it routes to, only through that profile.
          Effect: 'Allow',
          Action: 'bedrock:InvokeModelWithResponseStream',
          Resource: [arn(':bedrock:*::foundation-model/anthropic.claude-sonnet-5-5'), arn(':bedrock:::foundation-model/anthropic.claude-sonnet-5-5')],
          Condition: { StringEquals: { 'bedrock:InferenceProfileArn': [profile] } },
        },
      ]);
    }
    expect(bedrockStatements(bedrock, bedrock.stack.runner.role)).toEqual([]);
  });

  it('with Bedrock, creates no Anthropic key secret and tells the functions the provider and models', () => {
    const names = Object.values(bedrock.template.findResources('AWS::SecretsManager::Secret')).map((r) => r.Properties.Name);
    expect(names).not.toContain('stratus-prod/anthropic-api-key');
    expect(names).toContain('stratus-prod/api-tokens');
    expect(bedrock.stack.secrets.anthropicApiKey).toBeUndefined();
    for (const fn of [bedrock.stack.api.fn, bedrock.stack.cron.fn]) {
      const env = envOf(bedrock, fn);
      expect(env).toMatchObject({
        STRATUS_MODEL_PROVIDER: 'bedrock',
        STRATUS_MODEL: 'global.anthropic.claude-sonnet-5-5',
        STRATUS_FALLBACK_MODEL: 'anthropic.claude-haiku-5-0',
      });
      expect(env).not.toHaveProperty('STRATUS_ANTHROPIC_KEY_SECRET');
    }
    expect(Object.keys(bedrock.template.findOutputs('*'))).not.toContain('AnthropicKeySecret');
  });

  it('with the Anthropic API, keeps the key secret, grants no Bedrock action, and uses the one default model', () => {
    expect(bedrockStatements(anthropic, anthropic.stack.api.role)).toEqual([]);
    expect(bedrockStatements(anthropic, anthropic.stack.cron.role)).toEqual([]);
    expect(envOf(anthropic, anthropic.stack.api.fn)).toMatchObject({ STRATUS_MODEL_PROVIDER: 'anthropic', STRATUS_MODEL: DEFAULT_MODELS.anthropic });
    expect(envOf(anthropic, anthropic.stack.api.fn)).not.toHaveProperty('STRATUS_FALLBACK_MODEL');
    expect(anthropic.stack.secrets.anthropicApiKey).toBeDefined();
  });
});

describe('the model from CDK context (-c modelProvider / model / fallbackModel)', () => {
  const stage = { provider: 'anthropic' as const, name: 'claude-x', fallback: 'claude-y' };
  it('changes the model without a code edit, and a provider switch takes that provider’s default', () => {
    expect(withModelContext(stage, {})).toEqual(stage);
    expect(withModelContext(stage, { name: 'claude-z' })).toEqual({ ...stage, name: 'claude-z' });
    expect(withModelContext(stage, { provider: 'bedrock' })).toEqual({ provider: 'bedrock', name: DEFAULT_MODELS.bedrock });
    expect(withModelContext(stage, { provider: 'bedrock', name: 'us.anthropic.m', fallback: 'us.anthropic.f' })).toEqual({
      provider: 'bedrock',
      name: 'us.anthropic.m',
      fallback: 'us.anthropic.f',
    });
  });
  it('refuses an unknown provider by name', () => {
    expect(() => withModelContext(stage, { provider: 'vertex' })).toThrow(/modelProvider must be one of anthropic, bedrock; got "vertex"/);
  });
});
