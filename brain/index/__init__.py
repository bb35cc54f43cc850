"""One vault's index, in the order data flows through it.

    changes.py   which files changed since the last run (by size and mtime, then content)
    indexer.py   `brain index`: one writer, parse → chunk → embed in batches, each committed
    linking.py   resolve links against the notes now in the index
    vectors.py   the FAISS cache of the chunk vectors, versioned against the database
    rebuild.py   `--rebuild`: a new index built beside the old one, then swapped in
    status.py    `brain status`: what is indexed, pending and skipped
    files.py     the names of the files in the index folder
    connections.py  opening index.db as one file and its WAL while a rebuild may swap it
    upgrades.py  the migrations as a command meets them; an index a newer brain upgraded
    store.py     IndexStore: every SQL statement on index.db
    schema.py    the index database's migrations
    health.py    what is wrong with an index, said in one line with what to do

Nothing is imported here: each command imports what it needs.
"""
