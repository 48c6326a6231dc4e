// Code lens clicks never write at once: before the extension's restore flow runs, the click shows the
// preview (the files and what happens to each) in a modal and goes on only on "Rewind"/"Revert".
// When the preview has conflicts the restore flow's own conflict dialog is that question instead.
import * as vscode from 'vscode';
import { Methods, type Mode, type PreviewResult, type Scope } from './protocol';
import type { RewindServer } from './server';

const SHOWN = 20;

/** The modal's text for a preview without conflicts (exported for tests of the wording). */
export function lensPreviewText(preview: PreviewResult): { message: string; detail: string } {
  const what =
    preview.mode === 'revert'
      ? `Revert turn #${preview.turn.number}?`
      : `Rewind to the start of turn #${preview.turn.number}?`;
  const changing = preview.files.filter((f) => f.action !== 'unchanged');
  const lines = changing
    .slice(0, SHOWN)
    .map((f) => `${f.action} ${f.path}${f.binary ? '' : ` (+${f.added} -${f.removed})`}`);
  if (changing.length > SHOWN) lines.push(`… and ${changing.length - SHOWN} more`);
  if (preview.scope !== 'code') lines.push('The conversation is forked before the prompt.');
  if (changing.length === 0 && preview.scope === 'code') lines.push('No file changes.');
  lines.push('', 'Undo brings back what is there now.');
  return { message: what, detail: lines.join('\n') };
}

/** True when the restore may go on (the person confirmed, or the flow's conflict dialog will ask). */
export async function confirmLensRestore(
  server: RewindServer,
  turnId: string | undefined,
  scope: Scope,
  mode: Mode,
): Promise<boolean> {
  if (!turnId) return true; // no turn: the flow shows its picker, which is the question
  const preview = await server.request<PreviewResult>(Methods.preview, { turnId, scope, mode });
  if (preview.conflicts > 0) return true;
  const { message, detail } = lensPreviewText(preview);
  const verb = mode === 'revert' ? 'Revert' : 'Rewind';
  return (await vscode.window.showWarningMessage(message, { modal: true, detail }, verb)) === verb;
}
