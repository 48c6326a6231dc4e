// What the person sees: quick pick items, messages. Pure (no vscode import): unit-tested.
import type {
  BaselineProgress,
  FilePreview,
  ListTurnsResult,
  RestoreResult,
  Scope,
  SessionInfo,
  SummarizeDirection,
  TurnInfo,
} from './protocol';

export interface TurnItem {
  kind: 'turn';
  label: string;
  description?: string;
  detail: string;
  turn: TurnInfo;
}

export interface SeparatorItem {
  kind: 'separator';
  label: string;
}

/** "Older turns…": the next page of a session whose older turns were not listed yet. */
export interface MoreItem {
  kind: 'more';
  label: string;
  sessionId: string;
  cursor: string;
}

export type PickerEntry = TurnItem | SeparatorItem | MoreItem;

/** Turns per session in one rewind/listTurns page (the newest; older pages on demand). */
export const TURN_PAGE = 100;

/** `list` with an older page of one session (`page`, from `before: olderCursor`) added before its turns. */
export function withOlderPage(list: ListTurnsResult, page: ListTurnsResult): ListTurnsResult {
  const older = new Map(page.sessions.map((s) => [s.id, s]));
  return {
    ...list,
    sessions: list.sessions.map((s) => {
      const more = older.get(s.id);
      if (!more) return s;
      const have = new Set(s.turns.map((t) => t.id));
      return { ...s, olderCursor: more.olderCursor ?? null, turns: [...more.turns.filter((t) => !have.has(t.id)), ...s.turns] };
    }),
  };
}

function moreItem(s: SessionInfo): MoreItem[] {
  if (!s.olderCursor) return [];
  const left = s.turnCount - s.turns.length;
  return [{ kind: 'more', label: `$(history) Older turns… (${left} more)`, sessionId: s.id, cursor: s.olderCursor }];
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number): string => String(n).padStart(2, '0');

/** "14:03" today, "Nov 21 14:03" this year, "2025-11-21 14:03" otherwise (local time). */
export function formatTime(iso: string, now: Date = new Date()): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (d.toDateString() === now.toDateString()) return hm;
  if (d.getFullYear() === now.getFullYear()) return `${MONTHS[d.getMonth()]} ${d.getDate()} ${hm}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${hm}`;
}

/** First line of a prompt, collapsed and cut to `max` characters. */
export function promptSummary(prompt: string, max = 80): string {
  const line = prompt.split(/\r?\n/).find((l) => l.trim().length > 0) ?? '';
  const text = line.trim().replace(/\s+/g, ' ');
  const multi = prompt.trim().includes('\n');
  if (!text) return '(no prompt)';
  if (text.length > max) return text.slice(0, max - 1) + '…';
  return multi ? text + ' …' : text;
}

const CHANGE_MARK = { created: 'A', modified: 'M', deleted: 'D' } as const;

/** "M a.txt  A src/b.py  D c.md" (git-style marks), cut after `max` files. */
export function filesSummary(files: TurnInfo['files'], max = 6): string {
  if (files.length === 0) return 'no file changes';
  const shown = files.slice(0, max).map((f) => `${CHANGE_MARK[f.change] ?? '?'} ${f.path}`);
  const more = files.length > max ? `  (+${files.length - max} more)` : '';
  return shown.join('  ') + more;
}

/** What a turn is called: "#3" for an agent's prompt; the person's own saves and outside changes have no number. */
export function turnName(turn: Pick<TurnInfo, 'number' | 'sessionKind'>): string {
  switch (turn.sessionKind) {
    case 'editor':
      return 'Your saves';
    case 'external':
      return 'Outside changes';
    case 'rewind':
      return 'Restore point';
    default:
      return `#${turn.number}`;
  }
}

/** "a.txt, b.txt (+2 more)": what tells two entries without a prompt apart (your saves of the same minute). */
export function fileNames(files: TurnInfo['files'], max = 3): string {
  const shown = files.slice(0, max).map((f) => f.path).join(', ');
  return files.length > max ? `${shown} (+${files.length - max} more)` : shown;
}

export function turnLabel(turn: TurnInfo, now?: Date): string {
  const agent = turn.sessionKind === 'agent' || !turn.sessionKind;
  const prompt = agent
    ? `  ${promptSummary(turn.prompt)}`
    : turn.sessionKind === 'rewind'
      ? `  before ${promptSummary(turn.prompt)}`
      : turn.files.length > 0
        ? `  ${fileNames(turn.files)}`
        : '';
  return `${turnName(turn)}  ${formatTime(turn.startedAt, now)}${prompt}`;
}

/** The mark on the row whose end is the workspace's current state. */
export const YOU_ARE_HERE = 'you are here';

/**
 * The mark itself: a restore point's row is the state *before* its restore (picking it undoes the restore), so
 * when the current state is what the last restore wrote, its row says that the files are after it.
 */
export function hereMark(turn: Pick<TurnInfo, 'sessionKind'>): string {
  return turn.sessionKind === 'rewind' ? `${YOU_ARE_HERE}: after this restore` : YOU_ARE_HERE;
}

/**
 * The row that holds the current state: the newest restore point when a restore came after the current session's
 * newest turn (the files are what that restore wrote; undoing it goes back), else the current session's newest turn.
 */
export function hereTurnId(list: ListTurnsResult): string | undefined {
  // A session's newest turn is its highest number: two restores in one second have equal times.
  const newest = (s: SessionInfo | undefined): TurnInfo | undefined =>
    s?.turns.reduce<TurnInfo | undefined>((a, t) => (!a || t.number > a.number ? t : a), undefined);
  const turn = newest(list.sessions.find((s) => s.id === list.currentSessionId));
  const restore = newest(list.sessions.find((s) => s.kind === 'rewind'));
  // Times are to the second: a restore point of the same second as the latest turn's start was made
  // after it (a restore follows the turn it undoes), so a tie is the restore's.
  if (restore && (!turn || restore.startedAt >= turn.startedAt)) return restore.id;
  return turn?.id;
}

export function turnItem(turn: TurnInfo, now?: Date, here?: string): TurnItem {
  const label = turnLabel(turn, now) + (turn.id === here ? `  ← ${hereMark(turn)}` : '');
  const detail = turn.sessionKind === 'rewind' ? `Undo this restore: ${filesSummary(turn.files)}` : filesSummary(turn.files);
  return { kind: 'turn', label, detail, turn };
}

/** " · fork of 1a2b3c4d before #3" for a forked conversation (its earlier turns are the source's), else "". */
export function forkLabel(s: Pick<SessionInfo, 'forkOf'>): string {
  return s.forkOf ? ` · fork of ${s.forkOf.sessionId.slice(0, 8)} before #${s.forkOf.beforeNumber}` : '';
}

export function sessionTitle(s: SessionInfo, now?: Date): string {
  const when = formatTime(s.lastActivityAt, now);
  switch (s.kind) {
    case 'editor':
      return `your saves in the editor · ${when}`;
    case 'external':
      return `changes outside agent turns · ${when}`;
    case 'rewind':
      return `restore points · ${when}`;
    default:
      return `${s.agent ?? 'agent'} session ${s.id.slice(0, 8)}${forkLabel(s)} · ${when}`;
  }
}

/**
 * The turn picker: the current session's turns newest first, then the other sessions (latest activity first),
 * each under a separator. Restore points (kind "rewind") are left out: "Undo Last Rewind" is their command.
 */
export function pickerEntries(list: ListTurnsResult, now?: Date, includeRestorePoints = false): PickerEntry[] {
  const entries: PickerEntry[] = [];
  const sessions = list.sessions.filter((s) => includeRestorePoints || s.kind !== 'rewind');
  const current = sessions.find((s) => s.id === list.currentSessionId);
  const others = sessions
    .filter((s) => s !== current && s.turns.length > 0)
    .sort((a, b) => b.lastActivityAt.localeCompare(a.lastActivityAt));
  const newestFirst = (s: SessionInfo): TurnInfo[] => [...s.turns].sort((a, b) => b.number - a.number);
  const here = includeRestorePoints ? hereTurnId(list) : undefined;
  if (current) {
    if (others.length > 0) entries.push({ kind: 'separator', label: `current session${forkLabel(current)}` });
    for (const t of newestFirst(current)) entries.push(turnItem(t, now, here));
    entries.push(...moreItem(current));
  }
  for (const s of others) {
    entries.push({ kind: 'separator', label: s.kind === 'rewind' ? `${sessionTitle(s, now)} (pick one to undo that restore)` : sessionTitle(s, now) });
    for (const t of newestFirst(s)) entries.push(turnItem(t, now, here));
    entries.push(...moreItem(s));
  }
  return entries;
}

/** Turn count of the current session, for the status bar. */
export function currentTurnCount(list: ListTurnsResult | undefined): number {
  if (!list || !list.currentSessionId) return 0;
  return list.sessions.find((s) => s.id === list.currentSessionId)?.turnCount ?? 0;
}

/** The status bar: the current session's turn count, or while the first checkpoint of a large
 * workspace is still being taken in the background, its progress. */
export function statusText(count: number, baseline: BaselineProgress | null = null): string {
  if (baseline) {
    const counted = baseline.total ? ` ${baseline.done}/${baseline.total}` : '…';
    return `$(sync~spin) first checkpoint${counted}`;
  }
  return `$(history) ${count} ${count === 1 ? 'turn' : 'turns'}`;
}

/** What the view and the status bar's tooltip say while the first checkpoint runs; undefined after. */
export function baselineMessage(baseline: BaselineProgress | null): string | undefined {
  if (!baseline) return undefined;
  const counted = baseline.total ? `${baseline.done} of ${baseline.total} files` : 'listing the files';
  return `First checkpoint of this workspace in progress (${counted}), in the background: a rewind keeps every file not recorded yet as it is.`;
}

export interface ScopeItem {
  label: string;
  description: string;
  scope: Scope | undefined;
  /** Set for the two summarize choices (a new session with part of the conversation summarized). */
  summarize?: SummarizeDirection;
}

export function scopeItems(turn: TurnInfo): ScopeItem[] {
  const n = `#${turn.number}`;
  // Code only first: the files alone are what most rewinds want, and the conversation is forked only when asked.
  return [
    { label: 'Code only', description: `files as they were before ${n}; the conversation stays`, scope: 'code' },
    { label: 'Code and conversation', description: `files and the conversation as they were before ${n}`, scope: 'both' },
    { label: 'Conversation only', description: `fork the conversation before ${n}; files stay`, scope: 'conversation' },
    {
      label: 'Summarize from here',
      description: `keep the conversation before ${n}, summarize ${n} and after; files stay`,
      scope: undefined,
      summarize: 'from',
    },
    {
      label: 'Summarize up to here',
      description: `summarize the conversation before ${n}, keep ${n} and after; files stay`,
      scope: undefined,
      summarize: 'upTo',
    },
    { label: 'Cancel', description: '', scope: undefined },
  ];
}

export interface ConflictPrompt {
  message: string;
  detail: string;
}

/** The modal shown when a restore would overwrite changes rewind-ls did not see. */
export function conflictPrompt(files: FilePreview[], what = 'This rewind'): ConflictPrompt {
  const conflicting = files.filter((f) => f.conflict);
  const n = conflicting.length;
  // The headline says what the conflicts are: "changed since rewind-ls last saw" only when that is true.
  const unseen = conflicting.every((f) => f.conflict?.kind === 'modified-outside');
  const message = unseen
    ? `${what} would overwrite ${n} ${n === 1 ? 'file' : 'files'} changed since rewind-ls last saw ${n === 1 ? 'it' : 'them'}.`
    : `${what} would overwrite later changes in ${n} ${n === 1 ? 'file' : 'files'}.`;
  const lines = conflicting.slice(0, 15).map((f) => {
    const why = f.conflict?.message || f.conflict?.kind || 'conflict';
    // The server's message often names the path already.
    return `• ${why.startsWith(f.path) ? why : `${f.path}: ${why}`}`;
  });
  if (n > 15) lines.push(`• … and ${n - 15} more`);
  const others = files.filter((f) => !f.conflict && f.action !== 'unchanged').length;
  lines.push(
    '',
    `Skip Conflicts: restore the other ${others} ${others === 1 ? 'file' : 'files'} and leave these alone.`,
    'Overwrite: restore every file (the rewind can still be undone).',
  );
  return { message, detail: lines.join('\n') };
}

/** The files a restore changed: not unchanged, not failed, not a conflict it was told to skip. */
export function restoredEntries<F extends { path: string; action: string; conflict?: unknown }>(
  files: F[],
  failed: string[] = [],
  conflictsSkipped = false,
): F[] {
  return files.filter((f) => f.action !== 'unchanged' && !failed.includes(f.path) && !(conflictsSkipped && f.conflict));
}

/**
 * Paths to save after a restore: every file it changed that is open and dirty now. A file that had unsaved
 * edits is saved too (disk and editor agree, no false conflict later); its edits are one Undo away.
 */
export function pathsToSave(
  restored: { uri: string }[],
  toPath: (uri: string) => string,
  dirtyNow: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  for (const f of restored) {
    const p = toPath(f.uri);
    if (dirtyNow.has(p) && !out.includes(p)) out.push(p);
  }
  return out;
}

export type Severity = 'info' | 'warning' | 'error';

const ACTION_WORD = { create: 'recreated', modify: 'restored', delete: 'deleted', unchanged: 'unchanged' } as const;

/** "a.txt, src/b.py (recreated), c.md (deleted)", cut after `max` files. */
export function restoredFiles(files: FilePreview[], failed: string[] = [], conflictsSkipped = false, max = 8): string {
  const changed = restoredEntries(files, failed, conflictsSkipped);
  const named = changed.slice(0, max).map((f) => (f.action === 'modify' ? f.path : `${f.path} (${ACTION_WORD[f.action]})`));
  if (changed.length > max) named.push(`and ${changed.length - max} more`);
  return named.join(', ');
}

/**
 * How to report a restore result: severity and text (the server's message, the files it restored, the failed
 * paths). `what` names the operation ("Revert of turn #2") so that an empty one can say it changed nothing.
 */
export function resultReport(
  result: RestoreResult,
  what?: string,
  conflictsSkipped = false,
): { severity: Severity; text: string } {
  const msg = result.message || result.status;
  const files = restoredFiles(result.files ?? [], result.failed ?? [], conflictsSkipped);
  switch (result.status) {
    case 'applied':
    case 'planned':
      // The action's name and the files first: a toast cuts long texts at the end.
      if (what && files) return { severity: 'info', text: `Rewind: ${what}: restored ${files}.` };
      return { severity: 'info', text: `Rewind: ${msg}${files ? `: ${files}` : ''}.` };
    case 'nothing-to-do':
      return { severity: 'info', text: `Rewind: ${what ? `${what}: ` : ''}${result.message || 'nothing to restore'}.` };
    case 'conflict':
      return { severity: 'warning', text: `Rewind: nothing was written. ${msg}` };
    default: {
      const failed = result.failed?.length ? ` Not restored: ${result.failed.join(', ')}.` : '';
      return { severity: 'error', text: `Rewind: ${msg}${failed}` };
    }
  }
}

/** An error from the server (JSON-RPC error or anything else) as one line. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err && typeof err === 'object' && 'message' in err) {
    const { message } = err;
    if (typeof message === 'string') return message;
  }
  return String(err);
}
