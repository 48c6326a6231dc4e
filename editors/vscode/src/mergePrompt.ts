// A revert whose changes overlap later edits: the only answers that can work, as rows of the revert's
// preview (every file of the turn listed, the overlapping ones marked): the whole revert with conflict
// markers to resolve, or rewinding only those files instead (said as such: the turn's other files stay).
// Never an Overwrite the server would refuse.
import type { FilePreview } from './protocol';
import type { PreviewChoice } from './previewPick';

export interface MergePrompt {
  /** The preview's title: what overlaps. */
  question: string;
  choices: PreviewChoice[];
}

/** Files of a preview whose revert does not merge (later edits overlap the turn's changes). */
export function mergeConflicts(files: FilePreview[]): FilePreview[] {
  return files.filter((f) => f.conflict?.kind === 'merge');
}

const count = (n: number): string => `${n} ${n === 1 ? 'file' : 'files'}`;

/** The question of a revert with merge conflicts; undefined when it has none. */
export function mergePrompt(files: FilePreview[], turnNumber: number): MergePrompt | undefined {
  const merge = mergeConflicts(files);
  if (merge.length === 0) return undefined;
  const names = merge.map((f) => f.path);
  const one = merge.length === 1;
  const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? ` and ${names.length - 3} more` : '');
  const all = files.filter((f) => f.action !== 'unchanged' || f.conflict).length;
  const others = all - merge.length;
  const which = one ? names[0] : 'Those Files';
  return {
    question: `Later edits overlap turn #${turnNumber}'s changes in ${shown}.`,
    choices: [
      {
        label: 'Write Conflict Markers',
        description:
          `revert all ${count(all)} of the turn; in ${shown} mark each overlap (<<<<<<< now / >>>>>>> before ` +
          `turn #${turnNumber}) to resolve, then save`,
        options: { merge: true },
      },
      {
        label: `Rewind ${which} Instead`,
        description:
          `put ${one ? 'it' : 'them'} back as before turn #${turnNumber} (drops the later edits in ${one ? 'it' : 'them'})` +
          (others > 0 ? `; the turn's other ${count(others)} stay as they are` : ''),
        options: { force: true },
        rewindPaths: merge.map((f) => f.uri),
      },
    ],
  };
}
