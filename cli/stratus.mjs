#!/usr/bin/env node
// `npx stratus …` from the repository: the CLI is TypeScript, run through tsx like the rest of the repo.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
