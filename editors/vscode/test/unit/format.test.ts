import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  baselineMessage,
  conflictPrompt,
  currentTurnCount,
  errorText,
  filesSummary,
  formatTime,
  hereTurnId,
  pathsToSave,
  pickerEntries,
  sessionTitle,
  restoredEntries,
  restoredFiles,
  promptSummary,
  resultReport,
  scopeItems,
  statusText,
  turnLabel,
  withOlderPage,
} from '../../src/format';
import type { FilePreview, ListTurnsResult, RestoreResult, TurnInfo } from '../../src/protocol';

const local = (y: number, mo: number, d: number, h: number, mi: number): string =>
  new Date(y, mo - 1, d, h, mi).toISOString();

function turn(n: number, prompt: string, session = 's1', files: TurnInfo['files'] = []): TurnInfo {
  return {
    id: `${session}-t${n}`,
    number: n,
    sessionId: session,
    sessionKind: 'agent',
    prompt,
    startedAt: local(2026, 11, 22, 14, n),
    endedAt: null,
    files,
    reconstructed: null,
  };
}

const NOW = new Date(2026, 10, 22, 15, 0);

describe('formatTime', () => {
  it('shows only the time today, the date this year, the full date before', () => {
    assert.equal(formatTime(local(2026, 11, 22, 9, 5), NOW), '09:05');
    assert.equal(formatTime(local(2026, 3, 1, 23, 59), NOW), 'Mar 1 23:59');
    assert.equal(formatTime(local(2025, 12, 31, 8, 0), NOW), '2025-12-31 08:00');
  });
  it('leaves what it cannot parse alone', () => {
    assert.equal(formatTime('not a date', NOW), 'not a date');
  });
});

describe('promptSummary', () => {
  it('keeps the first non-empty line, collapsed', () => {
    assert.equal(promptSummary('\n  fix   the bug\nplease'), 'fix the bug …');
    assert.equal(promptSummary('add tests'), 'add tests');
  });
  it('cuts long prompts and names empty ones', () => {
    const s = promptSummary('x'.repeat(200), 20);
    assert.equal(s.length, 20);
    assert.ok(s.endsWith('…'));
    assert.equal(promptSummary('   '), '(no prompt)');
  });
});

describe('filesSummary', () => {
  it('marks changes git-style and counts the rest', () => {
    const files = [
      { path: 'a.txt', uri: 'file:///w/a.txt', change: 'modified' as const, source: 'tool', sharedWith: [] },
      { path: 'b/c.py', uri: 'file:///w/b/c.py', change: 'created' as const, source: 'tool', sharedWith: [] },
      { path: 'd.md', uri: 'file:///w/d.md', change: 'deleted' as const, source: 'tool', sharedWith: [] },
    ];
    assert.equal(filesSummary(files), 'M a.txt  A b/c.py  D d.md');
    assert.equal(filesSummary(files, 1), 'M a.txt  (+2 more)');
    assert.equal(filesSummary([]), 'no file changes');
  });
});

describe('pickerEntries', () => {
  const list: ListTurnsResult = {
    workspace: '/w',
    currentSessionId: 's1',
    baseline: null,
    sessions: [
      { id: 'old-session', kind: 'agent', agent: 'claude-code', transcriptPath: null, startedAt: local(2026, 11, 21, 8, 0), lastActivityAt: local(2026, 11, 21, 9, 0), turnCount: 1, olderCursor: null, forkOf: null, turns: [turn(1, 'old', 'old-session')] },
      { id: 's1', kind: 'agent', agent: null, transcriptPath: null, startedAt: local(2026, 11, 22, 14, 0), lastActivityAt: local(2026, 11, 22, 14, 2), turnCount: 2, olderCursor: null, forkOf: null, turns: [turn(1, 'first'), turn(2, 'second')] },
      { id: 'rp', kind: 'rewind', agent: null, transcriptPath: null, startedAt: local(2026, 11, 22, 14, 0), lastActivityAt: local(2026, 11, 22, 14, 30), turnCount: 1, olderCursor: null, forkOf: null, turns: [turn(1, 'restore point', 'rp')] },
    ],
  };
  it('lists the current session newest first, then the other sessions under separators, without restore points', () => {
    const entries = pickerEntries(list, NOW);
    assert.deepEqual(
      entries.map((e) => e.label),
      ['current session', '#2  14:02  second', '#1  14:01  first', 'claude-code session old-sess · Nov 21 09:00', '#1  14:01  old'],
    );
    assert.deepEqual(entries.map((e) => e.kind), ['separator', 'turn', 'turn', 'separator', 'turn']);
  });
  it('needs no separator when there is only the current session', () => {
    const entries = pickerEntries({ ...list, sessions: [list.sessions[1]] }, NOW);
    assert.deepEqual(entries.map((e) => e.label), ['#2  14:02  second', '#1  14:01  first']);
  });
  it('counts the current session turns for the status bar', () => {
    assert.equal(currentTurnCount(list), 2);
    assert.equal(currentTurnCount({ ...list, currentSessionId: null }), 0);
    assert.equal(currentTurnCount(undefined), 0);
    assert.equal(statusText(1), '$(history) 1 turn');
    assert.equal(statusText(2), '$(history) 2 turns');
  });
  it('shows the first checkpoint\'s progress instead while it runs in the background', () => {
    assert.equal(statusText(2, { done: 120, total: 1000 }), '$(sync~spin) first checkpoint 120/1000');
    assert.equal(statusText(2, { done: 0, total: 0 }), '$(sync~spin) first checkpoint…');
    assert.equal(statusText(2, null), '$(history) 2 turns');
    assert.equal(
      baselineMessage({ done: 120, total: 1000 }),
      'First checkpoint of this workspace in progress (120 of 1000 files), in the background: a rewind keeps every file not recorded yet as it is.',
    );
    assert.match(baselineMessage({ done: 0, total: 0 }) ?? '', /\(listing the files\)/);
    assert.equal(baselineMessage(null), undefined);
  });
});

describe('forked sessions', () => {
  it('labels a fork with its source session and turn in the view title and the picker', () => {
    const fork = {
      id: 'f0f0f0f0-fork', kind: 'agent' as const, agent: 'claude-code', transcriptPath: null,
      startedAt: NOW.toISOString(), lastActivityAt: NOW.toISOString(), turnCount: 1, olderCursor: null,
      forkOf: { sessionId: 'a1b2c3d4-source', beforeNumber: 3 }, turns: [turn(1, 'one', 'f0f0f0f0-fork')],
    };
    assert.match(sessionTitle(fork, NOW), /^claude-code session f0f0f0f0 · fork of a1b2c3d4 before #3 · /);
    const other = { ...fork, id: 'a1b2c3d4-source', forkOf: null, turns: [turn(1, 'one', 'a1b2c3d4-source')] };
    const entries = pickerEntries({ workspace: '/w', currentSessionId: fork.id, sessions: [fork, other], baseline: null }, NOW);
    assert.equal(entries[0].kind === 'separator' && entries[0].label, 'current session · fork of a1b2c3d4 before #3');
  });
});

describe('paged turn lists', () => {
  const session = (turns: TurnInfo[], turnCount: number, olderCursor: string | null) => ({
    id: 's1', kind: 'agent' as const, agent: 'claude-code', transcriptPath: null,
    startedAt: NOW.toISOString(), lastActivityAt: NOW.toISOString(), turnCount, olderCursor, forkOf: null, turns,
  });
  const page: ListTurnsResult = { workspace: '/w', currentSessionId: 's1', sessions: [session([turn(9, 'nine'), turn(10, 'ten')], 10, '9')], baseline: null };
  it('offers the older turns after a page, and counts the whole session in the status bar', () => {
    const entries = pickerEntries(page, NOW);
    assert.deepEqual(entries.map((e) => e.kind), ['turn', 'turn', 'more']);
    const more = entries[2];
    assert.ok(more.kind === 'more' && more.cursor === '9' && more.sessionId === 's1' && more.label.includes('8 more'));
    assert.equal(currentTurnCount(page), 10);
  });
  it('adds an older page before the turns already listed, without duplicates, and takes its cursor', () => {
    const older: ListTurnsResult = { ...page, sessions: [session([turn(7, 'seven'), turn(8, 'eight'), turn(9, 'nine')], 10, null)] };
    const merged = withOlderPage(page, older);
    assert.deepEqual(merged.sessions[0].turns.map((t) => t.number), [7, 8, 9, 10]);
    assert.equal(merged.sessions[0].olderCursor, null);
    assert.deepEqual(pickerEntries(merged, NOW).map((e) => e.kind), ['turn', 'turn', 'turn', 'turn']);
  });
});

describe('turnLabel and scopeItems', () => {
  it('reads "#n  time  prompt"', () => {
    assert.equal(turnLabel(turn(3, 'make it faster'), NOW), '#3  14:03  make it faster');
  });
  it('calls the person\'s own saves "Your saves", never "#1" next to the agent\'s #1', () => {
    const saves: TurnInfo = { ...turn(1, 'your edits, saved in the editor', 'editor'), sessionKind: 'editor' };
    assert.equal(turnLabel(saves, NOW), 'Your saves  14:01');
    // Two saves of the same minute are told apart by their files (issue 36 item 12).
    const one: TurnInfo = { ...saves, files: [{ path: 'a.txt', uri: 'file:///w/a.txt', change: 'modified', source: 'save', sharedWith: [] }] };
    const two: TurnInfo = { ...saves, files: [{ path: 'b.txt', uri: 'file:///w/b.txt', change: 'modified', source: 'save', sharedWith: [] }] };
    assert.equal(turnLabel(one, NOW), 'Your saves  14:01  a.txt');
    assert.notEqual(turnLabel(one, NOW), turnLabel(two, NOW));
    const list: ListTurnsResult = {
      workspace: '/w',
      currentSessionId: 's1',
      baseline: null,
      sessions: [
        { id: 's1', kind: 'agent', agent: 'claude-code', transcriptPath: null, startedAt: NOW.toISOString(), lastActivityAt: NOW.toISOString(), turnCount: 1, olderCursor: null, forkOf: null, turns: [turn(1, 'agent prompt')] },
        { id: 'editor', kind: 'editor', agent: 'editor', transcriptPath: null, startedAt: NOW.toISOString(), lastActivityAt: NOW.toISOString(), turnCount: 1, olderCursor: null, forkOf: null, turns: [saves] },
      ],
    };
    const labels = pickerEntries(list, NOW).map((e) => e.label);
    assert.equal(labels.filter((l) => l.startsWith('#1')).length, 1, labels.join(' | '));
    assert.ok(labels.some((l) => l.startsWith('your saves in the editor')), labels.join(' | '));
  });
  it('offers the scope and summarize choices in order, Cancel last with neither', () => {
    const items = scopeItems(turn(1, 'x'));
    assert.deepEqual(items.map((i) => i.label), [
      'Code only',
      'Code and conversation',
      'Conversation only',
      'Summarize from here',
      'Summarize up to here',
      'Cancel',
    ]);
    assert.deepEqual(items.map((i) => i.scope), ['code', 'both', 'conversation', undefined, undefined, undefined]);
    assert.deepEqual(items.map((i) => i.summarize), [undefined, undefined, undefined, 'from', 'upTo', undefined]);
  });
});

describe('conflictPrompt', () => {
  const f = (path: string, conflict: FilePreview['conflict'], action: FilePreview['action'] = 'modify'): FilePreview => ({
    path, uri: `file:///w/${path}`, action, added: 1, removed: 1, binary: false, conflict, markers: 0,
  });
  it('names every conflicting path with the server message and explains the choices', () => {
    const p = conflictPrompt([
      f('a.txt', { kind: 'modified-outside', message: 'changed on disk since the turn', hunks: [] }),
      f('b.txt', null),
      f('c.txt', null, 'unchanged'),
    ], 'Rewinding to turn #1');
    assert.equal(p.message, 'Rewinding to turn #1 would overwrite 1 file changed since rewind-ls last saw it.');
    assert.match(p.detail, /• a\.txt: changed on disk since the turn/);
    assert.match(p.detail, /Skip Conflicts: restore the other 1 file and leave these alone\./);
    assert.match(p.detail, /Overwrite: restore every file/);
    assert.doesNotMatch(p.detail, /b\.txt/);
  });
  it('does not repeat a path the server message already names', () => {
    const p = conflictPrompt([f('a.txt', { kind: 'modified-outside', message: 'a.txt: changed since rewind-ls last saw it', hunks: [] })]);
    assert.match(p.detail, /^• a\.txt: changed since/m);
    assert.doesNotMatch(p.detail, /a\.txt: a\.txt/);
  });
  it('shortens long lists', () => {
    const many = Array.from({ length: 20 }, (_, i) => f(`f${i}`, { kind: 'merge', message: 'does not merge', hunks: [] }));
    const p = conflictPrompt(many);
    // Merge conflicts are not changes rewind-ls missed: the headline says what they are.
    assert.match(p.message, /would overwrite later changes in 20 files/);
    assert.doesNotMatch(p.message, /last saw/);
    assert.match(p.detail, /… and 5 more/);
  });
});

describe('pathsToSave and restoredEntries', () => {
  const toPath = (uri: string): string => uri.replace('file://', '');
  const f = (path: string, action: FilePreview['action'], conflict: FilePreview['conflict'] = null): FilePreview => ({
    path, uri: `file:///w/${path}`, action, added: 0, removed: 0, binary: false, conflict, markers: 0,
  });
  it('saves every restored file that is dirty now, also one that had unsaved edits', () => {
    const files = [f('clean.txt', 'modify'), f('dirty.txt', 'modify'), f('closed.txt', 'create'), f('same.txt', 'unchanged')];
    const now = new Set(['/w/clean.txt', '/w/dirty.txt', '/w/other.txt', '/w/same.txt']);
    assert.deepEqual(pathsToSave(restoredEntries(files), toPath, now), ['/w/clean.txt', '/w/dirty.txt']);
  });
  it('leaves out skipped conflicts and failed paths', () => {
    const files = [f('a.txt', 'modify', { kind: 'modified-outside', message: 'x', hunks: [] }), f('b.txt', 'delete'), f('c.txt', 'modify')];
    assert.deepEqual(restoredEntries(files, ['c.txt'], true).map((e) => e.path), ['b.txt']);
    assert.deepEqual(restoredEntries(files, [], false).map((e) => e.path), ['a.txt', 'b.txt', 'c.txt']);
  });
  it('names the restored files', () => {
    assert.equal(restoredFiles([f('a.txt', 'modify'), f('b.txt', 'delete'), f('c.txt', 'create'), f('d', 'unchanged')]), 'a.txt, b.txt (deleted), c.txt (recreated)');
  });
});

describe('resultReport and errorText', () => {
  const r = (status: RestoreResult['status'], extra: Partial<RestoreResult> = {}): RestoreResult => ({
    status, message: 'm', edit: null, restorePointId: null, files: [], writtenByServer: [], failed: [], conversation: null, prompt: null, unsaved: [], ...extra,
  });
  it('maps statuses to severities and lists failed paths', () => {
    assert.equal(resultReport(r('applied')).severity, 'info');
    const applied = r('applied', { message: 'restored 1 file(s)', files: [{ path: 'a.txt', uri: 'file:///w/a.txt', action: 'modify', added: 1, removed: 1, binary: false, conflict: null, markers: 0 }] });
    assert.equal(resultReport(applied).text, 'Rewind: restored 1 file(s): a.txt.');
    // Named for the action, the files right after (a toast cuts the end).
    assert.equal(resultReport(applied, 'Undo of rewind to turn 2 (code)').text, 'Rewind: Undo of rewind to turn 2 (code): restored a.txt.');
    const nothing = r('nothing-to-do', { message: 'nothing to restore: every path already matches' });
    assert.equal(resultReport(nothing, 'Undo of the last rewind').text, 'Rewind: Undo of the last rewind: nothing to restore: every path already matches.');
    assert.equal(resultReport(r('nothing-to-do')).severity, 'info');
    assert.equal(resultReport(r('conflict')).severity, 'warning');
    assert.deepEqual(resultReport(r('partial', { failed: ['a', 'b'] })), { severity: 'error', text: 'Rewind: m Not restored: a, b.' });
  });
  it('shows a JSON-RPC error message as it is', () => {
    assert.equal(errorText({ code: -32602, message: 'unknown turn 7' }), 'unknown turn 7');
    assert.equal(errorText('plain'), 'plain');
  });
});

describe('hereTurnId', () => {
  it('gives a tie to the restore point: times are to the second and a restore follows its turn', () => {
    const same = '2026-11-26T03:36:00Z';
    const list = {
      currentSessionId: 's1',
      sessions: [
        { id: 's1', kind: 'agent', turns: [{ ...turn(2, 'two'), startedAt: same }] },
        { id: 'rewind', kind: 'rewind', turns: [{ ...turn(1, 'rewind to turn 2', 'rewind'), startedAt: same }] },
      ],
    } as unknown as ListTurnsResult;
    assert.equal(hereTurnId(list), 'rewind-t1');
  });
  it('marks the newest of two restore points made in the same second', () => {
    const same = '2026-11-26T11:37:05Z';
    const list = {
      currentSessionId: 's1',
      sessions: [
        { id: 's1', kind: 'agent', turns: [{ ...turn(2, 'two'), startedAt: '2026-11-26T11:36:00Z' }] },
        {
          id: 'rewind',
          kind: 'rewind',
          turns: [
            { ...turn(1, 'rewind to turn 1', 'rewind'), startedAt: same },
            { ...turn(2, 'rewind to turn 2', 'rewind'), startedAt: same },
          ],
        },
      ],
    } as unknown as ListTurnsResult;
    assert.equal(hereTurnId(list), 'rewind-t2');
  });
});
