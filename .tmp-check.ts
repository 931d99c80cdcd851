import { readCalls, checkRecordedCalls, summary, failuresOf } from './test/support/iam-coverage/global-setup.ts';
const report = await checkRecordedCalls(readCalls('/tmp/iamx/calls'));
console.log(summary(report)); console.log(failuresOf(report).join('\n'));
