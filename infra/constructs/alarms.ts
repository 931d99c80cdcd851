import { CfnCondition, CfnParameter, Duration, Fn, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

/**
 * One alarm per failure signal: any function error and any throttle within five minutes, and
 * any schedule whose target invocation failed. Each alarm (and its return to OK) goes to the
 * SNS topic `{prefix}-alarms`; the stack parameter `AlarmEmail`, when not empty, subscribes an
 * address to it (the address confirms once by e-mail).
 */
export class StratusAlarms extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly topic: sns.Topic;

  constructor(scope: Construct, id: string, props: { prefix: string; functions: Record<string, lambda.IFunction>; scheduleGroup: scheduler.IScheduleGroup }) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', { topicName: `${props.prefix}-alarms`, displayName: `Stratus alarms (${props.prefix})`, enforceSSL: true });
    const email = new CfnParameter(Stack.of(this), 'AlarmEmail', {
      type: 'String',
      default: '',
      description: 'An e-mail address that receives every Stratus alarm (empty: none; subscribe anything else to the topic yourself).',
    });
    const hasEmail = new CfnCondition(this, 'HasAlarmEmail', { expression: Fn.conditionNot(Fn.conditionEquals(email.valueAsString, '')) });
    const subscription = new sns.CfnSubscription(this, 'EmailSubscription', { topicArn: this.topic.topicArn, protocol: 'email', endpoint: email.valueAsString });
    subscription.cfnOptions.condition = hasEmail;

    const period = Duration.minutes(5);
    for (const [name, fn] of Object.entries(props.functions)) {
      this.add(`${name}Errors`, `${props.prefix}-${name}-errors`, fn.metricErrors({ period, statistic: 'Sum' }), `Errors in the ${name} function.`);
      this.add(`${name}Throttles`, `${props.prefix}-${name}-throttles`, fn.metricThrottles({ period, statistic: 'Sum' }), `Throttled invocations of the ${name} function.`);
    }
    this.add('ScheduleTargetErrors', `${props.prefix}-schedule-target-errors`, props.scheduleGroup.metricTargetErrors({ period, statistic: 'Sum' }), 'Scheduled turns whose invocation failed.');
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
