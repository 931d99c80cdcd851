import { performance } from 'node:perf_hooks';
import { startLocalStack } from '../local/stack.ts';
import { launchChromium } from '../test/support/browser.ts';
import { makeTempDir } from '../test/support/temp-dir.ts';

const RUNS = 10;

/**
 * The console's first load: from `page.goto('/console/')` in a fresh browser context (empty cache)
 * to the sign-in form, and the page's own DOMContentLoaded, against the local stack serving the
 * built `dist/console`. Also which scripts the first load fetched: the highlighter chunk must not
 * be among them (it is imported when a file is first opened).
 */
export async function run(): Promise<void> {
  const tmp = makeTempDir('stratus-bench-');
  const stack = await startLocalStack({ dataDir: tmp.dir, brain: () => ({ content: [{ type: 'text', text: 'ok' }] }) });
  const browser = await launchChromium();
  try {
    const walls: number[] = [];
    const dcls: number[] = [];
    let scripts: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const t0 = performance.now();
      await page.goto(`${stack.apiUrl}/console/`);
      await page.getByLabel('API token').waitFor();
      walls.push(performance.now() - t0);
      // Page-side code as text: this project type-checks against Node's globals, not the DOM's.
      dcls.push((await page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")) as number);
      scripts = (await page.evaluate(
        "performance.getEntriesByType('resource').map((e) => e.name.split('/').at(-1)).filter((n) => n.endsWith('.js'))",
      )) as string[];
      await context.close();
    }
    console.log(`runs: ${RUNS}; scripts fetched by the first load: ${scripts.join(', ')}`);
    console.log('| measure | median (ms) | p90 (ms) | max (ms) |');
    console.log('|---|---:|---:|---:|');
    for (const [name, values] of [
      ['goto → sign-in form (wall)', walls],
      ['DOMContentLoaded', dcls],
    ] as const) {
      const sorted = [...values].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
      console.log(`| ${name} | ${at(0.5).toFixed(0)} | ${at(0.9).toFixed(0)} | ${sorted.at(-1)!.toFixed(0)} |`);
    }
  } finally {
    await browser.close();
    await stack.stop();
    tmp.cleanup();
  }
}
