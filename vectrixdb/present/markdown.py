"""Markdown in passages and answers, shown as what it means (headings, tables, lists) rather than as
`###` and pipes: HTML for the dashboard and the offline copy, reportlab flowables for the PDF.

One parser for both, markdown-it-py (CommonMark plus GitHub tables and strikethrough). Safety:
raw HTML in a passage is never passed through (`html=False` turns it into text), images are not
rendered (a passage must not make the browser fetch anything), and markdown-it refuses
`javascript:`-style link targets. Everything else it emits is escaped, so its output may be marked
safe in a template; that is the one place a template shows markup it did not write itself.
"""
from __future__ import annotations
from vectrixdb.extras import needs

from functools import lru_cache
from typing import Any
from xml.sax.saxutils import escape

EXCERPT = 500  # characters of a passage the PDF appendix shows


@lru_cache(maxsize=1)
def parser():
    with needs("serve"):
        from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"]).disable("image")
    return md


def html(text: Any) -> str:
    """Markdown text as safe HTML (a fragment of block elements); None or empty gives ''."""
    if text is None or str(text).strip() == "":
        return ""
    return parser().render(str(text))


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """The start of a passage, cut at a line end (else a space) so a table keeps whole rows."""
    text = str(text or "")
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    if cut < limit // 2:
        cut = text.rfind(" ", 0, limit)
    return text[:cut if cut > 0 else limit].rstrip() + " …"


def _inline(token) -> str:
    """An inline token's children as reportlab paragraph markup, every text escaped."""
    out = []
    for child in token.children or []:
        kind = child.type
        if kind in ("text", "html_inline"):
            out.append(escape(child.content))
        elif kind == "code_inline":
            out.append(f'<font face="DejaVuMono">{escape(child.content)}</font>')
        elif kind == "softbreak":
            out.append(" ")
        elif kind == "hardbreak":
            out.append("<br/>")
        elif kind in ("strong_open", "strong_close", "em_open", "em_close", "s_open", "s_close"):
            tag = {"strong": "b", "em": "i", "s": "strike"}[kind.rsplit("_", 1)[0]]
            out.append(f"<{'/' if kind.endswith('close') else ''}{tag}>")
        elif kind == "image":
            out.append(escape(child.content))
    return "".join(out)


def flowables(text: Any, styles: dict, width: float) -> list:
    """Markdown text as reportlab flowables: headings in bold, paragraphs, bulleted lists, code
    in a monospaced face and tables as gridded tables no wider than `width`."""
    with needs("serve"):
        from reportlab.lib import colors
        from reportlab.platypus import Indenter, Paragraph, Table, TableStyle, XPreformatted

    if text is None or str(text).strip() == "":
        return []
    tokens = parser().parse(str(text))
    out: list = []
    lists: list[str] = []  # the open lists, "bullet" or "ordered"
    rows: list[list] | None = None
    for n, token in enumerate(tokens):
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists.append(kind.split("_")[0])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "table_open":
            rows = []
        elif kind == "tr_open" and rows is not None:
            rows.append([])
        elif kind == "inline" and rows is not None and tokens[n - 1].type in ("th_open", "td_open"):
            header = tokens[n - 1].type == "th_open"
            markup = _inline(token)
            rows[-1].append((len(token.content), Paragraph(f"<b>{markup}</b>" if header else markup,
                                                           styles["md_cell"])))
        elif kind == "table_close" and rows is not None:
            if rows:
                columns = max(len(r) for r in rows)
                rows = [r + [(0, "")] * (columns - len(r)) for r in rows]
                indent = styles["md_body"].leftIndent
                widths = _widths([[n for n, _ in r] for r in rows], width - indent, styles["md_cell"].fontSize)
                table = Table([[cell for _, cell in r] for r in rows], colWidths=widths, hAlign="LEFT", repeatRows=1)
                table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.25, colors.HexColor("#c9ced8")),
                                           ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eef1f6")),
                                           ("VALIGN", (0, 0), (-1, -1), "TOP"),
                                           ("TOPPADDING", (0, 0), (-1, -1), 1), ("BOTTOMPADDING", (0, 0), (-1, -1), 1)]))
                out += [Indenter(left=indent), table, Indenter(left=-indent)]
            rows = None
        elif kind == "inline" and tokens[n - 1].type == "heading_open":
            out.append(Paragraph(_inline(token), styles["md_heading"]))
        elif kind == "inline" and rows is None:
            bullet = ("• " if lists[-1] == "bullet" else "– ") if lists else ""
            style = styles["md_item"] if lists else styles["md_body"]
            out.append(Paragraph(bullet + _inline(token), style))
        elif kind in ("fence", "code_block"):
            out.append(XPreformatted(escape(token.content.rstrip("\n")), styles["md_code"]))
    return out


def _widths(lengths: list[list[int]], width: float, size: float) -> list[float]:
    """Column widths for a Markdown table: each column as wide as its longest cell (DejaVu Sans
    averages under 0.65 em a character; bold is wider) plus the cell's 2 x 6 pt padding, shrunk
    in proportion when together they exceed `width`."""
    wanted = [max(max(column), 3) * size * 0.65 + 14 for column in zip(*lengths)]
    scale = min(1.0, width / sum(wanted))
    return [w * scale for w in wanted]


def pdf_styles(base) -> dict:
    """The paragraph styles flowables() uses, made from a body style (its font and size)."""
    with needs("serve"):
        from reportlab.lib.styles import ParagraphStyle

    size = base.fontSize
    return {"md_body": ParagraphStyle("md_body", parent=base, spaceAfter=2),
            "md_item": ParagraphStyle("md_item", parent=base, leftIndent=base.leftIndent + 8),
            "md_heading": ParagraphStyle("md_heading", parent=base, fontName="DejaVu-Bold", fontSize=size + 1,
                                         leading=base.leading + 1, spaceBefore=3, spaceAfter=1),
            "md_cell": ParagraphStyle("md_cell", parent=base, fontSize=size - 0.5, leading=base.leading - 0.5,
                                      leftIndent=0),
            "md_code": ParagraphStyle("md_code", parent=base, fontName="DejaVuMono", fontSize=size - 0.5,
                                      leading=base.leading - 0.5, leftIndent=base.leftIndent + 6)}


def markup(value: Any, empty: str = "—"):
    """The Jinja2 filter `markdown`: html(value) marked safe (it escapes what it does not render);
    `empty` (escaped) where there is no text, so an absent answer reads as a dash."""
    with needs("serve"):
        from markupsafe import Markup, escape as escape_html

    if value is None or (isinstance(value, float) and value != value) or str(value).strip() == "":
        return Markup(f'<p class="empty">{escape_html(empty)}</p>')
    return Markup(html(value))
