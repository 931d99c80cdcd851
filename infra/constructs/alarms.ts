import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';

/**
 * One alarm per failure signal: any function error and any throttle within five minutes, and
 * any schedule whose target invocation failed. They fire into nothing by default; add an
 * action (SNS, chat) per account — docs/deploy.md shows how.
 */
export class StratusAlarms extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: { prefix: string; functions: Record<string, lambda.IFunction>; scheduleGroup: scheduler.IScheduleGroup }) {
    super(scope, id);
    const period = Duration.minutes(5);
    for (const [name, fn] of Object.entries(props.functions)) {
      this.add(`${name}Errors`, `${props.prefix}-${name}-errors`, fn.metricErrors({ period, statistic: 'Sum' }), `Errors in the ${name} function.`);
      this.add(`${name}Throttles`, `${props.prefix}-${name}-throttles`, fn.metricThrottles({ period, statistic: 'Sum' }), `Throttled invocations of the ${name} function.`);
    }
    this.add('ScheduleTargetErrors', `${props.prefix}-schedule-target-errors`, props.scheduleGroup.metricTargetErrors({ period, statistic: 'Sum' }), 'Scheduled turns whose invocation failed.');
  }

  private add(id: string, alarmName: string, metric: cloudwatch.IMetric, description: string): void {
    this.alarms.push(
      new cloudwatch.Alarm(this, id, {
        alarmName,
        alarmDescription: description,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }
}
