// A revert whose changes overlap later edits: the only choices that can work (conflict markers to
// resolve, or rewinding those files), never an Overwrite the server would refuse.
import type { FilePreview } from './protocol';

export interface MergePrompt {
  message: string;
  detail: string;
  markers: string;
  rewind: string;
  paths: string[];
}

/** Files of a preview whose revert does not merge (later edits overlap the turn's changes). */
export function mergeConflicts(files: FilePreview[]): FilePreview[] {
  return files.filter((f) => f.conflict?.kind === 'merge');
}

/** The dialog of a revert with merge conflicts; undefined when it has none. */
export function mergePrompt(files: FilePreview[], turnNumber: number): MergePrompt | undefined {
  const merge = mergeConflicts(files);
  if (merge.length === 0) return undefined;
  const names = merge.map((f) => f.path);
  const one = merge.length === 1;
  const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? ` and ${names.length - 3} more` : '');
  const message = `Later edits overlap turn #${turnNumber}'s changes in ${shown}.`;
  const lines = merge.slice(0, 15).map((f) => {
    const why = f.conflict?.message ?? 'later changes overlap';
    return `• ${why.startsWith(f.path) ? why : `${f.path}: ${why}`}`;
  });
  lines.push(
    '',
    `Write Conflict Markers: revert the turn and mark each overlap (<<<<<<< now / ||||||| turn #${turnNumber} / ` +
      `>>>>>>> before turn #${turnNumber}) to resolve in the editor, then save.`,
    `Rewind ${one ? names[0] : 'Those Files'} Instead: put ${one ? 'it' : 'them'} back as before turn #${turnNumber} ` +
      '(drops the later edits in them).',
    'Either can be undone with Rewind: Undo Last Rewind.',
  );
  return {
    message,
    detail: lines.join('\n'),
    markers: 'Write Conflict Markers',
    rewind: `Rewind ${one ? names[0] : 'Those Files'} Instead`,
    paths: merge.map((f) => f.uri),
  };
}
