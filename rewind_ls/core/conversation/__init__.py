"""Conversation work for any agent: forking before a turn, summarizing. Imports agents and below."""
