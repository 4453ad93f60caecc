"""The dashboard: a read-only FastAPI app over a folder of saved runs (local, s3:// or Blob).

`create_app(folder)` builds it; `vectrixdb serve FOLDER` (cli/serve.py) runs it with uvicorn on
127.0.0.1. It has no write routes: it lists, draws and exports runs, and never changes the folder.

A new page is not one file: its route is a function inside `create_app` (server/app.py; routes close
over the app's runs, cache and templates), its view goes in views.py or a module of its own, its
template in templates/, and a link in templates/base.html's navigation if the menu is to reach it.
A new report kind's page, by contrast, needs none of this: its Kind declaration's `section`, `view`
and `tab` are drawn by the run page and the Evaluate page (evaluation/runs/kinds.py).
"""
from __future__ import annotations


def create_app(folder: str, **options):
    from vectrixdb.server.app import create_app as make

    return make(folder, **options)
