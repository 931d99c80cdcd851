/**
 * The continuation request and its scheduler are a contract of the deps (functions/deps), which
 * must not import the engine; re-exported here for the engine's own imports.
 */
export { asyncEventSchema, continueTurnEventSchema, createLambdaContinuationScheduler, type ContinuationScheduler, type ContinueTurnEvent } from '../deps/continuation.ts';
