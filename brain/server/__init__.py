"""``brain serve``: one warm process per vault that answers recall over a Unix socket.

    runtime.py   where a vault's server keeps its files (socket, record, lock); standard library
    protocol.py  the wire format: one JSON request line, one JSON reply line; standard library
    client.py    asking a running server, with a hard deadline; standard library
    service.py   the warm index: snapshots, the query thread, the operations
    watcher.py   watching the vault and running index passes
    daemon.py    the process: lock, listeners, signals, logs, --detach, --stop
    cli.py       the click command ``brain serve``

The client side (``brain ask`` with a server up, ``brain status``, the prompt hook) imports
only the first three, which import nothing but the standard library and brain's own
standard-library modules: no torch, numpy, faiss or mcp.
"""
