// Review a turn (issue #28): "Rewind: Review Turn..." opens the turn's changes in VS Code's multi-file
// diff editor (before the turn <-> the file now); the right side is the real file, so the server's code
// actions ("Revert this change (turn N: ...)") work on each hunk there. And gutter decorations on the lines
// the latest turn wrote, until the person edits that document (moves on).
import * as vscode from 'vscode';
import type { Commands } from './commands';
import { rewindUri } from './contentProvider';
import { type BlameResult, type ListTurnsResult, Methods, type TurnHunksResult, type TurnInfo } from './protocol';
import type { RewindServer } from './server';

/** The multi-file diff of a turn: [label, before, now] per file it changed. */
export async function reviewTurn(server: RewindServer, cmds: Commands, turn?: TurnInfo): Promise<void> {
  const picked = turn ?? (await cmds.pickTurn('Review Turn (its changes; Ctrl+. on a hunk reverts it)'));
  if (!picked) return;
  const result = await server.request<TurnHunksResult>(Methods.turnHunks, { turnId: picked.id });
  if (result.files.length === 0) {
    void vscode.window.showInformationMessage(`Rewind: turn #${picked.number} changed no file.`);
    return;
  }
  const resources = result.files.map((f): [vscode.Uri, vscode.Uri, vscode.Uri] => {
    const file = vscode.Uri.parse(f.uri);
    const before = rewindUri(picked.id, f.uri, f.change === 'created' ? 'absent' : 'before', f.path);
    const now = f.change === 'deleted' ? rewindUri(picked.id, f.uri, 'absent', f.path) : file;
    return [file, before, now];
  });
  const title = `Turn #${picked.number}: ${picked.prompt.replace(/\s+/g, ' ').slice(0, 60)}`;
  await vscode.commands.executeCommand('vscode.changes', title, resources);
}

/**
 * What a turn changed, like a commit in Source Control: the multi-file diff editor of [before the turn <-> after it]
 * per file, whatever happened since (reviewTurn compares with now). Both sides are read-only rewind: documents.
 */
export async function showTurnChanges(cmds: Commands, turn?: TurnInfo): Promise<void> {
  const picked = turn ?? (await cmds.pickTurn('What a Turn Changed (before <-> after it)'));
  if (!picked) return;
  if (picked.files.length === 0) {
    void vscode.window.showInformationMessage(`Rewind: turn #${picked.number} changed no file.`);
    return;
  }
  const resources = picked.files.map((f): [vscode.Uri, vscode.Uri, vscode.Uri] => [
    vscode.Uri.parse(f.uri),
    rewindUri(picked.id, f.uri, f.change === 'created' ? 'absent' : 'before', f.path),
    rewindUri(picked.id, f.uri, f.change === 'deleted' ? 'absent' : 'after', f.path),
  ]);
  const title = `Turn #${picked.number} changed: ${picked.prompt.replace(/\s+/g, ' ').slice(0, 60)}`;
  await vscode.commands.executeCommand('vscode.changes', title, resources);
}

/** Marks the lines the latest turn of the current session wrote, in every visible editor. */
export class LatestTurnDecorations implements vscode.Disposable {
  private readonly type = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
    borderWidth: '0 0 0 3px',
    borderStyle: 'solid',
    borderColor: new vscode.ThemeColor('editorGutter.modifiedBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.modifiedForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly movedOn = new Set<string>(); // documents edited since: no marks until the next turn
  private latest: string | undefined;
  /** Lines marked per document (for tests and the hover-free check of what is shown). */
  readonly marked = new Map<string, number[]>();

  constructor(
    private readonly server: RewindServer,
    private readonly listTurns: () => Promise<ListTurnsResult>,
  ) {
    this.subscriptions.push(
      vscode.window.onDidChangeVisibleTextEditors(() => void this.refresh()),
      server.onDidChangeTurns(() => void this.refresh(true)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length === 0) return;
        const key = e.document.uri.toString();
        this.movedOn.add(key);
        for (const editor of vscode.window.visibleTextEditors) {
          if (editor.document.uri.toString() === key) editor.setDecorations(this.type, []);
        }
        this.marked.delete(key);
      }),
    );
    void this.refresh(true);
  }

  async refresh(turnsChanged = false): Promise<void> {
    // Marks never start the server (nor race its restart with a request): its start fires
    // onDidChangeTurns, which refreshes them.
    if (!this.server.running) return;
    try {
      if (turnsChanged || this.latest === undefined) {
        const list = await this.listTurns();
        const session = list.sessions.find((s) => s.id === list.currentSessionId);
        const latest = session?.turns[session.turns.length - 1]?.id;
        if (latest !== this.latest) this.movedOn.clear();
        this.latest = latest;
      }
      for (const editor of vscode.window.visibleTextEditors) {
        // Only the workspace's files have authors (settings.json, say, has none).
        if (editor.document.uri.scheme !== 'file' || !vscode.workspace.getWorkspaceFolder(editor.document.uri)) continue;
        await this.decorate(editor);
      }
    } catch {
      // The server may be starting or restarting: the next change of turns refreshes.
    }
  }

  private async decorate(editor: vscode.TextEditor): Promise<void> {
    const key = editor.document.uri.toString();
    if (!this.latest || this.movedOn.has(key)) {
      editor.setDecorations(this.type, []);
      return;
    }
    const blame = await this.server.request<BlameResult>(Methods.blame, { uri: key });
    const ranges: vscode.Range[] = [];
    const lines: number[] = [];
    for (const run of blame.runs) {
      if (run.turnId !== this.latest) continue;
      ranges.push(new vscode.Range(run.start, 0, Math.max(run.start, run.end - 1), 0));
      for (let l = run.start; l < run.end; l++) lines.push(l);
    }
    editor.setDecorations(this.type, ranges);
    this.marked.set(key, lines);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.type.dispose();
  }
}
