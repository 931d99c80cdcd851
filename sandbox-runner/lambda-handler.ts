import { createContainerRunner } from './container-runner.ts';

/** The container-image Lambda's handler (see Dockerfile): the same runner the local stack serves. */
export const handler = createContainerRunner(process.env);
