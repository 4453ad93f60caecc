"""Where a collection lives: a SQLite catalog (the truth), usearch vectors and a bm25s index.

Vectors are kept in the catalog too, so the usearch and bm25s files are derived: each is stamped
with the catalog's state (its identity, generation and last commit token) and its files' checksums,
and rebuilt when the stamp does not match, so a crash between two writes, a restored backup or a
damaged file can never leave the indexes disagreeing with the catalog.
"""

DEFAULT_SPACE = "default"  # the vector space a collection's own model fills (others: add_space)
