import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { domainFromContext } from '../../infra/config/domain-context.ts';
import { synthStage, type Synthesized } from './synth-stack.ts';

const CERTIFICATE = 'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666';
const withDomain = (githubApp: boolean) =>
  synthStage('prod', (s) => ({
    ...s,
    githubApp,
    github: { ...s.github, appId: '12345' },
    api: { ...s.api, domain: { names: ['agents.example.com'], certificateArn: CERTIFICATE } },
  }));

describe('the optional custom domain: CloudFront with origin access control in front of the streaming Function URL', () => {
  let plain: Synthesized;
  let domain: Synthesized;
  let domainWithGithub: Synthesized;
  beforeAll(() => {
    plain = synthStage('prod');
    domain = withDomain(false);
    domainWithGithub = withDomain(true);
  });

  it('creates no distribution and keeps the public URL when the stage has no domain', () => {
    plain.template.resourceCountIs('AWS::CloudFront::Distribution', 0);
    plain.template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 0);
    plain.template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'NONE', InvokeMode: 'RESPONSE_STREAM' });
  });

  it('puts CloudFront in front, signing every origin request, with nothing cached and the certificate given', () => {
    domain.template.resourceCountIs('AWS::CloudFront::Distribution', 1);
    domain.template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: { OriginAccessControlOriginType: 'lambda', SigningBehavior: 'always', SigningProtocol: 'sigv4' },
    });
    const [distribution] = Object.values(domain.template.findResources('AWS::CloudFront::Distribution'));
    const config = distribution!.Properties.DistributionConfig;
    expect(config.Aliases).toEqual(['agents.example.com']);
    expect(config.ViewerCertificate).toMatchObject({ AcmCertificateArn: CERTIFICATE, MinimumProtocolVersion: 'TLSv1.2_2021', SslSupportMethod: 'sni-only' });
    expect(config.Origins[0].OriginAccessControlId).toBeDefined();
    expect(config.Origins[0].CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: 'https-only', OriginReadTimeout: 60 });
    const behavior = config.DefaultCacheBehavior;
    // Managed policies: CachingDisabled, AllViewerExceptHostHeader.
    expect(behavior.CachePolicyId).toBe('4135ea2d-6df8-44a3-9df3-4b5a84be39ad');
    expect(behavior.OriginRequestPolicyId).toBe('b689b0a8-53d0-40ab-baf2-68738e2966ac');
    expect(behavior.AllowedMethods).toEqual(expect.arrayContaining(['POST', 'PUT', 'PATCH', 'DELETE']));
    expect(behavior.ViewerProtocolPolicy).toBe('https-only');
    expect(behavior.FunctionAssociations).toHaveLength(1);
  });

  it('closes the Function URL to everyone but the distribution', () => {
    domain.template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'AWS_IAM', InvokeMode: 'RESPONSE_STREAM' });
    const permissions = Object.values(domain.template.findResources('AWS::Lambda::Permission')).map((p) => p.Properties);
    const fromCloudFront = permissions.filter((p) => p.Principal === 'cloudfront.amazonaws.com');
    expect(fromCloudFront.map((p) => p.Action).sort()).toEqual(['lambda:InvokeFunction', 'lambda:InvokeFunctionUrl']);
    for (const p of fromCloudFront) expect(JSON.stringify(p.SourceArn)).toContain(':distribution/');
    // No public invoke permission on the API function itself.
    expect(permissions.filter((p) => p.Principal === '*' && p.FunctionUrlAuthType === 'NONE')).toHaveLength(0);
    expect(domain.template.findOutputs('ApiUrl').ApiUrl!.Value).toBe('https://agents.example.com/');
    expect(domain.template.findOutputs('GithubWebhookUrl')).toEqual({});
  });

  it('moves the bearer token out of the header the signature replaces, in a viewer-request function', () => {
    const [fn] = Object.values(domain.template.findResources('AWS::CloudFront::Function'));
    expect(fn!.Properties.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
    const code = fn!.Properties.FunctionCode as string;
    // Evaluate the function's source as CloudFront would, on a request with and without a token.
    const handler = new Function(`${code}; return handler;`)() as (e: unknown) => { headers: Record<string, { value: string }> };
    expect(handler({ request: { headers: { authorization: { value: 'Bearer t0k' } } } }).headers['x-stratus-authorization']).toEqual({ value: 'Bearer t0k' });
    expect(handler({ request: { headers: { 'x-stratus-authorization': { value: 'Bearer forged' } } } }).headers['x-stratus-authorization']).toBeUndefined();
  });

  it('gives GitHub a public URL of its own on the webhook alias when issue fixing is on', () => {
    const urls = Object.values(domainWithGithub.template.findResources('AWS::Lambda::Url')).map((u) => u.Properties);
    expect(urls.map((u) => u.AuthType).sort()).toEqual(['AWS_IAM', 'NONE']);
    const publicUrl = urls.find((u) => u.AuthType === 'NONE')!;
    expect(publicUrl.Qualifier).toBeDefined();
    domainWithGithub.template.hasResourceProperties('AWS::Lambda::Alias', { Name: 'webhook' });
    expect(JSON.stringify(domainWithGithub.template.findOutputs('GithubWebhookUrl'))).toContain('v1/github/webhook');
  });

  it("tells the GitHub worker the console's address on the domain, so progress comments link to it", () => {
    domainWithGithub.template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'stratus-prod-github-worker',
      Environment: { Variables: Match.objectLike({ STRATUS_CONSOLE_URL: 'https://agents.example.com/console/' }) },
    });
  });

  it('stops a synth that names a domain without a us-east-1 certificate', () => {
    expect(() => domainFromContext('agents.example.com', undefined)).toThrow(/both -c domainName/);
    expect(() => domainFromContext(undefined, CERTIFICATE)).toThrow(/both -c domainName/);
    expect(() => domainFromContext('a.example.com', CERTIFICATE.replace('us-east-1', 'eu-west-1'))).toThrow(/us-east-1/);
    expect(domainFromContext('a.example.com, b.example.com', CERTIFICATE)).toEqual({ names: ['a.example.com', 'b.example.com'], certificateArn: CERTIFICATE });
    expect(domainFromContext(undefined, undefined)).toBeUndefined();
  });
});
