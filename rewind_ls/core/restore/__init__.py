"""Planning and applying a restore: the plan, the disk applier and its recovery, restore points,
the flow every front end drives. Imports capture, the store and below."""
