// Exact undo over unsaved buffers: after a restore's documents are saved, put back the unsaved text
// the server lists (`RestoreResult.unsaved`), left unsaved, so the disk keeps its last saved bytes.
import * as vscode from 'vscode';
import { errorText } from './format';
import type { RestoreResult } from './protocol';
import type { RewindServer } from './server';

/** Applies each unsaved text of `result` (not saved); returns the workspace-relative names it brought back. */
export async function restoreUnsavedTexts(server: RewindServer, result: RestoreResult): Promise<string[]> {
  const back: string[] = [];
  const failed = new Set(result.failed ?? []);
  for (const u of result.unsaved ?? []) {
    if (failed.has(u.path) || !u.edit) continue;
    try {
      const edit = await server.asWorkspaceEdit(u.edit);
      if (!edit || !(await vscode.workspace.applyEdit(edit))) {
        server.output.appendLine(`could not bring back the unsaved text of ${u.path}`);
        continue;
      }
      const uri = vscode.Uri.parse(u.uri);
      // A tab the person had closed: show the unsaved text again where it can be seen (and saved).
      if (!vscode.window.visibleTextEditors.some((e) => e.document.uri.toString() === uri.toString())) {
        await vscode.window.showTextDocument(uri, { preview: false, preserveFocus: true });
      }
      back.push(u.path);
    } catch (e) {
      server.output.appendLine(`could not bring back the unsaved text of ${u.path}: ${errorText(e)}`);
    }
  }
  return back;
}
