"""Planning and applying a restore. Imports capture, the store and below; never agents or the
conversation (the flow is handed its conversation forker by its caller).

- `request`: one restore as asked for at the edge (`RestoreRequest`);
- `plan`: the plan (`Plan`, `PathPlan`, `Conflict`) and the per-mode planners (rewind, revert, undo);
  `hunks`: a revert of some hunks; `planner`: request -> plan, its label, and the paths to write
  (`select`); `editor_traces`: unsaved buffers of editors that did not tell us;
- `preview`: the preview every front end shows before anything is written;
- `point`: restore points (what an undo goes back to);
- the disk: `pinned` (folder descriptors, the file moves), `swap` (a batch of paths swapped, all or
  nothing, journaled), `rollback` (undoing swaps, compare-and-swap), `recovery` (restores a killed
  process left pending), `apply_disk` (the CLI's applier);
- `flow`: the order of one restore of code and/or conversation, whoever applies it.
"""
