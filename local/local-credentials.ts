import { randomBytes } from 'node:crypto';

/** What the local stand-ins (S3, DynamoDB) check every request's signature against. */
export interface LocalCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * The stand-ins' default key, for tests and benchmarks that start one on its own. The access key
 * id is the one s3rver knows. It is a published constant, so anyone can sign with it.
 */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/**
 * The key of one local stack, made when it starts: its own clients (API, runner, scheduler) get
 * it through their config, its stand-ins check it, and nothing else on the machine knows it, so
 * a web page or another program that reaches their ports cannot sign a request (docs/security.md).
 */
export function freshLocalCredentials(): LocalCredentials {
  return { accessKeyId: LOCAL_CREDENTIALS.accessKeyId, secretAccessKey: randomBytes(24).toString('base64url') };
}
