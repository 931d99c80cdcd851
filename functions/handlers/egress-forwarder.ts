import type { S3Client } from '@aws-sdk/client-s3';
import { forwardEgressRequest, type EgressForwarderDeps } from '../outbound/egress-forwarder.ts';
import { createOutboundFetch } from '../outbound/outbound-fetch.ts';
import { createOutboundPolicy } from '../outbound/outbound-policy.ts';
import { once } from './once.ts';

/** The largest response the forwarder relays (a big package tarball fits; the function has 1 GB). */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

/** The part of an S3 notification the forwarder reads. */
interface S3NotificationEvent {
  Records?: { s3: { bucket: { name: string }; object: { key: string } } }[];
}

/**
 * The egress forwarder's Lambda handler (outside any VPC): each S3 notification names request
 * objects of the egress mailbox; each is forwarded and answered (functions/outbound/egress-forwarder.ts).
 * Its composition root: STRATUS_BUCKET names the bucket, the outbound policy allows public
 * addresses only and never Lambda's runtime API on the function's loopback. It reads no secret.
 */
export function createEgressForwarderHandler(env: NodeJS.ProcessEnv, deps: Partial<EgressForwarderDeps> = {}) {
  const bucket = env.STRATUS_BUCKET;
  if (!bucket) throw new Error('STRATUS_BUCKET is not set; the CDK app sets it on the egress forwarder.');
  const policy = createOutboundPolicy({ privateNetworkAllow: [], ownEndpoints: env.AWS_LAMBDA_RUNTIME_API ? [env.AWS_LAMBDA_RUNTIME_API] : [] });
  const s3 = once(async (): Promise<S3Client> => {
    const { S3Client } = await import('@aws-sdk/client-s3');
    return new S3Client({ region: env.AWS_REGION || 'us-east-1' });
  });
  const forwarder: EgressForwarderDeps = { s3, bucket, fetch: createOutboundFetch(policy, { maxResponseBytes: MAX_RESPONSE_BYTES }), clock: Date.now, ...deps };
  return async (event: S3NotificationEvent): Promise<void> => {
    for (const record of event.Records ?? []) {
      if (record.s3.bucket.name !== forwarder.bucket) continue;
      // S3 notifications URL-encode keys, with '+' for a space.
      const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, ' '));
      const decision = await forwardEgressRequest(forwarder, key);
      process.stdout.write(`${JSON.stringify({ level: decision.kind === 'refused' ? 'warn' : 'info', msg: 'egress', ...decision })}\n`);
    }
  };
}

let created: ReturnType<typeof createEgressForwarderHandler> | undefined;

/** Built on the first event, once per container. */
export const handler = (event: S3NotificationEvent) => (created ??= createEgressForwarderHandler(process.env))(event);
