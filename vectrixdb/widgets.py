"""Review suggested labels in a notebook: accept, edit or reject each, then save a new golden file.

`LabelReview` holds the decisions and is plain Python (tested headless); `.widget()` draws it with
ipywidgets: the question and its reference answer, each suggested document with the passage that
matched and the answer's words highlighted in it, an edit box holding the labels, and buttons to
accept (the labels in the box), edit or reject. Accepted and edited rows lose `draft`; rows nobody
decided stay drafts; rejected rows are left out. Labels a person types are checked against the
collection (the document must be there, the page within it). Saving never writes over an existing
file.

Decisions are kept as they are made in a side file (`autosave=`, by default `<save path>.decisions.json`
once the widget is drawn), keyed by each question's name, so a review that was closed half-way
resumes where it stopped.

A person's decision wins: a row decided in the widget (now, or in a resumed side file) keeps that
decision when code later calls accept/edit/reject on it; the call changes nothing, warns naming the
row and returns False. Code replaces it only when it says so (`overrule=True`). Decisions made in
code replace each other freely. The side file records who made each decision (`"widget"` or
`"code"`); an entry from before that was recorded is taken as the widget's.
"""
from __future__ import annotations

import html
import json
import re
import warnings
from dataclasses import replace

from vectrixdb.errors import AlreadyExists, BadInput
from vectrixdb.evaluation.golden.questions import Question, save_questions, split_label
from vectrixdb.roles import Collection

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]{3,}")


def highlight(passage: str, answer: str | None) -> str:
    """HTML of the passage with the answer's words (four letters or more) marked."""
    words = {w.casefold() for w in _WORD.findall(answer or "")}
    escaped = html.escape(passage)
    if not words:
        return escaped
    return _WORD.sub(lambda m: f"<mark>{m.group(0)}</mark>" if m.group(0).casefold() in words else m.group(0), escaped)


class LabelReview:
    def __init__(self, db: Collection, questions: list[Question], *, k: int = 3, autosave: str | None = None, **search):
        from vectrixdb.evaluation.golden.suggest import suggest_with_passages

        self.db = db
        self.rows = suggest_with_passages(db, questions, k=k, **search)
        self.decisions: dict[int, tuple[str, tuple[str, ...]]] = {}
        self.made_in: dict[int, str] = {}  # row -> "widget" or "code": who made its decision
        self._saved: dict[str, str] = {}  # path -> sha256 of the bytes this review wrote there
        self.position = 0
        self.autosave: str | None = None
        if autosave:
            self.resume(autosave)

    def resume(self, path: str) -> int:
        """Keep decisions in `path` from now on, first taking back those it holds; returns how many."""
        from vectrixdb import io

        self.autosave = path
        if not io.exists(path):
            return 0
        kept = json.loads(io.read_bytes(path))
        index = {row["key"]: i for i, row in enumerate(self.rows)}
        for key, (kind, labels, *made_in) in kept.items():
            if key in index:
                self.decisions[index[key]] = (kind, tuple(labels))
                self.made_in[index[key]] = made_in[0] if made_in else "widget"
        undecided = [i for i in range(len(self.rows)) if i not in self.decisions]
        self.position = undecided[0] if undecided else 0
        return len(self.decisions)

    def _decide(self, i: int, kind: str, labels: tuple[str, ...], by: str, overrule: bool) -> bool:
        """Record a decision made `by` the widget or code; False (and a warning) when code would
        replace a person's decision from the widget without `overrule=True`."""
        from vectrixdb import io

        if by not in ("widget", "code"):
            raise BadInput(f"by must be 'widget' or 'code', not {by!r}")
        if by == "code" and self.made_in.get(i) == "widget" and not overrule:
            was, kept = self.decisions[i]
            warnings.warn(f"row {i + 1} ({self.rows[i]['key']}) was decided in the widget ({was} "
                          f"{', '.join(kept) or '-'}); {kind} in code was not applied (pass overrule=True to replace it)",
                          stacklevel=3)
            return False
        self.decisions[i] = (kind, labels)
        self.made_in[i] = by
        if self.autosave:
            saved = {self.rows[j]["key"]: [k, list(v), self.made_in[j]] for j, (k, v) in self.decisions.items()}
            io.overwrite_owned(self.autosave, json.dumps(saved, indent=1))
        return True

    def proposed(self, i: int) -> list[str]:
        """Row i's suggested labels, each once (several passages of one document make one label)."""
        return list(dict.fromkeys(s["label"] for s in self.rows[i]["suggestions"]))

    def check_labels(self, labels: list[str]) -> tuple[str, ...]:
        """Labels a person typed, cleaned and checked against the collection (BadInput naming the bad one)."""
        cleaned = tuple(dict.fromkeys(label.strip() for label in labels if label.strip()))
        for label in cleaned:
            doc, page = split_label(label)
            document = self.db.document(doc)
            if document is None:
                raise BadInput(f"{doc!r} is not a document of this collection")
            if page is not None and page > len(document.pages):
                raise BadInput(f"{doc!r} has {len(document.pages)} pages, not page {page}")
        return cleaned

    def __len__(self) -> int:
        return len(self.rows)

    def accept(self, i: int, labels: list[str] | None = None, *, overrule: bool = False, by: str = "code") -> bool:
        """Keep the given labels (those in the edit box), or every suggestion, as the row's expected.
        True when recorded; False when the row keeps a decision made in the widget (module docstring)."""
        chosen = self.check_labels(labels if labels is not None else self.proposed(i))
        if not chosen:
            raise BadInput(f"row {i + 1}: nothing to accept; edit the labels or reject the row")
        return self._decide(i, "accept", chosen, by, overrule)

    def edit(self, i: int, labels: list[str], *, overrule: bool = False, by: str = "code") -> bool:
        """Replace the row's labels with these (checked against the collection); True when recorded."""
        chosen = self.check_labels(labels)
        if not chosen:
            raise BadInput(f"row {i + 1}: an edit needs at least one document id or doc#page=N")
        return self._decide(i, "edit", chosen, by, overrule)

    def reject(self, i: int, *, overrule: bool = False, by: str = "code") -> bool:
        """Leave the row out of the saved file; True when recorded."""
        return self._decide(i, "reject", (), by, overrule)

    def questions(self) -> list[Question]:
        out = []
        for i, row in enumerate(self.rows):
            q: Question = row["question"]
            kind, labels = self.decisions.get(i, ("undecided", ()))
            if kind == "reject":
                continue
            if kind == "undecided":
                out.append(replace(q, id=q.id or row["key"], expected=q.expected or tuple(self.proposed(i)), draft=True))
            else:
                out.append(replace(q, id=q.id or row["key"], expected=labels, draft=False))
        return [q for q in out if q.expected]

    def save(self, path: str, *, overwrite: bool = False) -> str:
        """Write the reviewed questions as a new golden file; never over an existing file, except,
        with overwrite=True, one this review saved itself and nobody changed since (its bytes are
        still the ones written), so a notebook cell that saves can be run again."""
        import hashlib

        from vectrixdb import io

        if overwrite and io.exists(path):
            now = hashlib.sha256(io.read_bytes(path)).hexdigest()
            if self._saved.get(str(path)) != now:
                raise AlreadyExists(f"{path} already exists and is not a file this review saved unchanged; "
                                      "it is never written over")
            lines = [json.dumps(q.to_json(), ensure_ascii=False) for q in self.questions()]
            io.overwrite_owned(path, "\n".join(lines) + "\n" if lines else "")
        else:
            path = save_questions(self.questions(), path)
        self._saved[str(path)] = hashlib.sha256(io.read_bytes(path)).hexdigest()
        return path

    def summary(self) -> dict[str, int]:
        kinds = [self.decisions.get(i, ("undecided",))[0] for i in range(len(self.rows))]
        return {k: kinds.count(k) for k in ("accept", "edit", "reject", "undecided")}

    def status(self) -> str:
        """The summary as a sentence, with where the decisions are kept."""
        n = self.summary()
        decided = len(self.rows) - n["undecided"]
        said = (f"{decided} of {len(self.rows)} question{'s' if len(self.rows) != 1 else ''} decided "
                f"({n['accept']} accepted, {n['edit']} edited, {n['reject']} rejected); "
                f"{n['undecided']} left as draft{'s' if n['undecided'] != 1 else ''}.")
        return said + (f" Decisions are kept in {self.autosave} as you make them." if self.autosave else "")

    def row_html(self, i: int) -> str:
        row = self.rows[i]
        q: Question = row["question"]
        parts = [f"<h4>{i + 1}/{len(self.rows)}: {html.escape(q.question)}</h4>",
                 f"<p><b>Reference:</b> {html.escape(q.reference or '(none)')}</p>"]
        for s in row["suggestions"]:
            pages = ", ".join(map(str, s["pages"]))
            parts.append(f"<p><b>{html.escape(s['label'])}</b> (pages {pages}, score {s['score']:.3f})<br>"
                         f"<span style='font-size:90%'>{highlight(s['text'][:1200], q.reference)}</span></p>")
        kind = self.decisions.get(i, ("undecided", ()))
        made = f" (made in {self.made_in[i]})" if i in self.made_in else ""
        parts.append(f"<p><i>decision: {kind[0]} {', '.join(kind[1])}{made}</i></p>")
        return "".join(parts)

    def widget(self, out_path: str = "golden.reviewed.jsonl"):
        import ipywidgets as w

        if self.autosave is None:
            self.resume(f"{out_path}.decisions.json")
        view = w.HTML()
        labels = w.Text(description="expected", layout=w.Layout(width="80%"))  # each proposed label once
        path = w.Text(value=out_path, description="save to")
        status = w.HTML()
        buttons = {name: w.Button(description=name) for name in ("< prev", "accept", "edit", "reject", "next >", "save")}

        def show():
            i = self.position
            view.value = self.row_html(i)
            labels.value = ", ".join(self.decisions.get(i, ("", ()))[1] or self.proposed(i))
            status.value = html.escape(self.status())

        def act(name):
            def handler(_):
                try:
                    i = self.position
                    if name == "accept":
                        self.accept(i, labels.value.split(","), by="widget")
                    elif name == "edit":
                        self.edit(i, labels.value.split(","), by="widget")
                    elif name == "reject":
                        self.reject(i, by="widget")
                    elif name == "save":
                        saved = self.save(path.value)
                        drafts = self.summary()["undecided"]
                        status.value = html.escape(f"The reviewed questions were saved to {saved}"
                                                   + (f" ({drafts} still marked draft)." if drafts else "."))
                        return
                    if name in ("accept", "edit", "reject", "next >"):
                        self.position = min(i + 1, len(self.rows) - 1)
                    elif name == "< prev":
                        self.position = max(i - 1, 0)
                    show()
                except (ValueError, FileExistsError) as exc:  # a wrong label or an existing file: said, not raised
                    status.value = f"<span style='color:red'>{html.escape(str(exc))}</span>"
            return handler

        for name, button in buttons.items():
            button.on_click(act(name))
        if self.rows:
            show()
        return w.VBox([view, labels, w.HBox(list(buttons.values())), path, status])
