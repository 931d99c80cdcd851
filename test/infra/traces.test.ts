import { beforeAll, describe, expect, it } from 'vitest';
import { tracesFromContext } from '../../infra/config/traces-context.ts';
import { synthStage, type Synthesized } from './synth-stack.ts';

const ENDPOINT = 'https://collector.example.com/v1/traces';

describe("the stage's OpenTelemetry export", () => {
  let off: Synthesized;
  let on: Synthesized;
  beforeAll(() => {
    off = synthStage('dev');
    on = synthStage('prod', (s) => ({ ...s, githubApp: true, traces: { otlpEndpoint: ENDPOINT, otlpHeaders: 'authorization=Bearer abc,x-team=agents' } }));
  });
  const envOf = (s: Synthesized, fn: { node: { defaultChild?: unknown } }) =>
    s.template.findResources('AWS::Lambda::Function')[s.id(fn)]!.Properties.Environment.Variables as Record<string, unknown>;

  it('puts the endpoint and headers on every turn engine (API, cron, GitHub worker), and on nothing else', () => {
    for (const fn of [on.stack.api.fn, on.stack.cron.fn, on.stack.githubWorker!.fn]) {
      expect(envOf(on, fn)).toMatchObject({ STRATUS_OTEL_TRACES_ENDPOINT: ENDPOINT, STRATUS_OTEL_HEADERS: 'authorization=Bearer abc,x-team=agents' });
    }
    expect(Object.keys(envOf(on, on.stack.runner.fn))).not.toContain('STRATUS_OTEL_TRACES_ENDPOINT');
  });

  it('is off unless the stage names an endpoint', () => {
    for (const fn of [off.stack.api.fn, off.stack.cron.fn]) {
      expect(Object.keys(envOf(off, fn)).filter((k) => k.startsWith('STRATUS_OTEL_'))).toEqual([]);
    }
  });

  it('takes -c otelTracesEndpoint / -c otelHeaders over the stage, and stops the synth on a mistake', () => {
    expect(tracesFromContext(undefined, undefined, undefined)).toBeUndefined();
    expect(tracesFromContext({ otlpEndpoint: 'https://a.example/v1/traces' }, ENDPOINT, 'k=v')).toEqual({ otlpEndpoint: ENDPOINT, otlpHeaders: 'k=v' });
    expect(tracesFromContext({ otlpEndpoint: ENDPOINT, otlpHeaders: 'k=v' }, undefined, undefined)).toEqual({ otlpEndpoint: ENDPOINT, otlpHeaders: 'k=v' });
    expect(() => tracesFromContext(undefined, undefined, 'k=v')).toThrow(/needs an endpoint/);
    expect(() => tracesFromContext(undefined, 'collector:4318', undefined)).toThrow(/http\(s\) URL/);
    expect(() => tracesFromContext(undefined, ENDPOINT, 'novalue')).toThrow(/"name=value" pairs/);
  });
});
