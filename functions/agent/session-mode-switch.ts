import type { PermissionContext } from '../permissions/types.ts';
import type { PermissionModeSwitch } from '../tools/tool.ts';
import type { TurnRecorder } from './turn-recorder.ts';

/**
 * The main agent's permission mode as EnterPlanMode and ExitPlanMode change it: the turn's
 * permission context is changed in place (the query loop decides every later call with it), and
 * the session's settings keep the mode, written under the lease, so its next turns (and a resume
 * on another instance) start in it.
 */
export function sessionModeSwitch(permissions: PermissionContext, recorder: Pick<TurnRecorder, 'settings' | 'saveSettings'>): PermissionModeSwitch {
  return {
    plansAwaitApproval: !permissions.unattended || recorder.settings?.planFirst === true,
    current: () => permissions.mode,
    async set(mode) {
      permissions.mode = mode;
      await recorder.saveSettings({ ...recorder.settings, permissionMode: mode });
    },
  };
}
