"""A saved run handed over as one file: `vectrixdb export` writes the certification PDF and the
self-contained HTML copy (files.py: export_run).

What the files hold (the certificate's data, the PDF's layout, the offline page) is the
presentation layer's (vectrixdb/present/), which the dashboard serves from too; export/ and
server/ never import each other. Nothing below server/, export/ and cli/ imports it.
"""
