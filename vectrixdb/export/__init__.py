"""A saved run handed over as one file: the certification PDF and the self-contained HTML copy.

    files.py    what goes in: certificate(), pdf_bytes(), html_text(), export_run()
    certify.py  the certification rules: headline figures, SLA compliance, the overall grade
    pdf.py      the PDF's layout (reportlab); it lays out, files.py decides

It reads runs through the report contract (evaluation/runs) and the dashboard's views (server/);
the dashboard serves its files. Nothing below server/, export/ and cli/ imports it.
"""
