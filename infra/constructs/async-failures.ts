import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/**
 * Where an asynchronous invocation that failed goes instead of vanishing into a log line: turn
 * continuations, `purge_session` and sub-agent runs (the API function invoking itself) and
 * GitHub work (the worker). Lambda sends each failed event, with its error, to this queue
 * (an on-failure destination, kept 14 days); an alarm fires on the first message. The event is
 * there to be looked at and sent again: every async handler is safe to run twice.
 */
export class AsyncFailures extends Construct {
  readonly queue: sqs.Queue;

  constructor(scope: Construct, id: string, props: { prefix: string }) {
    super(scope, id);
    this.queue = new sqs.Queue(this, 'Queue', {
      queueName: `${props.prefix}-async-failures`,
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
  }

  /** Sends the function's failed asynchronous invocations here; never retried blindly (a turn or a run may have had effects). */
  catchFailuresOf(fn: lambda.Function): void {
    fn.configureAsyncInvoke({ retryAttempts: 0, onFailure: new destinations.SqsDestination(this.queue) });
  }

  /**
   * The function serving the admin's redrive (functions/redrive/): it reads the queue (a message
   * held while it is worked on, released or deleted after), with the queue's URL in its environment.
   */
  allowRedriveBy(fn: lambda.Function): void {
    fn.addEnvironment('STRATUS_ASYNC_FAILURES_QUEUE_URL', this.queue.queueUrl);
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility'],
        resources: [this.queue.queueArn],
      }),
    );
  }
}
