"""Recording what files looked like: the recorder, workspace scans, the walk and ignore rules,
the watcher. Imports the store and below."""
