"""The dashboard: a read-only FastAPI app over a folder of saved runs (local, s3:// or Blob).

`create_app(folder)` builds it; `vectrixdb serve FOLDER` (cli/serve.py) runs it with uvicorn on
127.0.0.1. It has no write routes: it lists, draws and exports runs, and never changes the folder.
"""
from __future__ import annotations


def create_app(folder: str, **options):
    from vectrixdb.server.app import create_app as make

    return make(folder, **options)
