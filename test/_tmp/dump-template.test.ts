import { it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { synthStage } from '../infra/synth-stack.ts';
it('dumps', () => {
  for (const name of ['dev', 'prod'] as const) {
    for (const proxy of [false, true]) {
      const { template } = synthStage(name, (s) => ({ ...s, network: { ...s.network, egressProxy: proxy } }));
      writeFileSync(`${process.env.OUT}-${name}-${proxy}.json`, JSON.stringify(template.toJSON(), null, 1));
    }
  }
}, 300_000);
