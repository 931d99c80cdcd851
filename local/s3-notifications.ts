/**
 * Bucket notifications as S3 sends them to a Lambda function (an asynchronous invoke carrying
 * an `ObjectCreated` record), for the S3 stand-in (s3-server.ts): each rule names a key prefix
 * and suffix, as the CDK app's notification filter does (infra/constructs/egress-forwarder-function.ts),
 * and the function on the local Lambda Invoke server (lambda-invoke-server.ts) that receives them.
 */
export interface S3NotificationRule {
  prefix: string;
  suffix: string;
  /** The local Lambda Invoke API's base URL. */
  lambdaUrl: string;
  functionName: string;
}

/** Invokes every rule's function whose filter matches the created key; a failed delivery is logged, as S3 gives up on one too. */
export function notifyObjectCreated(rules: readonly S3NotificationRule[], bucket: string, key: string): void {
  for (const rule of rules) {
    if (!key.startsWith(rule.prefix) || !key.endsWith(rule.suffix)) continue;
    const event = {
      Records: [
        {
          eventSource: 'aws:s3',
          eventName: 'ObjectCreated:Put',
          // S3 URL-encodes the key in notifications, a space as '+'.
          s3: { bucket: { name: bucket }, object: { key: encodeURIComponent(key).replace(/%2F/g, '/').replace(/%20/g, '+') } },
        },
      ],
    };
    void fetch(`${rule.lambdaUrl}/2015-03-31/functions/${encodeURIComponent(rule.functionName)}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-amz-invocation-type': 'Event' },
      body: JSON.stringify(event),
    }).then(
      (res) => (res.ok ? undefined : logFailure(rule, key, `HTTP ${res.status}`)),
      (err: unknown) => logFailure(rule, key, String(err)),
    );
  }
}

function logFailure(rule: S3NotificationRule, key: string, error: string): void {
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'S3 notification not delivered', function: rule.functionName, key, error })}\n`);
}
