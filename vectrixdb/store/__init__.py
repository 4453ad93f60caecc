"""Where a collection lives: a SQLite catalog (the truth), usearch vectors and a bm25s index.

Vectors are kept in the catalog too, so the usearch and bm25s files are derived: each is stamped
with the catalog's generation and rebuilt when it is behind, so a crash between the two writes
can never leave the indexes disagreeing with the catalog.
"""
