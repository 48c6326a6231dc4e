"""Claude Code's tools, as its hook payloads and its transcript both name them.

Claude Code's edit and shell tools (`EDIT_TOOLS`, `SHELL_TOOLS`), as its hook payloads and its
transcript both name them.
"""

from __future__ import annotations

# Edit tools and the tool_input field that names the file they change. (MultiEdit no longer exists in
# Claude Code 2.x; it stays here so an older binary's payloads are still recorded.)
EDIT_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
SHELL_TOOLS = {"Bash"}
