"""Read-side views of what was recorded: versions of a file, the timeline, blame, diffs, review.
Imports restore, capture, the store and below."""
