// The palette commands and the restore flow: pick, preview, confirm conflicts, restore, save, report.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
  errorText,
  pathsToSave,
  pickerEntries,
  TURN_PAGE,
  withOlderPage,
  restoredEntries,
  resultReport,
  scopeItems,
  type ScopeItem,
  type Severity,
} from './format';
import {
  type FileChange,
  type ListTurnsParams,
  type ListTurnsResult,
  Methods,
  type Mode,
  type PreviewResult,
  type RestoreOptions,
  type RestoreResult,
  type Scope,
  type SummarizeDirection,
  type SummarizeResult,
  type TurnInfo,
} from './protocol';
import { rewindUri, TIMELINE_URI, timelineChanged } from './contentProvider';
import type { RewindServer } from './server';
import { restoreUnsavedTexts } from './unsaved';
import { mergePrompt } from './mergePrompt';
import { confirmRestore, previewEnabled, revertDiff, rewindDiff } from './previewPick';
import { openResumeTerminal } from './resumeTerminal';

type VsItem = vscode.QuickPickItem & { turn?: TurnInfo; more?: { sessionId: string; cursor: string } };

const uriToPath = (uri: string): string => vscode.Uri.parse(uri).fsPath;

export class Commands {
  constructor(private readonly server: RewindServer) {}

  /** A page of turns: by default the newest TURN_PAGE of each session (older pages through `before`). */
  listTurns(params: ListTurnsParams = { limit: TURN_PAGE }): Promise<ListTurnsResult> {
    return this.server.request<ListTurnsResult>(Methods.listTurns, params);
  }

  /** The turn picker; it refreshes itself while open when turns are recorded. */
  /** `restorePoints`: also list the restore points (picking one undoes that restore) and mark "you are here". */
  async pickTurn(title: string, restorePoints = false): Promise<TurnInfo | undefined> {
    const qp = vscode.window.createQuickPick<VsItem>();
    qp.title = title;
    qp.placeholder = 'Type to filter by prompt or file; newest turn first';
    qp.matchOnDetail = true;
    qp.busy = true;
    qp.show();
    // The newest page of each session, plus the older pages the person asked for ("Older turns…"),
    // which a refresh keeps.
    let list: ListTurnsResult | undefined;
    const older: ListTurnsResult[] = [];
    const show = (): void => {
      if (!list) return;
      const entries = pickerEntries(older.reduce(withOlderPage, list), undefined, restorePoints);
      const activeId = qp.activeItems[0]?.turn?.id;
      qp.items = entries.map((e): VsItem =>
        e.kind === 'separator'
          ? { label: e.label, kind: vscode.QuickPickItemKind.Separator }
          : e.kind === 'more'
            ? { label: e.label, more: { sessionId: e.sessionId, cursor: e.cursor }, alwaysShow: true }
            : { label: e.label, detail: e.detail, turn: e.turn },
      );
      const again = qp.items.find((i) => i.turn?.id === activeId);
      if (again) qp.activeItems = [again];
    };
    const loadOlder = async (more: { sessionId: string; cursor: string }): Promise<void> => {
      qp.busy = true;
      try {
        older.push(await this.listTurns({ limit: TURN_PAGE, sessionId: more.sessionId, before: more.cursor }));
        show();
      } catch (e) {
        void this.say('error', `Rewind: ${errorText(e)}`);
      } finally {
        qp.busy = false;
      }
    };
    const load = async (): Promise<void> => {
      qp.busy = true;
      try {
        list = await this.listTurns();
        show();
        const entries = pickerEntries(list);
        if (entries.length === 0) {
          qp.placeholder = 'No agent turns recorded in this workspace yet';
        }
      } catch (e) {
        qp.hide();
        void this.say('error', `Rewind: ${errorText(e)}`);
      } finally {
        qp.busy = false;
      }
    };
    const sub = this.server.onDidChangeTurns(() => void load());
    void load();
    try {
      return await new Promise<TurnInfo | undefined>((resolve) => {
        qp.onDidAccept(() => {
          const more = qp.selectedItems[0]?.more;
          if (more) {
            void loadOlder(more);
            return;
          }
          const turn = qp.selectedItems[0]?.turn;
          if (turn) {
            resolve(turn);
            qp.hide();
          }
        });
        qp.onDidHide(() => resolve(undefined));
      });
    } finally {
      sub.dispose();
      qp.dispose();
    }
  }

  async pickScope(turn: TurnInfo): Promise<ScopeItem | undefined> {
    return vscode.window.showQuickPick(scopeItems(turn), {
      title: `Rewind to before turn #${turn.number}`,
      placeHolder: 'What to rewind',
    });
  }

  // --- palette commands ------------------------------------------------------------------------

  async rewindToTurn(turnId?: string, scope?: Scope): Promise<void> {
    let turn: TurnInfo | undefined;
    if (turnId) {
      turn = await this.findTurn(turnId);
    } else {
      turn = await this.pickTurn('Rewind to Turn (or undo a restore)', true);
    }
    if (!turn) return;
    // Rewinding to a restore point puts back what the files held before that restore: its undo.
    if (turn.sessionKind === 'rewind') return this.undoRestore(turn);
    if (!scope) {
      const choice = await this.pickScope(turn);
      if (choice?.summarize) return this.summarize(turn, choice.summarize);
      scope = choice?.scope;
    }
    if (!scope) return;
    await this.restore(turn, scope, 'rewind');
  }

  /**
   * A new session of the agent's conversation with turn `turn` and after (`from`) or everything before it (`upTo`)
   * replaced by a summary; the files stay. The summarizer is the `rewind.summarizer` setting, else `claude -p`.
   */
  async summarize(turn: TurnInfo, direction: SummarizeDirection, instructions?: string): Promise<void> {
    if (instructions === undefined) {
      instructions = await vscode.window.showInputBox({
        title: direction === 'from' ? `Summarize from turn #${turn.number}` : `Summarize up to turn #${turn.number}`,
        prompt: 'What the summary should focus on (optional; Enter for a general summary)',
      });
      if (instructions === undefined) return;
    }
    let result: SummarizeResult;
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Rewind: summarizing the conversation…' },
        () =>
          this.server.request<SummarizeResult>(Methods.summarize, {
            turnId: turn.id,
            direction,
            ...(instructions ? { instructions } : {}),
          }),
      );
    } catch (e) {
      void this.say('error', `Rewind: summarize failed: ${errorText(e)}`, 'Show Output').then(
        (c) => c && this.server.output.show(),
      );
      return;
    }
    const what = direction === 'from' ? `from turn #${turn.number}` : `up to turn #${turn.number}`;
    await this.showConversation(
      { conversation: result.conversation, prompt: direction === 'from' ? result.prompt : null },
      undefined,
      `Rewind: conversation summarized ${what}.`,
    );
  }

  /** "Undo This Restore" on any restore point (not only the last): the files go back to what they held before it. */
  async undoRestore(turn: TurnInfo): Promise<void> {
    await this.restore(turn, 'code', 'rewind');
  }

  async revertTurn(turnId?: string): Promise<void> {
    const turn = turnId ? await this.findTurn(turnId) : await this.pickTurn('Revert Turn (undo only its changes)');
    if (!turn) return;
    if (turn.files.length === 0) {
      void this.say('info', `Rewind: turn #${turn.number} changed no file: there is nothing to revert.`);
      return;
    }
    await this.restore(turn, 'code', 'revert');
  }

  async undoLastRewind(options: RestoreOptions = {}): Promise<void> {
    let what = 'Undo of the last rewind';
    if (!options.force && !options.skipConflicts) {
      // The preview is asked for even when previews are off: a conflict is a question, never a dead end.
      let preview: PreviewResult;
      try {
        preview = await this.server.request<PreviewResult>(Methods.preview, { mode: 'undo' });
      } catch (e) {
        void this.say('warning', `Rewind: ${errorText(e)}`);
        return;
      }
      what = `Undo of ${preview.turn.prompt}`;
      if (preview.conflicts > 0 || previewEnabled()) {
        const title = `Undo: ${preview.turn.prompt}`;
        const choice = await confirmRestore(title, 'Undo', preview.files, rewindDiff(preview.turn.id), 'Undoing the last rewind');
        if (!choice) return;
        options = { ...options, ...choice.options };
      }
    }
    const done = await this.withSaving(
      'Undoing the last rewind…',
      () => this.server.request<RestoreResult>(Methods.undo, { ...options }),
      options,
    );
    if (!done) return;
    if (done.result.status === 'conflict' && !options.force && !options.skipConflicts) {
      const choice = await this.askConflicts(done.result.files, 'Undoing the last rewind');
      if (!choice) return;
      return this.undoLastRewind(choice);
    }
    this.report(done, what, options);
  }

  async compareTurn(turnId?: string, fileUri?: string): Promise<void> {
    const turn = turnId ? await this.findTurn(turnId) : await this.pickTurn('Compare Turn with Current');
    if (!turn) return;
    let file: Pick<FileChange, 'path' | 'uri'> | undefined;
    if (fileUri) {
      file = turn.files.find((f) => f.uri === fileUri) ?? { path: vscode.workspace.asRelativePath(vscode.Uri.parse(fileUri)), uri: fileUri };
    } else if (turn.files.length === 0) {
      void this.say('info', `Rewind: turn #${turn.number} changed no file.`);
      return;
    } else if (turn.files.length === 1) {
      file = turn.files[0];
    } else {
      const pick = await vscode.window.showQuickPick(
        turn.files.map((f) => ({ label: f.path, description: f.change, file: f })),
        { title: `Compare a file of turn #${turn.number} with the current one`, matchOnDescription: true },
      );
      file = pick?.file;
    }
    if (!file) return;
    const left = rewindUri(turn.id, file.uri, 'before', file.path);
    const current = vscode.Uri.parse(file.uri);
    const right = fs.existsSync(current.fsPath) ? current : rewindUri(turn.id, file.uri, 'absent', file.path);
    await vscode.commands.executeCommand(
      'vscode.diff',
      left,
      right,
      `${file.path} (before turn #${turn.number}) ↔ current`,
      { preview: true },
    );
  }

  async openTimeline(): Promise<void> {
    // A virtual document (the server's timeline is never a file on disk); fetched anew on each open.
    timelineChanged.fire(TIMELINE_URI);
    const doc = await vscode.workspace.openTextDocument(TIMELINE_URI);
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  // --- the restore flow --------------------------------------------------------------------------

  private async findTurn(turnId: string): Promise<TurnInfo | undefined> {
    let list: ListTurnsResult;
    try {
      list = await this.listTurns({ turnId });
    } catch {
      list = { workspace: '', currentSessionId: null, sessions: [], baseline: null };
    }
    for (const s of list.sessions) {
      const t = s.turns.find((t) => t.id === turnId);
      if (t) return t;
    }
    void this.say('error', `Rewind: unknown turn ${turnId}`);
    return undefined;
  }

  async restore(
    turn: TurnInfo,
    scope: Scope,
    mode: Mode,
    options: RestoreOptions = {},
    paths?: string[],
    hunks?: number[],
  ): Promise<void> {
    const base = { turnId: turn.id, scope, mode, ...(paths ? { paths } : {}), ...(hunks ? { hunks } : {}) };
    const point = turn.sessionKind === 'rewind' && mode === 'rewind';
    if (!options.force && !options.skipConflicts) {
      const preview = await this.server.request<PreviewResult>(Methods.preview, base);
      if (scope !== 'code' && preview.conversation && !preview.conversation.available) {
        const reason = preview.conversation.reason ?? 'the conversation cannot be rewound';
        if (scope === 'conversation') {
          void this.say('warning', `Rewind: ${reason}`);
          return;
        }
        const go = await vscode.window.showWarningMessage(
          `Rewind: ${reason}`,
          { modal: true, detail: 'The files can still be rewound.' },
          'Rewind Code Only',
        );
        if (go !== 'Rewind Code Only') return;
        scope = 'code';
        base.scope = scope;
      }
      const merge = mode === 'revert' ? mergePrompt(preview.files, turn.number) : undefined;
      if (merge || preview.conflicts > 0 || (scope !== 'conversation' && previewEnabled())) {
        // With conflicts the question is inside the preview (every file listed, the conflicts marked).
        const one = paths?.length === 1 ? ` (${preview.files[0]?.path ?? 'one file'})` : '';
        // A restore point is no turn: its rewind undoes that restore, and is called so.
        const title = point
          ? `Undo: ${turn.prompt}`
          : hunks
            ? `Revert this change of turn #${turn.number}${one}`
            : mode === 'revert'
              ? `Revert turn #${turn.number}${one}`
              : `Rewind to before turn #${turn.number}${one}`;
        const verb = point ? 'Undo' : mode === 'revert' ? 'Revert' : 'Rewind';
        const diff = mode === 'revert' ? revertDiff(turn.id, turn.number) : rewindDiff(turn.id);
        const what = point
          ? `Undoing ${turn.prompt}`
          : mode === 'revert'
            ? `Reverting turn #${turn.number}`
            : `Rewinding to turn #${turn.number}`;
        const choice = await confirmRestore(title, verb, preview.files, diff, what, merge?.choices, merge?.question);
        if (!choice) return;
        // "Rewind those files instead": decided here, with what it drops said; no second question.
        if (choice.rewindPaths) return this.restore(turn, 'code', 'rewind', choice.options, choice.rewindPaths);
        options = choice.options;
      }
    }
    const title = point
      ? `Undoing ${turn.prompt}…`
      : mode === 'revert'
        ? `Reverting turn #${turn.number}…`
        : `Rewinding to turn #${turn.number}…`;
    const done = await this.withSaving(
      title,
      () => this.server.request<RestoreResult>(Methods.restore, { ...base, ...options }),
      options,
    );
    if (!done) return;
    if (done.result.status === 'conflict' && !options.force && !options.skipConflicts) {
      const choice = await this.askConflicts(done.result.files, 'The restore');
      if (choice) return this.restore(turn, scope, mode, choice, paths, hunks);
      return;
    }
    const what = point
      ? `Undo of ${turn.prompt}`
      : hunks
        ? `Revert of a change of turn #${turn.number}`
        : mode === 'revert'
          ? `Revert of turn #${turn.number}`
          : `Rewind to turn #${turn.number}`;
    this.report(done, what, options);
    if (options.merge) await this.openMarked(done.result);
  }

  /** After a revert with conflict markers: open the marked files (VS Code's conflict lenses show there). */
  private async openMarked(result: RestoreResult): Promise<void> {
    const marked = (result.files ?? []).filter((f) => f.markers > 0 && !(result.failed ?? []).includes(f.path));
    for (const f of marked) {
      await vscode.window.showTextDocument(vscode.Uri.parse(f.uri), { preview: false });
    }
    if (marked.length > 0) {
      void this.say(
        'info',
        `Rewind: conflict markers in ${marked.map((f) => f.path).join(', ')} (saved with them): choose Accept Current ` +
          `(now) or Accept Incoming (before the turn) on each block, then save again. Rewind: Undo Last Rewind takes ` +
          `the revert back.`,
      );
    }
  }

  /** A conflict the server met after the preview (something changed meanwhile): the same question, in the list. */
  private async askConflicts(files: PreviewResult['files'], what: string): Promise<RestoreOptions | undefined> {
    return (await confirmRestore(what, 'Restore', files, () => undefined, what))?.options;
  }

  /**
   * Runs a restore request; afterwards saves every document it changed, so buffers and disk agree. A document
   * that had unsaved edits is saved too: its edits are one Undo (Ctrl+Z) away, and the report names it.
   */
  private async withSaving(
    title: string,
    run: () => Promise<RestoreResult>,
    options: RestoreOptions,
  ): Promise<{ result: RestoreResult; unsavedKept: string[] } | undefined> {
    const dirtyBefore = new Set(vscode.workspace.textDocuments.filter((d) => d.isDirty).map((d) => d.uri.fsPath));
    let result: RestoreResult;
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Rewind: ${title}` },
        run,
      );
    } catch (e) {
      void this.say('error', `Rewind: ${errorText(e)}`);
      return undefined;
    }
    const docs = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.fsPath, d] as const));
    const dirtyNow = new Set([...docs.values()].filter((d) => d.isDirty).map((d) => d.uri.fsPath));
    const restored = result.status === 'conflict' ? [] : restoredEntries(result.files ?? [], result.failed, !!options.skipConflicts);
    const unsavedKept: string[] = [];
    const unsavedBack = new Set((result.unsaved ?? []).map((u) => uriToPath(u.uri)));
    for (const p of pathsToSave(restored, uriToPath, dirtyNow)) {
      const doc = docs.get(p);
      try {
        if (doc && !(await doc.save())) this.server.output.appendLine(`could not save ${p}`);
        else if (dirtyBefore.has(p) && !unsavedBack.has(p)) unsavedKept.push(vscode.workspace.asRelativePath(p));
      } catch (e) {
        this.server.output.appendLine(`could not save ${p}: ${errorText(e)}`);
      }
    }
    if (result.status !== 'conflict') await restoreUnsavedTexts(this.server, result);
    this.server.fireTurnsChanged(undefined);
    return { result, unsavedKept };
  }

  /** A notification, also written to Output › Rewind (toasts without buttons disappear). */
  private say(severity: Severity, text: string, ...items: string[]): Thenable<string | undefined> {
    this.server.output.appendLine(`[${severity}] ${text}`);
    const show =
      severity === 'error'
        ? vscode.window.showErrorMessage
        : severity === 'warning'
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    return show(text, ...items);
  }

  private report(
    done: { result: RestoreResult; unsavedKept: string[] },
    what: string,
    options: RestoreOptions,
  ): void {
    const { result, unsavedKept } = done;
    const report = resultReport(result, what, !!options.skipConflicts);
    // What matters most comes first (a toast cuts the end): where the person's unsaved edits went.
    const text =
      (unsavedKept.length > 0
        ? `Rewind: your unsaved edits in ${unsavedKept.join(', ')} are one Undo (Ctrl+Z) away in the editor. `
        : '') +
      (unsavedKept.length > 0 ? report.text.replace(/^Rewind: /, '') : report.text) +
      (result.unsaved?.length && result.status !== 'conflict'
        ? ` Your unsaved edits in ${result.unsaved.map((u) => u.path).join(', ')} are back, not saved (the disk holds what was saved before).`
        : '');
    if (report.severity === 'error') {
      void this.say('error', text, 'Show Output').then((c) => c && this.server.output.show());
    } else if (report.severity === 'warning') {
      void this.say('warning', text);
    } else if (!result.conversation) {
      void this.say('info', text);
    }
    if (result.conversation) {
      // The fork names the turn and its prompt: "Rewind to turn #2: conversation forked before "…"".
      const prompt = (result.prompt ?? result.conversation.prompt ?? '').replace(/\s+/g, ' ').trim();
      const short = prompt.length > 60 ? `${prompt.slice(0, 59)}…` : prompt;
      const message = `Rewind: ${what}: conversation forked before its prompt${short ? ` "${short}"` : ''}.`;
      void this.showConversation(result, result.status === 'applied' && result.files.length ? text : undefined, message);
    }
  }

  /**
   * The forked conversation: a dialog (it stays until dismissed: the resume command is what comes next), with
   * Copy and Open in Terminal (which types the command without running it).
   */
  private async showConversation(
    result: Pick<RestoreResult, 'conversation' | 'prompt'>,
    filesText?: string,
    message = 'Rewind: conversation forked before the prompt.',
  ): Promise<void> {
    const fork = result.conversation;
    if (!fork) return;
    // A summary up to a turn keeps the turn's prompt: null says there is none to resend.
    const prompt = result.prompt === null ? undefined : (result.prompt ?? fork.prompt);
    // The clipboard is the person's: written only when they press Copy or Copy Prompt.
    const detail = [
      `Resume it with: ${fork.resumeCommand}`,
      prompt ? 'Copy Prompt puts the prompt on the clipboard, to edit and send again.' : '',
      filesText ?? '',
    ]
      .filter((l) => l)
      .join('\n\n');
    this.server.output.appendLine(`[info] ${message} ${detail}`);
    const buttons = prompt ? ['Copy', 'Copy Prompt', 'Open in Terminal'] : ['Copy', 'Open in Terminal'];
    const choice = await vscode.window.showInformationMessage(message, { modal: true, detail }, ...buttons);
    if (choice === 'Copy') {
      await vscode.env.clipboard.writeText(fork.resumeCommand);
    } else if (choice === 'Copy Prompt' && prompt) {
      await vscode.env.clipboard.writeText(prompt);
    } else if (choice === 'Open in Terminal') {
      await openResumeTerminal(fork.resumeCommand);
    }
  }

  /**
   * The code actions "Revert this change" (`hunk`: one hunk of the turn's change to `uri`) and "Revert turn N in
   * this file" (no hunk): the same flow as every restore (the preview quick pick, the conflict question in it,
   * the changed documents saved, the report).
   */
  async revertChange(turnId: string | undefined, uri: string | undefined, hunk?: number): Promise<void> {
    if (!turnId || !uri) return;
    const turn = await this.findTurn(turnId);
    if (!turn) return;
    await this.restore(turn, 'code', 'revert', {}, [uri], hunk === undefined ? undefined : [hunk]);
  }

  /** Rewinds one file of a turn to its content before the turn (the Rewind view's per-file action). */
  async rewindFile(turn: TurnInfo, file: FileChange): Promise<void> {
    await this.restore(turn, 'code', 'rewind', {}, [file.uri]);
  }
}
