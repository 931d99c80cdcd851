import { beforeAll, describe, expect, it } from 'vitest';
import { TABLES, TTL_ATTRIBUTE } from '../../functions/stores/tables.ts';
import { synthStage, type Synthesized } from './synth-stack.ts';

describe('GitHub issue fixing in AWS', () => {
  let s: Synthesized;
  let fns: Record<string, Record<string, any>>;

  beforeAll(() => {
    s = synthStage('prod', (stage) => ({ ...stage, githubApp: true }));
    fns = s.template.findResources('AWS::Lambda::Function');
  });

  it("serves the webhook on the API function's one Function URL (the route needs no IAM auth: deliveries are signed)", () => {
    const urls = Object.values(s.template.findResources('AWS::Lambda::Url'));
    expect(urls).toHaveLength(1);
    expect(urls[0]!.Properties).toMatchObject({
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
      TargetFunctionArn: { 'Fn::GetAtt': [s.id(s.stack.api.fn), 'Arn'] },
    });
    const api = fns[s.id(s.stack.api.fn)]!.Properties.Environment.Variables;
    expect(api.STRATUS_GITHUB_WEBHOOK_SECRET_ARN).toEqual({ Ref: s.id(s.stack.secrets.githubWebhookSecret!) });
    expect(api.STRATUS_GITHUB_WORKER_FUNCTION).toBe('stratus-prod-github-worker');
    expect(api.STRATUS_GITHUB_APP_KEY_SECRET).toBeUndefined();
  });

  it('runs triggers in a worker function invoked asynchronously, without retries, that alone has the App key', () => {
    const worker = fns[s.id(s.stack.githubWorker!.fn)]!.Properties;
    expect(worker).toMatchObject({ FunctionName: 'stratus-prod-github-worker', Runtime: 'nodejs24.x', Timeout: 900 });
    expect(worker.Environment.Variables.STRATUS_GITHUB_APP_KEY_SECRET).toEqual({ Ref: s.id(s.stack.secrets.githubAppPrivateKey!) });
    expect(worker.Environment.Variables.STRATUS_GITHUB_WEBHOOK_SECRET_ARN).toBeUndefined();
    const configs = Object.values(s.template.findResources('AWS::Lambda::EventInvokeConfig')).map((c) => c.Properties);
    expect(configs).toContainEqual(expect.objectContaining({ FunctionName: { Ref: s.id(s.stack.githubWorker!.fn) }, MaximumRetryAttempts: 0 }));
  });

  it('keeps delivery records in their own table, keyed by the delivery id, expiring by TTL', () => {
    const table = s.template.findResources('AWS::DynamoDB::GlobalTable')[s.id(s.stack.data.tables.githubDeliveries)]!.Properties;
    expect(table.TableName).toBe('stratus-prod-githubDeliveries');
    expect(table.KeySchema).toEqual([{ AttributeName: TABLES.githubDeliveries.partitionKey.name, KeyType: 'HASH' }]);
    expect(table.KeySchema[0].AttributeName).toBe('deliveryId');
    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: TTL_ATTRIBUTE, Enabled: true });
  });

  it('hands the worker the App id and API root of the stage', () => {
    const withApp = synthStage('dev', (stage) => ({
      ...stage,
      githubApp: true,
      github: { ...stage.github, appId: '123456', apiUrl: 'https://ghe.example.com/api/v3' },
    }));
    const worker = withApp.template.findResources('AWS::Lambda::Function')[withApp.id(withApp.stack.githubWorker!.fn)]!.Properties.Environment.Variables;
    expect(worker).toMatchObject({ STRATUS_GITHUB_APP_ID: '123456', STRATUS_GITHUB_API_URL: 'https://ghe.example.com/api/v3' });
  });
});
