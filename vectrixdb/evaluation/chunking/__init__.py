"""compare_chunking: chunking techniques compared on the same questions with exact tests.

    compare.py  compare_chunking: the plain builds, their scores and the ranking
    models.py   the model-backed builds (LLM cuts, contextual notes, late chunking)
    builds.py   Build, the one record both hand back
    config.py   CompareConfig: compare_chunking's settings beyond its ten keywords

The techniques themselves live in vectrixdb/chunking/ (a new chunker goes there, not here).
"""
