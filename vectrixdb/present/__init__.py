"""How a saved run is shown: one presentation layer the dashboard (server/) and the hand-over files
(export/) both use, and neither re-implements. It reads a run only through its contract
(evaluation/runs: the Report, its kind's declaration) and imports nothing above it.

    views.py        what the pages show of a run: its tables, headline, manifest, a question's drill-down
    decisions.py    the "before deciding" panel: the unjudged share and the power of the headline measures
    figures.py      the run's figures as PNG (data URIs on a page, images in the PDF)
    markdown.py     Markdown in passages and answers, as safe HTML and as PDF paragraphs
    certify.py      the certification rules: headline figures, SLA compliance, the overall grade
    certificate.py  what the certificate says (certificate(), pdf_bytes()) and the offline copy (html_text())
    pdf.py          the certificate PDF's layout (reportlab)
    render.py       the Jinja2 filters, the templates a run is shown with (templates/) and the stylesheet
"""

from vectrixdb.present import shows_builtin  # noqa: F401 - the package's own kinds, shown
