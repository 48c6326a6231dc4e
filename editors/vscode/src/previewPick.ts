// The preview before every restore (setting rewind.confirmRestore, on by default): the files, each one's
// action and +/- lines, the conflicts with their reason, a diff one key away; nothing is written until
// the person picks "Restore". With conflicts the question is asked inside the same list, shown whatever
// the setting: the whole list with the conflicting files marked, and "Skip Conflicts" / "Overwrite" in
// place of the one restore row (Esc cancels).
import * as vscode from 'vscode';
import { rewindUri } from './contentProvider';
import { conflictPrompt } from './format';
import type { FilePreview, RestoreOptions } from './protocol';

const ACTION_ICON: Record<string, string> = {
  modify: '$(diff-modified)',
  create: '$(diff-added)',
  delete: '$(diff-removed)',
  unchanged: '$(circle-outline)',
};

/** A row of the preview that answers it: what it says, and what the restore then sends. */
export interface PreviewChoice {
  label: string;
  description: string;
  /** The restore's options: {} (no conflict), skipConflicts, force, merge. */
  options: RestoreOptions;
  /** Rewind only these files (URIs) instead, to before the turn. */
  rewindPaths?: string[];
}

interface FileItem extends vscode.QuickPickItem {
  file?: FilePreview;
  go?: PreviewChoice;
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

const files_ = (n: number): string => `${n} ${n === 1 ? 'file' : 'files'}`;

/**
 * The rows of the preview: "Restore" first (with conflicts: "Skip Conflicts" and "Overwrite"), then one row
 * per file, every file of the restore, the conflicting ones marked with their reason.
 */
export function previewItems(files: FilePreview[], verb: string, given?: PreviewChoice[]): FileItem[] {
  const shown = files.filter((f) => f.action !== 'unchanged' || f.conflict);
  const choices = given ?? defaultChoices(files, verb);
  const rows0: FileItem[] = choices.map((c, i) => ({
    label: `${i === 0 ? '$(check)' : '$(warning)'} ${c.label}`,
    description: c.description,
    go: c,
    alwaysShow: true,
  }));
  const rows: FileItem[] = shown.map((f) => ({
    label: `${f.conflict ? '$(warning)' : (ACTION_ICON[f.action] ?? '')} ${f.path}`,
    description: `${f.conflict ? 'conflict: ' : ''}${f.action} ${fileStat(f)}`,
    detail: f.conflict ? `$(warning) ${f.conflict.message}` : undefined,
    file: f,
    buttons: [{ iconPath: new vscode.ThemeIcon('diff'), tooltip: 'Show the change' }],
  }));
  return [...rows0, ...rows];
}

/** The answers of a preview: the restore itself, or with conflicts Skip Conflicts (when other files are left) and Overwrite. */
function defaultChoices(files: FilePreview[], verb: string): PreviewChoice[] {
  const shown = files.filter((f) => f.action !== 'unchanged' || f.conflict);
  const conflicts = shown.filter((f) => f.conflict).length;
  const writing = shown.length - conflicts;
  if (conflicts === 0) {
    return [{ label: verb, description: `${files_(writing)}; nothing is written before this`, options: {} }];
  }
  const choices: PreviewChoice[] = [];
  if (writing > 0) {
    choices.push({
      label: 'Skip Conflicts',
      description: `${verb} the other ${files_(writing)}, leave the ${files_(conflicts)} marked $(warning) as they are`,
      options: { skipConflicts: true },
    });
  }
  const them = conflicts === 1 ? 'it' : 'them';
  choices.push({
    label: 'Overwrite',
    description: `${verb} all ${files_(shown.length)}, over the ${conflicts === 1 ? 'conflict' : 'conflicts'} too (Undo Last Rewind brings ${them} back)`,
    options: { force: true },
  });
  return choices;
}

export type DiffOf = (f: FilePreview) => [vscode.Uri, vscode.Uri, string] | undefined;

/**
 * Shows the preview; a file row (Enter, or its diff button) opens its diff (`diffOf`) and keeps the
 * preview open. Resolves with the options of the row picked ({} when there is no conflict; skipConflicts or
 * force when there are), undefined when the person dismisses it. `what` names the restore in the conflict
 * question ("Undoing the last rewind would overwrite 1 file changed since…").
 */
export function confirmRestore(
  title: string,
  verb: string,
  files: FilePreview[],
  diffOf: DiffOf,
  what = title,
  choices?: PreviewChoice[],
  question?: string,
): Promise<PreviewChoice | undefined> {
  return new Promise((resolve) => {
    const pick = vscode.window.createQuickPick<FileItem>();
    const conflicts = files.some((f) => f.conflict);
    pick.title = question ?? (conflicts ? conflictPrompt(files, what).message : title);
    pick.placeholder = conflicts
      ? 'Enter on a file shows its change; the first rows answer. Esc: nothing is written.'
      : `Enter on a file shows its change; "${verb}" restores. Esc: nothing is written.`;
    pick.items = previewItems(files, verb, choices);
    pick.matchOnDescription = true;
    pick.ignoreFocusOut = true;
    let done = false;
    const finish = (go: PreviewChoice | undefined): void => {
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
      if (item?.go) return finish(item.go);
      if (item?.file) void show(item.file);
    });
    pick.onDidHide(() => finish(undefined));
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
