"""``brain mcp``: brain's recall as MCP tools over stdio, for Claude Code and other agents.

    backend.py   who answers: the vault's running ``brain serve``, else a warm index of its own
    server.py    the tools and their descriptions, on the official SDK (``MCPServer``, 2.x)
    install.py   ``brain mcp install``: the entry in ``.mcp.json`` or the user's Claude config
    cli.py       the click commands

Importing ``mcp`` costs about 0.4 s, so only ``server.py`` does, and only ``brain mcp`` runs it.
"""
