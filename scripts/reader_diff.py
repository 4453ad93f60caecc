"""Page-by-page differences between the pypdf reader's Markdown and the pdfium reader's.

usage: python scripts/reader_diff.py ../shared/data/pdfs [--pdfs uber_2021.pdf lyft_2021.pdf]
       [--out reader_diff.md] [--cache DIR]

For each PDF: how many pages are identical, and for each other page the kinds of difference,
each with the lines concerned (pypdf's first, then pdfium's):
- characters: the multisets of non-space characters differ once Markdown's markup is taken off
  (heading `#`s, table pipes and `---` rows, a bullet's `- `): a character one reader kept and the
  other did not;
- headings: a heading line (text after its `#`s) found by one reader only, or at another level;
- tables: table rows differ (cells split or joined elsewhere, a row in a table for one only);
- order: the same characters, in another order (lines or columns read in another order);
- spacing: the same characters in the same order, spaces placed otherwise: inside or between
  lines (heading marks aside), or "blank lines only" on a page whose headings agree (blank lines
  around a heading found by one reader only count as that heading's).
A page can have several kinds. --cache keeps the pypdf reader's pages as JSON in DIR (its reading
of a 10-K takes ~15 CPU-s) and reuses them when present; the pdfium reader is always run.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

_HEADING = re.compile(r"^(#{1,6}) (.*)$")
_RULE = re.compile(r"^\|( --- \|)+$")


def plain(markdown: str) -> str:
    """A page's text with Markdown's markup taken off: `#`s of headings, table pipes and rule rows,
    bullets' `- `."""
    out = []
    for line in markdown.split("\n"):
        if _RULE.match(line):
            continue
        heading = _HEADING.match(line)
        if heading:
            line = heading.group(2)
        elif line.startswith("| "):
            line = " ".join(c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line))
        elif line.startswith("- "):
            line = line[2:]
        out.append(line)
    return "\n".join(out)


def letters(text: str) -> Counter:
    """The multiset of a text's non-space characters."""
    return Counter(c for c in text if not c.isspace())


def _unheaded(markdown: str) -> str:
    """The Markdown with its headings as plain lines (their `#`s gone)."""
    return "\n".join(m.group(2) if (m := _HEADING.match(line)) else line for line in markdown.split("\n"))


def headings(markdown: str) -> set[str]:
    return {m.group(1) + " " + " ".join(m.group(2).split()) for m in map(_HEADING.match, markdown.split("\n")) if m}


def table_rows(markdown: str) -> list[str]:
    return [line for line in markdown.split("\n") if line.startswith("| ") and not _RULE.match(line)]


def kinds(old: str, new: str) -> dict[str, list[str]]:
    """The kinds of difference between one page's two Markdown texts, each with examples."""
    found: dict[str, list[str]] = {}
    a, b = plain(old), plain(new)
    la, lb = letters(a), letters(b)
    if la != lb:
        found["characters"] = [f"pypdf only: {''.join(sorted((la - lb).elements()))!r}",
                               f"pdfium only: {''.join(sorted((lb - la).elements()))!r}"]
    ha, hb = headings(old), headings(new)
    if ha != hb:
        found["headings"] = [f"pypdf only: {h!r}" for h in sorted(ha - hb)] + [f"pdfium only: {h!r}" for h in sorted(hb - ha)]
    ta, tb = table_rows(old), table_rows(new)
    if ta != tb:
        sa, sb = set(ta), set(tb)
        found["tables"] = ([f"rows {len(ta)} vs {len(tb)}"] + [f"pypdf: {r}" for r in ta if r not in sb][:3]
                           + [f"pdfium: {r}" for r in tb if r not in sa][:3])
    if la == lb and "".join(a.split()) != "".join(b.split()):
        found["order"] = [f"first difference: pypdf {_around(a, b)!r}"]
    if "".join(a.split()) == "".join(b.split()):
        lines_a, lines_b = ([line for line in _unheaded(x).split("\n") if line.strip()] for x in (old, new))
        if lines_a != lines_b:
            found["spacing"] = _changed("\n".join(lines_a), "\n".join(lines_b))
        elif ha == hb and old != new:
            found["spacing"] = ["blank lines only"] + _changed(old, new)
    if not found and old != new:
        found["markup"] = ["same text, headings and tables; Markdown lines placed otherwise"]
    return found


def _changed(old: str, new: str, most: int = 2) -> list[str]:
    """The first `most` runs of lines that differ, as pypdf's lines then pdfium's."""
    import difflib

    a, b = old.split("\n"), new.split("\n")
    blocks = [(a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
              if tag != "equal"]
    return [f"pypdf: {x[:3]!r} | pdfium: {y[:3]!r}" for x, y in blocks[:most]]


def _around(a: str, b: str) -> str:
    x, y = "".join(a.split()), "".join(b.split())
    i = next((k for k, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    return f"{x[max(0, i - 30):i + 30]} / pdfium {y[max(0, i - 30):i + 30]}"


def pages(path: Path, reader: str, cache: Path | None) -> list[str]:
    """Each page's Markdown as `reader` reads the file (pypdf's from the cache when there)."""
    kept = cache / f"{path.stem}.{reader}.json" if cache and reader == "pypdf" else None
    if kept is not None and kept.exists():
        return json.loads(kept.read_text())
    from vectrixdb.reading.pdf import READER_ENV, read_pdf

    os.environ[READER_ENV] = reader
    doc = read_pdf(path.read_bytes(), doc_id=path.name, source=str(path))
    texts = [doc.page_text(p.number) for p in doc.pages]
    if kept is not None:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(json.dumps(texts))
    return texts


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--pdfs", nargs="+", default=["uber_2021.pdf", "lyft_2021.pdf"])
    parser.add_argument("--out", default="reader_diff.md")
    parser.add_argument("--cache")
    args = parser.parse_args()
    cache = Path(args.cache) if args.cache else None
    report = ["# pypdf reader against pdfium reader, page by page", ""]
    for name in args.pdfs:
        path = Path(args.folder) / name
        old, new = pages(path, "pypdf", cache), pages(path, "pdfium", cache)
        same = sum(1 for x, y in zip(old, new) if x == y)
        per_kind: Counter = Counter()
        body = []
        for number, (x, y) in enumerate(zip(old, new), start=1):
            found = kinds(x, y)
            per_kind.update(list(found))
            if found:
                body.append(f"### page {number}: {', '.join(found)}")
                body += [f"- {kind}: {example}" for kind, examples in found.items() for example in examples]
        report += [f"## {name}", "", f"pages: {len(old)} (pypdf) / {len(new)} (pdfium); identical: {same}",
                   "pages with each kind: " + ", ".join(f"{k} {n}" for k, n in per_kind.most_common()), "", *body, ""]
        print(f"{name}: {same} of {len(old)} pages identical; " + ", ".join(f"{k} {n}" for k, n in per_kind.most_common()))
    Path(args.out).write_text("\n".join(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
