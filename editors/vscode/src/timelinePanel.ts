// "Rewind: Show Timeline Picture": the session as a picture in a webview (turns left to right, files top to bottom,
// each change coloured by who made it), the same page `rewind-ls timeline --html` writes, made by the server
// (rewind/timelinePage) with this webview's script nonce. A click on a cell opens that file's diff in that turn
// (before <-> after it); a click on a turn's number offers what to do with the turn (what it changed, open the
// workspace at it, rewind, revert). Refreshed when turns are recorded.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { Commands } from './commands';
import { rewindUri } from './contentProvider';
import { errorText } from './format';
import { Methods, type TimelinePageResult, type TurnInfo } from './protocol';
import { showTurnChanges } from './review';
import type { RewindServer } from './server';

interface CellMessage {
  type: 'cell' | 'turn';
  turnId: string;
  path?: string;
}

export class TimelinePanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private readonly subs: vscode.Disposable[] = [];

  constructor(
    private readonly server: RewindServer,
    private readonly cmds: Commands,
    private readonly openAtTurn: (turn: TurnInfo) => Promise<void>,
  ) {
    this.subs.push(server.onDidChangeTurns(() => void this.refresh()));
  }

  async show(): Promise<void> {
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('rewind.timelinePicture', 'Rewind: Timeline', vscode.ViewColumn.Active, {
        enableScripts: true,
        localResourceRoots: [],
        retainContextWhenHidden: false,
      });
      this.panel.onDidDispose(() => (this.panel = undefined));
      this.panel.webview.onDidReceiveMessage((m: CellMessage) => void this.clicked(m));
    }
    this.panel.reveal();
    await this.refresh();
  }

  private async refresh(): Promise<void> {
    const panel = this.panel;
    if (!panel) return;
    const nonce = randomBytes(18).toString('base64url');
    try {
      const page = await this.server.request<TimelinePageResult>(Methods.timelinePage, { nonce });
      panel.title = `Rewind: Timeline (${page.turns} turns, ${page.files} files)`;
      panel.webview.html = page.html;
    } catch (e) {
      panel.webview.html = `<!DOCTYPE html><html><body><p>Rewind: ${escapeHtml(errorText(e))}</p></body></html>`;
    }
  }

  private async turn(turnId: string): Promise<TurnInfo | undefined> {
    const list = await this.cmds.listTurns({ turnId });
    return list.sessions.flatMap((s) => s.turns).find((t) => t.id === turnId);
  }

  private async clicked(m: CellMessage): Promise<void> {
    try {
      const turn = await this.turn(m.turnId);
      if (!turn) return;
      if (m.type === 'turn') {
        await this.turnActions(turn);
        return;
      }
      const file = turn.files.find((f) => f.path === m.path);
      if (!file) return;
      const before = rewindUri(turn.id, file.uri, file.change === 'created' ? 'absent' : 'before', file.path);
      const after = rewindUri(turn.id, file.uri, file.change === 'deleted' ? 'absent' : 'after', file.path);
      await vscode.commands.executeCommand('vscode.diff', before, after, `${file.path} (turn #${turn.number}: before <-> after)`, {
        viewColumn: vscode.ViewColumn.Beside,
        preview: true,
      });
    } catch (e) {
      void vscode.window.showErrorMessage(`Rewind: ${errorText(e)}`);
    }
  }

  /** A turn's number clicked: what to do with the turn. */
  private async turnActions(turn: TurnInfo): Promise<void> {
    const actions: (vscode.QuickPickItem & { run: () => Promise<void> })[] = [
      { label: 'What this turn changed', run: () => showTurnChanges(this.cmds, turn) },
      { label: 'Open Workspace at this turn (read-only)', run: () => this.openAtTurn(turn) },
      { label: 'Rewind to before this turn...', run: () => this.cmds.rewindToTurn(turn.id) },
      { label: 'Revert this turn', run: () => this.cmds.revertTurn(turn.id) },
    ];
    const prompt = turn.prompt.replace(/\s+/g, ' ').slice(0, 80);
    const picked = await vscode.window.showQuickPick(actions, { title: `Turn #${turn.number}: ${prompt}` });
    if (picked) await picked.run();
  }

  dispose(): void {
    this.panel?.dispose();
    for (const s of this.subs) s.dispose();
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
