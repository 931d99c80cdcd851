import { CfnCondition, CfnParameter, Duration, Fn, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/**
 * One alarm per failure signal: any function error and any throttle within five minutes, and
 * any schedule whose target invocation failed, and any message in a queue of failed work. Each alarm (and its return to OK) goes to the
 * SNS topic `{prefix}-alarms`; the stack parameter `AlarmEmail`, when not empty, subscribes an
 * address to it (the address confirms once by e-mail); a notification the address cannot be
 * sent is kept in `{prefix}-alarm-delivery-failures` (the subscription's redrive policy).
 */
export class StratusAlarms extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly topic: sns.Topic;
  /** Alarm notifications SNS could not deliver to the e-mail subscription. */
  readonly deliveryFailures: sqs.Queue;

  constructor(
    scope: Construct,
    id: string,
    props: { prefix: string; functions: Record<string, lambda.IFunction>; scheduleGroup: scheduler.IScheduleGroup; failureQueues?: Record<string, sqs.IQueue> },
  ) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', { topicName: `${props.prefix}-alarms`, displayName: `Stratus alarms (${props.prefix})`, enforceSSL: true });
    const email = new CfnParameter(Stack.of(this), 'AlarmEmail', {
      type: 'String',
      default: '',
      description: 'An e-mail address that receives every Stratus alarm (empty: none; subscribe anything else to the topic yourself).',
    });
    const hasEmail = new CfnCondition(this, 'HasAlarmEmail', { expression: Fn.conditionNot(Fn.conditionEquals(email.valueAsString, '')) });
    this.deliveryFailures = this.deliveryFailureQueue(props.prefix);
    const subscription = new sns.CfnSubscription(this, 'EmailSubscription', {
      topicArn: this.topic.topicArn,
      protocol: 'email',
      endpoint: email.valueAsString,
      redrivePolicy: { deadLetterTargetArn: this.deliveryFailures.queueArn },
    });
    subscription.cfnOptions.condition = hasEmail;

    const period = Duration.minutes(5);
    for (const [name, fn] of Object.entries(props.functions)) {
      this.add(`${name}Errors`, `${props.prefix}-${name}-errors`, fn.metricErrors({ period, statistic: 'Sum' }), `Errors in the ${name} function.`);
      this.add(
        `${name}Throttles`,
        `${props.prefix}-${name}-throttles`,
        fn.metricThrottles({ period, statistic: 'Sum' }),
        `Throttled invocations of the ${name} function.`,
      );
    }
    for (const [name, queue] of Object.entries(props.failureQueues ?? {})) {
      this.add(
        `${name}Messages`,
        `${props.prefix}-${name}`,
        queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        `Failed work kept in ${name}: look at it and send it again.`,
      );
    }
    this.add(
      'ScheduleTargetErrors',
      `${props.prefix}-schedule-target-errors`,
      props.scheduleGroup.metricTargetErrors({ period, statistic: 'Sum' }),
      'Scheduled turns whose invocation failed.',
    );
  }

  /** The subscription's dead-letter queue: SNS may send to it for this topic only. */
  private deliveryFailureQueue(prefix: string): sqs.Queue {
    const queue = new sqs.Queue(this, 'DeliveryFailures', {
      queueName: `${prefix}-alarm-delivery-failures`,
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    queue.addToResourcePolicy(
      new iam.PolicyStatement({
        actions: ['sqs:SendMessage'],
        principals: [new iam.ServicePrincipal('sns.amazonaws.com')],
        resources: [queue.queueArn],
        conditions: { ArnEquals: { 'aws:SourceArn': this.topic.topicArn } },
      }),
    );
    return queue;
  }

  private add(id: string, alarmName: string, metric: cloudwatch.IMetric, description: string): void {
    const alarm = new cloudwatch.Alarm(this, id, {
      alarmName,
      alarmDescription: description,
      metric,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const action = new actions.SnsAction(this.topic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms.push(alarm);
  }
}
