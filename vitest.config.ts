import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Records every AWS call the local stacks make and judges each against the synthesized roles after the run (docs/local-stack.md).
    globalSetup: ['test/support/iam-coverage/global-setup.ts'],
    // The check synthesizes the stack once (seconds on a busy machine).
    teardownTimeout: 180_000,
    // Integration tests boot real local servers and spawn sandboxed shells; the machine has 2 cores.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
