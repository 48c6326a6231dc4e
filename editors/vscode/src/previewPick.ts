// The preview before every restore (setting rewind.confirmRestore, on by default): the files, each one's
// action and +/- lines, the conflicts with their reason, a diff one key away; nothing is written until
// the person picks "Restore".
import * as vscode from 'vscode';
import { rewindUri } from './contentProvider';
import type { FilePreview } from './protocol';

const ACTION_ICON: Record<string, string> = {
  modify: '$(diff-modified)',
  create: '$(diff-added)',
  delete: '$(diff-removed)',
  unchanged: '$(circle-outline)',
};

interface FileItem extends vscode.QuickPickItem {
  file?: FilePreview;
  go?: boolean;
}

/** Whether restores are previewed first (the setting; default on). */
export function previewEnabled(): boolean {
  return vscode.workspace.getConfiguration('rewind').get<boolean>('confirmRestore', true);
}

/** "+3 -1", "binary", "3 conflict markers" for one file. */
export function fileStat(f: FilePreview): string {
  if (f.binary) return 'binary';
  return `+${f.added} -${f.removed}`;
}

/** The rows of the preview: "Restore" first, then one row per file (conflicts say why). */
export function previewItems(files: FilePreview[], verb: string): FileItem[] {
  const shown = files.filter((f) => f.action !== 'unchanged' || f.conflict);
  const writing = shown.filter((f) => !f.conflict).length;
  const go: FileItem = {
    label: `$(check) ${verb}`,
    description: `${writing} ${writing === 1 ? 'file' : 'files'}; nothing is written before this`,
    go: true,
    alwaysShow: true,
  };
  const rows: FileItem[] = shown.map((f) => ({
    label: `${ACTION_ICON[f.action] ?? ''} ${f.path}`,
    description: `${f.action} ${fileStat(f)}`,
    detail: f.conflict ? `$(warning) ${f.conflict.message}` : undefined,
    file: f,
    buttons: [{ iconPath: new vscode.ThemeIcon('diff'), tooltip: 'Show the change' }],
  }));
  return [go, ...rows];
}

/**
 * Shows the preview; a file row (Enter, or its diff button) opens its diff (`diffOf`) and keeps the
 * preview open. Resolves true when the person picks the restore, false when they dismiss it.
 */
export type DiffOf = (f: FilePreview) => [vscode.Uri, vscode.Uri, string] | undefined;

export function confirmRestore(title: string, verb: string, files: FilePreview[], diffOf: DiffOf): Promise<boolean> {
  return new Promise((resolve) => {
    const pick = vscode.window.createQuickPick<FileItem>();
    pick.title = title;
    pick.placeholder = `Enter on a file shows its change; "${verb}" restores. Esc: nothing is written.`;
    pick.items = previewItems(files, verb);
    pick.matchOnDescription = true;
    pick.ignoreFocusOut = true;
    let done = false;
    const finish = (go: boolean): void => {
      if (done) return;
      done = true;
      pick.hide();
      resolve(go);
    };
    const show = async (f: FilePreview): Promise<void> => {
      const diff = diffOf(f);
      if (!diff) return;
      await vscode.commands.executeCommand('vscode.diff', diff[0], diff[1], diff[2], { preview: true, preserveFocus: true });
    };
    pick.onDidTriggerItemButton((e) => {
      if (e.item.file) void show(e.item.file);
    });
    pick.onDidAccept(() => {
      const item = pick.selectedItems[0];
      if (!item || item.go) return finish(true);
      if (item.file) void show(item.file);
    });
    pick.onDidHide(() => finish(false));
    pick.show();
  });
}

/** A rewind (or an undo: `turnId` a restore point) writes each file's content before the turn: now ↔ that. */
export function rewindDiff(turnId: string): DiffOf {
  return (f) => [
    f.action === 'create' ? rewindUri(turnId, f.uri, 'absent', f.path) : vscode.Uri.parse(f.uri),
    rewindUri(turnId, f.uri, f.action === 'delete' ? 'absent' : 'before', f.path),
    `${f.path}: now ↔ after the restore`,
  ];
}

/** A revert takes the turn's own change out: that change, after ↔ before the turn. */
export function revertDiff(turnId: string, turnNumber: number): DiffOf {
  return (f) => [
    rewindUri(turnId, f.uri, 'after', f.path),
    rewindUri(turnId, f.uri, 'before', f.path),
    `${f.path}: what reverting turn #${turnNumber} takes out`,
  ];
}
