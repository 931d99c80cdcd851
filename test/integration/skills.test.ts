import { describe, expect, it } from 'vitest';
import type { MessagesRequest } from '../../local/scripted-model/script.ts';
import { agentCall, firstText } from '../support/agent-requests.ts';
import { text, useRoutedLocalStack } from '../support/stack-fixture.ts';

const skill = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name: 'Skill', input });

const SKILLS = {
  '.claude/skills/review/SKILL.md': '---\nname: review\ndescription: Review the change\nwhen_to_use: before opening a PR\n---\nReview $ARGUMENTS carefully.\n',
  '.claude/skills/private/SKILL.md': '---\ndescription: Only for people\ndisable-model-invocation: true\n---\nSecret steps\n',
  '.claude/skills/notes/README.md': 'not a skill\n',
};

/** The listing as the reference words it (docs/tools.md, "Skill"): the hidden skill and the folder without SKILL.md are not in it. */
const LISTING =
  '<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n- review: Review the change - before opening a PR\n</system-reminder>\n';

function blocks(body: MessagesRequest, index: number): Array<{ type: string; [k: string]: unknown }> {
  const content = body.messages[index]!.content;
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

/** The Skill tool and the skills listing through the API, the turn engine and the runner's `read_skills` op. */
describe('repository skills', () => {
  const { fx, routed } = useRoutedLocalStack();

  it('lists the skills first in the opening block and loads one after its result, refusing unknown and hidden ones', async () => {
    const sessionId = await fx.api.createSession(SKILLS);
    let calls = 0;
    routed.route = () =>
      [
        { content: [skill('toolu_s1', { skill: '/review', args: 'the parser' }), skill('toolu_s2', { skill: 'nope' })] },
        { content: [skill('toolu_s3', { skill: 'private' })] },
        text('Done.'),
      ][calls++];
    expect((await fx.api.turn(sessionId, 'review it')).status).toBe(200);
    const requests = fx.stack.model!.requests.slice(-3);
    const opening = String(blocks(requests[0]!.body, 0)[0]!.text);
    expect(opening.startsWith(`${LISTING}<system-reminder>\n`)).toBe(true);
    const second = blocks(requests[1]!.body, 2);
    expect(second.map((b) => b.type)).toEqual(['tool_result', 'tool_result', 'text']);
    expect(second[0]).toMatchObject({ tool_use_id: 'toolu_s1', content: 'Launching skill: review' });
    expect(second[1]).toMatchObject({ tool_use_id: 'toolu_s2', is_error: true, content: '<tool_use_error>Unknown skill: nope</tool_use_error>' });
    expect(second[2]!.text).toBe('Base directory for this skill: /workspace/.claude/skills/review\n\nReview the parser carefully.\n');
    expect(blocks(requests[2]!.body, 4)[0]).toMatchObject({
      is_error: true,
      content: '<tool_use_error>Skill private cannot be used with Skill tool due to disable-model-invocation</tool_use_error>',
    });
  });

  it('reads the skills again at each turn: one written in a turn is listed and loadable in the next', async () => {
    const sessionId = await fx.api.createSession({ 'README.md': 'hi\n' });
    let calls = 0;
    routed.route = () =>
      [
        {
          content: [
            {
              type: 'tool_use' as const,
              id: 'toolu_w',
              name: 'Write',
              input: { file_path: '/workspace/.claude/skills/new/SKILL.md', content: '# New skill\nDo it.\n' },
            },
          ],
        },
        text('Written.'),
        { content: [skill('toolu_n', { skill: 'new' })] },
        text('Done.'),
      ][calls++];
    await fx.api.turn(sessionId, 'write a skill');
    const before = fx.stack.model!.requests.at(-1)!.body;
    expect(String(blocks(before, 0)[0]!.text)).not.toContain('The following skills are available');
    await fx.api.turn(sessionId, 'use it');
    const after = fx.stack.model!.requests.at(-1)!.body;
    expect(
      String(blocks(after, 0)[0]!.text).startsWith('<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n- new: New skill\n'),
    ).toBe(true);
    expect(JSON.stringify(after.messages.at(-1))).toContain('Base directory for this skill: /workspace/.claude/skills/new\\n\\n# New skill\\nDo it.\\n');
  });

  it('obeys deny rules by skill name and removes the tool for a rule naming it whole', async () => {
    const create = async (deny: string[]) => (await fx.api.request('POST', '/v1/sessions', { files: SKILLS, settings: { rules: { deny } } })).json.id as string;
    const named = await create(['Skill(review)']);
    let calls = 0;
    routed.route = () => [{ content: [skill('toolu_d', { skill: 'review' })] }, text('Done.')][calls++];
    await fx.api.turn(named, 'review');
    const denied = blocks(fx.stack.model!.requests.at(-1)!.body, 2)[0]!;
    expect(denied).toMatchObject({ is_error: true, content: 'Permission to use Skill has been denied.' });
    const whole = await create(['Skill']);
    routed.route = () => text('Nothing to load.');
    await fx.api.turn(whole, 'review');
    expect(fx.stack.model!.requests.at(-1)!.body.tools!.map((t) => t.name)).not.toContain('Skill');
  });

  it('gives a sub-agent the listing and the tool', async () => {
    const sessionId = await fx.api.createSession(SKILLS);
    let parent = 0;
    routed.route = (body) => {
      if (firstText(body) === 'SUB: review')
        return body.messages.length === 1 ? { content: [skill('toolu_sub', { skill: 'review', args: 'x' })] } : text('Reviewed.');
      return [{ content: [agentCall('toolu_agent', { description: 'review', prompt: 'SUB: review', subagent_type: 'general-purpose' })] }, text('Done.')][
        parent++
      ];
    };
    await fx.api.turn(sessionId, 'delegate');
    const sub = fx.stack.model!.requests.filter((r) => firstText(r.body) === 'SUB: review');
    expect(String(blocks(sub[0]!.body, 0)[0]!.text).startsWith(LISTING)).toBe(true);
    expect(JSON.stringify(sub[1]!.body.messages.at(-1))).toContain('Review x carefully.');
  });
});
