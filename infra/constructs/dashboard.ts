import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

export interface DashboardProps {
  prefix: string;
  /** Metrics namespace and stage dimension the functions write (functions/shared/metrics.ts). */
  namespace: string;
  stage: string;
  /** The services that run turns (`service` dimension): the API and cron functions. */
  turnServices: readonly string[];
  functions: Record<string, lambda.IFunction>;
  /** USD per million tokens, for the cost estimate. */
  price: { inputPerMTok: number; outputPerMTok: number };
}

/**
 * The operator's one page, `{prefix}`: turns and failed turns, model latency, tool failures by
 * tool, runner calls and cold syncs, Lambda throttles and errors, and the model's cost per day
 * estimated from the token metrics (every input token at the full input price: cache reads cost
 * less, so the figure is an upper bound).
 */
export class StratusDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const m = metricsOf(props);
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: props.prefix,
      defaultInterval: Duration.days(7),
      widgets: [turnWidgets(props, m), platformWidgets(props, m)],
    });
  }
}

const PERIOD = Duration.minutes(5);
const DAY = Duration.days(1);

/** Metric builders for the stage: one service's metric, and a sum over the services that run turns. */
function metricsOf(props: DashboardProps) {
  const metric = (name: string, service: string, statistic: string, p: Duration = PERIOD, label?: string) =>
    new cloudwatch.Metric({
      namespace: props.namespace,
      metricName: name,
      dimensionsMap: { service, stage: props.stage },
      statistic,
      period: p,
      ...(label ? { label } : {}),
    });
  // Turns run in several functions (API, cron, GitHub worker): add them up.
  const turnSum = (name: string, p: Duration, label: string) =>
    new cloudwatch.MathExpression({
      // Ids unique across nested expressions (the cost sums two of these).
      expression: props.turnServices.map((_, i) => `${name.toLowerCase()}${i}`).join(' + '),
      usingMetrics: Object.fromEntries(props.turnServices.map((service, i) => [`${name.toLowerCase()}${i}`, metric(name, service, 'Sum', p)])),
      period: p,
      label,
    });
  return { metric, turnSum, api: props.turnServices[0]! };
}

type StageMetrics = ReturnType<typeof metricsOf>;

/** Turns, model latency, tool failures by tool. */
function turnWidgets(props: DashboardProps, { metric, turnSum, api }: StageMetrics): cloudwatch.IWidget[] {
  return [
    new cloudwatch.GraphWidget({ title: 'Turns (5 min)', left: [turnSum('Turns', PERIOD, 'turns'), turnSum('TurnFailed', PERIOD, 'failed')], width: 8 }),
    new cloudwatch.GraphWidget({
      title: 'Model call latency (ms)',
      left: [
        metric('ModelCallDuration', api, 'p50', PERIOD, 'call p50'),
        metric('ModelCallDuration', api, 'p90', PERIOD, 'call p90'),
        metric('ModelTimeToFirstEvent', api, 'p50', PERIOD, 'first event p50'),
      ],
      right: [metric('ModelCallErrors', api, 'Sum', PERIOD, 'failed attempts')],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Tool failures by tool (5 min)',
      left: [
        new cloudwatch.MathExpression({
          expression: `SEARCH('{${props.namespace},service,stage,tool} MetricName="ToolFailures" stage="${props.stage}"', 'Sum', 300)`,
          period: PERIOD,
          label: '',
        }),
      ],
      width: 8,
    }),
  ];
}

/** Runner calls, Lambda throttles and errors, the model's cost per day. */
function platformWidgets(props: DashboardProps, { metric, turnSum, api }: StageMetrics): cloudwatch.IWidget[] {
  const tokens = (name: string) => turnSum(name, DAY, name);
  return [
    new cloudwatch.GraphWidget({
      title: 'Runner calls (5 min)',
      left: [metric('RunnerColdSyncs', api, 'Sum', PERIOD, 'cold syncs'), metric('RunnerCallFailures', api, 'Sum', PERIOD, 'failed calls')],
      right: [metric('RunnerCallDuration', api, 'p90', PERIOD, 'duration p90 (ms)')],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Lambda throttles and errors (5 min)',
      left: Object.entries(props.functions).map(([name, fn]) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum', label: `${name} throttles` })),
      right: Object.entries(props.functions).map(([name, fn]) => fn.metricErrors({ period: PERIOD, statistic: 'Sum', label: `${name} errors` })),
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Model cost per day (USD, upper bound)',
      left: [
        new cloudwatch.MathExpression({
          expression: `(i * ${props.price.inputPerMTok} + o * ${props.price.outputPerMTok}) / 1000000`,
          usingMetrics: { i: tokens('InputTokens'), o: tokens('OutputTokens') },
          period: DAY,
          label: 'USD',
        }),
      ],
      width: 8,
    }),
  ];
}
