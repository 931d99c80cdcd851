import { Duration } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { FORWARDED_AUTHORIZATION_HEADER } from '../../functions/api/auth-header.ts';

export interface CustomDomainProps {
  /** The API's streaming Function URL; it must use `AWS_IAM` auth so only this distribution can call it. */
  readonly functionUrl: lambda.FunctionUrl;
  /** Host names the certificate covers, e.g. `agents.example.com`. */
  readonly domainNames: readonly string[];
  /** An ACM certificate in us-east-1 (CloudFront only reads certificates from there). */
  readonly certificateArn: string;
  readonly prefix: string;
}

/**
 * CloudFront in front of the API's Function URL, reached only through the distribution
 * (origin access control signs every origin request with SigV4; the URL itself refuses unsigned
 * callers). Nothing is cached: every response is per-tenant. Response streaming passes through,
 * so SSE turn streams arrive as they are written; the heartbeats every 15 s keep each stream
 * inside the origin read timeout (the time CloudFront waits between two packets).
 *
 * The signature takes the `Authorization` header, which is where clients put their bearer
 * token, so a viewer-request function copies it to `x-stratus-authorization` first and the API
 * reads the token from there (functions/api/auth-header.ts).
 */
export class CustomDomain extends Construct {
  readonly distribution: cloudfront.Distribution;

  constructor(scope: Construct, id: string, props: CustomDomainProps) {
    super(scope, id);
    const keepToken = new cloudfront.Function(this, 'KeepBearerToken', {
      functionName: `${props.prefix}-keep-bearer-token`,
      comment: 'Copies the bearer token out of Authorization, which origin access control replaces with its signature.',
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(copyAuthorizationFunction(FORWARDED_AUTHORIZATION_HEADER)),
    });
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: `${props.prefix} API`,
      domainNames: [...props.domainNames],
      certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', props.certificateArn),
      minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      defaultBehavior: {
        origin: origins.FunctionUrlOrigin.withOriginAccessControl(props.functionUrl, {
          // Between two packets of a response; SSE heartbeats come every 15 s.
          readTimeout: Duration.seconds(60),
          keepaliveTimeout: Duration.seconds(60),
        }),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        // Every viewer header but Host (the Function URL must see its own host name).
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        compress: false,
        functionAssociations: [{ function: keepToken, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
      },
    });
  }
}

/** The viewer-request function's source (cloudfront-js-2.0). */
function copyAuthorizationFunction(header: string): string {
  return [
    'function handler(event) {',
    '  var request = event.request;',
    '  var authorization = request.headers.authorization;',
    `  delete request.headers['${header}'];`,
    `  if (authorization) request.headers['${header}'] = { value: authorization.value };`,
    '  return request;',
    '}',
  ].join('\n');
}
