// "Rewind: File History": one file's recorded versions (local history: each agent turn's version and each of
// the person's own, edits between turns included), newest first; the picked one is previewed and restored
// (rewind/preview + rewind/restore, mode "version": compare-and-swap, a restore point, so "Undo Last
// Rewind" takes it back). VS Code's Timeline view would be the natural place, but its provider API is still a
// proposed API that a published extension cannot use.
import * as vscode from 'vscode';
import { rewindUri } from './contentProvider';
import { errorText } from './format';
import { confirmRestore, previewEnabled } from './previewPick';
import {
  type FileVersionItem,
  type FileVersionsResult,
  Methods,
  type PreviewResult,
  type RestoreParams,
  type RestoreResult,
} from './protocol';
import type { RewindServer } from './server';

type VersionItem = vscode.QuickPickItem & { version: FileVersionItem };

/** "2026-11-28 12:04  your edit" (UTC, as the server records it). */
export function versionLabel(v: FileVersionItem): string {
  const when = v.time ? v.time.replace('T', ' ').replace(/Z$/, '').slice(0, 16) : 'first seen';
  return `${when}  ${v.source}`;
}

export async function fileHistory(server: RewindServer, uri?: vscode.Uri): Promise<void> {
  const target = uri ?? vscode.window.activeTextEditor?.document.uri;
  if (!target || target.scheme !== 'file') {
    void vscode.window.showInformationMessage('Rewind: open a file to see its history.');
    return;
  }
  let list: FileVersionsResult;
  try {
    list = await server.request<FileVersionsResult>(Methods.fileVersions, { uri: target.toString() });
  } catch (e) {
    void vscode.window.showErrorMessage(`Rewind: ${errorText(e)}`);
    return;
  }
  const items: VersionItem[] = list.versions
    .filter((v) => v.hash !== null && v.kind === 'file')
    .map((v) => ({
      label: versionLabel(v),
      description: (v.hash ?? '').slice(0, 8),
      detail: v.prompt ? v.prompt.replace(/\s+/g, ' ') : undefined,
      version: v,
    }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`Rewind: ${list.path}: no recorded version to restore.`);
    return;
  }
  const pick = await vscode.window.showQuickPick(items, {
    title: `File History: ${list.path}`,
    placeHolder: 'Pick a version to restore (newest first)',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!pick) return;
  await restoreVersion(server, target, list.path, pick.version);
}

async function restoreVersion(server: RewindServer, target: vscode.Uri, path: string, v: FileVersionItem): Promise<void> {
  const hash = v.hash ?? '';
  const title = `Restore ${path} to version ${hash.slice(0, 8)}`;
  const params: RestoreParams = {
    turnId: v.turnId ?? '',
    mode: 'version',
    scope: 'code',
    paths: [target.toString()],
    version: hash,
  };
  try {
    const preview = await server.request<PreviewResult>(Methods.preview, params);
    if (preview.conflicts > 0) {
      const why = preview.files.map((f) => f.conflict?.message).filter(Boolean).join('\n');
      const go = await vscode.window.showWarningMessage(`Rewind: ${title}`, { modal: true, detail: why }, 'Overwrite');
      if (go !== 'Overwrite') return;
      params.force = true;
    } else if (previewEnabled()) {
      const diff = (): [vscode.Uri, vscode.Uri, string] => [
        target,
        rewindUri(v.turnId ?? '', target.toString(), v.side, path),
        `${path}: now ↔ version ${hash.slice(0, 8)}`,
      ];
      if (!(await confirmRestore(title, 'Restore', preview.files, diff))) return;
    }
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.toString());
    const wasDirty = doc?.isDirty ?? false;
    const result = await server.request<RestoreResult>(Methods.restore, params);
    // The text went to the open buffer: saved, as every restore saves the files that were not dirty.
    if (doc && !wasDirty && doc.isDirty) await doc.save();
    const undo = result.restorePointId ? ' (Rewind: Undo Last Rewind takes it back)' : '';
    void vscode.window.showInformationMessage(`Rewind: ${result.message}${undo}`);
  } catch (e) {
    void vscode.window.showErrorMessage(`Rewind: ${title}: ${errorText(e)}`);
  }
}
