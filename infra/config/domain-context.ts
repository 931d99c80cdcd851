import type { StageConfig } from './stages.ts';

/**
 * The custom domain from `-c domainName=a.example.com[,b.example.com] -c certificateArn=…`.
 * Both or neither: a name without a certificate (or the reverse) is a mistake worth stopping the
 * synth for, and CloudFront reads certificates only from us-east-1.
 */
export function domainFromContext(names: string | undefined, certificateArn: string | undefined): StageConfig['api']['domain'] {
  if (!names && !certificateArn) return undefined;
  if (!names || !certificateArn)
    throw new Error('A custom domain needs both -c domainName=<host[,host]> and -c certificateArn=<ACM certificate ARN in us-east-1>.');
  if (!/^arn:aws[\w-]*:acm:us-east-1:\d{12}:certificate\/[\w-]+$/.test(certificateArn)) {
    throw new Error(`-c certificateArn must be an ACM certificate in us-east-1 (CloudFront reads certificates only there); got "${certificateArn}".`);
  }
  return {
    names: names
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
    certificateArn,
  };
}
