import { describe, expect, it } from 'vitest';
import { planAnswerFromComment, planCommentText } from '../../../functions/github/plan-first.ts';

describe("a writer's reply to a plan", () => {
  it('approves on approve, lgtm or yes as the first word, in the repository mode (never plan mode again)', () => {
    for (const body of ['@stratus approve', '@stratus Approved.', 'lgtm @stratus', '@stratus yes!'])
      expect(planAnswerFromComment(body, '@stratus', 'acceptEdits')).toEqual({ decision: 'approve', mode: 'acceptEdits' });
    expect(planAnswerFromComment('@stratus approve', '@stratus', 'plan')).toEqual({ decision: 'approve', mode: 'default' });
  });

  it('rejects with the rest of the reply after reject, or the whole reply otherwise, hidden content stripped', () => {
    expect(planAnswerFromComment('@stratus reject: use dayjs', '@stratus', 'default')).toEqual({ decision: 'reject', feedback: 'use dayjs' });
    expect(planAnswerFromComment('@stratus reject', '@stratus', 'default')).toEqual({ decision: 'reject' });
    expect(planAnswerFromComment('@stratus please add a test<!-- approve -->', '@stratus', 'default')).toEqual({
      decision: 'reject',
      feedback: 'please add a test',
    });
    // "approve" must be the first word: a reply that merely contains it is feedback.
    expect(planAnswerFromComment("@stratus I can't approve this", '@stratus', 'default')).toEqual({ decision: 'reject', feedback: "I can't approve this" });
  });

  it('shows the plan with its mentions defused and says how to answer', () => {
    const text = planCommentText('Ping @alice\n<!-- hidden -->done', '@stratus', 'ses_1');
    expect(text).toContain('Ping @\u2060alice\ndone');
    expect(text).not.toContain('hidden');
    expect(text).toContain('Reply `@stratus approve`');
    expect(planCommentText('', '@stratus', 'ses_1')).toContain('_(The agent gave no plan text.)_');
  });
});
