"""The dashboard: a read-only FastAPI app over a folder of saved runs (local, s3:// or Blob).

`create_app(folder)` builds it; `vectrixdb serve FOLDER` (cli/serve.py) runs it with uvicorn on
127.0.0.1. It has no write routes: it lists, draws and exports runs, and never changes the folder.

A new page is one file: a module that declares `register_page(Page(name, path, title, view,
template, nav=...))` (server/registry.py says what each field is; the built-in pages are declared
the same way in server/pages_builtin.py), its template beside it (`folder=`) or in templates/;
`create_app` builds its route and its nav link from the declaration. Pages are the "pages" kind of
vectrixdb/registry.py: inside the package a page is declared in pages_builtin.py; outside, its
module is named in the VECTRIXDB_PAGES setting or by an entry point in the group `vectrixdb.pages`.
A new report kind's page, by contrast, needs none of this: its Kind declaration's `tab` and how it
is shown (present/shows.py: `section`, `view`) are drawn by the run page and the Evaluate page.
What a run page shows is the presentation layer's (vectrixdb/present/), which the offline copy and
the certificate (export/) use too; server/ and export/ never import each other.
"""
from __future__ import annotations


def create_app(folder: str, **options):
    from vectrixdb.server.app import create_app as make

    return make(folder, **options)
