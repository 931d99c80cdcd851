import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';

export interface SchedulesProps {
  readonly groupName: string;
  /** The function every schedule targets. */
  readonly cronFunction: lambda.IFunction;
}

/**
 * Where schedules created through the API live: one EventBridge Scheduler group, and the role
 * Scheduler assumes to invoke the cron function (and nothing else). The API creates schedules
 * in this group only, passing this role only.
 */
export class Schedules extends Construct {
  readonly group: scheduler.ScheduleGroup;
  readonly schedulerRole: iam.Role;
  /** ARN pattern of every schedule in the group. */
  readonly scheduleArns: string;

  constructor(scope: Construct, id: string, props: SchedulesProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.group = new scheduler.ScheduleGroup(this, 'Group', { scheduleGroupName: props.groupName });
    this.scheduleArns = stack.formatArn({ service: 'scheduler', resource: 'schedule', resourceName: `${props.groupName}/*` });
    this.schedulerRole = new iam.Role(this, 'SchedulerRole', {
      description: 'Assumed by EventBridge Scheduler to invoke the Stratus cron function.',
      // Only schedules of this account, in this group, may use the role (confused-deputy guard).
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: { 'aws:SourceArn': this.scheduleArns },
        },
      }),
    });
    this.schedulerRole.addToPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.cronFunction.functionArn] }));
  }

  /** Lets a role create, change, read and delete schedules in the group, handing Scheduler this role. */
  allowManageBy(role: iam.IRole): void {
    const actions = ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule', 'scheduler:GetSchedule'];
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [this.scheduleArns] }));
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.schedulerRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
  }
}
