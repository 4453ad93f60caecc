"""Review suggested labels in a notebook: accept, edit or reject each, then save a new golden file.

`LabelReview` holds the decisions and is plain Python (tested headless); `.widget()` draws it with
ipywidgets: the question and its reference answer, each hit the suggestion was drawn from with the
passage that matched and the answer's words highlighted in it (marked proposed, or below the cut),
an edit box holding the proposed labels, and buttons to accept (the labels in the box), edit or
reject. Labels are proposed by suggest_expected's rule: the documents (by="doc") or pages
(by="page") of the hits scoring at least `relative` times the best. Accepted and edited rows lose
`draft`; rows nobody decided stay drafts; rejected rows, and undecided rows with nothing proposed,
go to a second file beside the saved one (`<name>.set_aside.jsonl`), so every question is
accounted for, and `saved_message()` says how many went where. Labels a person types are checked
against the collection (the document must be there, the page within it). Saving never writes over
an existing file. A decision made in code shows in a drawn widget at once.

Decisions are kept as they are made in a side file (`autosave=`, by default `<save path>.decisions.json`
once the widget is drawn), keyed by each question's name, so a review that was closed half-way
resumes where it stopped. The side file also records the digest of each file the review saved, so
a review resumed in a new session may save over its own earlier file (overwrite=True) as long as
nobody changed it.

A person's decision wins: a row decided in the widget (now, or in a resumed side file) keeps that
decision when code later calls accept/edit/reject on it; the call changes nothing, warns naming the
row and returns False. Code replaces it only when it says so (`overrule=True`). Decisions made in
code replace each other freely. The side file records who made each decision (`"widget"` or
`"code"`); an entry from before that was recorded is taken as the widget's.

`pool_review(report, db, questions)` is a LabelReview over a pool's unjudged results (pooling.pool);
pooling.merge turns its decisions into graded labels.
"""
from __future__ import annotations

import html
import json
import re
import warnings
from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from vectrixdb.errors import AlreadyExists, BadInput
from vectrixdb.extras import needs
from vectrixdb.evaluation.golden.questions import Question, save_questions, split_label
from vectrixdb.roles import Collection, Questions

if TYPE_CHECKING:
    from vectrixdb.evaluation.golden.grain import Grain
    from vectrixdb.evaluation.runs.report import Report

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]{3,}")


def highlight(passage: str, answer: str | None) -> str:
    """HTML of the passage with the answer's words (four letters or more) marked."""
    words = {w.casefold() for w in _WORD.findall(answer or "")}
    escaped = html.escape(passage)
    if not words:
        return escaped
    return _WORD.sub(lambda m: f"<mark>{m.group(0)}</mark>" if m.group(0).casefold() in words else m.group(0), escaped)


class LabelReview:
    def __init__(self, db: Collection, questions: list[Question], *, k: int = 3, by: str | Grain = "doc",
                 relative: float = 0.8, autosave: str | None = None, **search):
        from vectrixdb.evaluation.golden.suggest import suggest_with_passages

        self.db = db
        self.rows = suggest_with_passages(db, questions, k=k, by=by, relative=relative, **search)
        self.relative = relative
        self.decisions: dict[int, tuple[str, tuple[str, ...]]] = {}
        self.made_in: dict[int, str] = {}  # row -> "widget" or "code": who made its decision
        self._saved: dict[str, str] = {}  # path -> sha256 of the bytes this review wrote there
        self._listeners: list[Callable[[], None]] = []  # a drawn widget's refresh, run after every decision
        self.last_save: dict | None = None
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
        if "decisions" in kept and isinstance(kept["decisions"], dict):  # the file as written now
            self._saved.update(kept.get("saved") or {})
            kept = kept["decisions"]
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
        self._keep()
        for refresh in self._listeners:
            refresh()
        return True

    def _keep(self) -> None:
        """Write the decisions and the saved files' digests to the side file, when there is one."""
        from vectrixdb import io

        if self.autosave:
            decided = {self.rows[j]["key"]: [k, list(v), self.made_in[j]] for j, (k, v) in self.decisions.items()}
            io.overwrite_owned(self.autosave, json.dumps({"decisions": decided, "saved": self._saved}, indent=1))

    def proposed(self, i: int) -> list[str]:
        """Row i's proposed labels, each once: suggest_expected's rule (the class docstring); for rows
        made elsewhere (pool_review), every suggested label."""
        row = self.rows[i]
        if "proposed" in row:
            return list(row["proposed"])
        return list(dict.fromkeys(s["label"] for s in row["suggestions"]))

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
        """The questions the saved file holds: accepted and edited ones, and undecided ones as drafts
        with their proposed labels (set_aside() has the rest)."""
        return self._sorted()[0]

    def set_aside(self) -> list[Question]:
        """The questions the saved file leaves out, each a draft whose hint says why: rejected in
        review, or undecided with no label proposed or given."""
        return self._sorted()[1]

    def _sorted(self) -> tuple[list[Question], list[Question]]:
        kept, aside = [], []
        for i, row in enumerate(self.rows):
            q: Question = row["question"]
            kind, labels = self.decisions.get(i, ("undecided", ()))
            if kind == "reject":
                aside.append(replace(q, id=q.id or row["key"], draft=True, hint="rejected in review"))
            elif kind != "undecided":
                kept.append(replace(q, id=q.id or row["key"], expected=labels, draft=False))
            elif q.expected or self.proposed(i):
                kept.append(replace(q, id=q.id or row["key"], expected=q.expected or tuple(self.proposed(i)), draft=True))
            else:
                aside.append(replace(q, id=q.id or row["key"], draft=True, hint="undecided, and no label was proposed"))
        return kept, aside

    def save(self, path: str, *, overwrite: bool = False) -> str:
        """Write the reviewed questions as a new golden file; never over an existing file, except,
        with overwrite=True, one this review saved itself and nobody changed since (its bytes are
        still the ones written), so a notebook cell that saves can be run again."""
        import hashlib

        from vectrixdb import io

        kept, aside = self._sorted()
        aside_path = str(path)[: -len(".jsonl")] + ".set_aside.jsonl" if str(path).endswith(".jsonl") \
            else f"{path}.set_aside.jsonl"
        for target, rows in ((str(path), kept), (aside_path, aside)):
            if not rows and target == aside_path:
                continue
            if overwrite and io.exists(target):
                now = hashlib.sha256(io.read_bytes(target)).hexdigest()
                if self._saved.get(target) != now:
                    raise AlreadyExists(f"{target} already exists and is not a file this review saved unchanged; "
                                        "it is never written over")
        for target, rows in ((str(path), kept), (aside_path, aside)):
            if not rows and target == aside_path:
                continue
            lines = [json.dumps(q.to_json(), ensure_ascii=False) for q in rows]
            if overwrite and io.exists(target):
                io.overwrite_owned(target, "\n".join(lines) + "\n" if lines else "")
            else:
                save_questions(rows, target)
            self._saved[target] = hashlib.sha256(io.read_bytes(target)).hexdigest()
        self._keep()
        n = self.summary()
        self.last_save = {"path": str(path), "saved": len(kept), "accepted": n["accept"], "edited": n["edit"],
                          "drafts": len(kept) - n["accept"] - n["edit"], "set_aside": len(aside),
                          "rejected": n["reject"], "aside_path": aside_path if aside else None}
        return str(path)

    def saved_message(self) -> str:
        """Where the last save put every question, as a sentence."""
        s = self.last_save
        if s is None:
            return "Nothing saved yet."
        said = (f"Saved {s['saved']} question{'s' if s['saved'] != 1 else ''} to {s['path']} ({s['accepted']} "
                f"accepted, {s['edited']} edited, {s['drafts']} left as draft{'s' if s['drafts'] != 1 else ''})")
        if s["set_aside"]:
            unlabelled = s["set_aside"] - s["rejected"]
            said += (f"; {s['set_aside']} set aside in {s['aside_path']} ({s['rejected']} rejected"
                     + (f", {unlabelled} with no label proposed" if unlabelled else "") + ")")
        return said + "."

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
            cut = "" if s.get("proposed", True) else f"; below the cut, {self.relative:g} x the best score: not proposed"
            parts.append(f"<p><b>{html.escape(s['label'])}</b> (pages {pages}, score {s['score']:.3f}{cut})<br>"
                         f"<span style='font-size:90%'>{highlight(s['text'][:1200], q.reference)}</span></p>")
        kind = self.decisions.get(i, ("undecided", ()))
        made = f" (made in {self.made_in[i]})" if i in self.made_in else ""
        parts.append(f"<p><i>decision: {kind[0]} {', '.join(kind[1])}{made}</i></p>")
        return "".join(parts)

    def widget(self, out_path: str = "golden.reviewed.jsonl"):
        with needs("notebook"):
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
                        self.save(path.value)
                        status.value = html.escape(self.saved_message())
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
            self._listeners.append(show)  # a decision made in code shows at once
        return w.VBox([view, labels, w.HBox(list(buttons.values())), path, status])


def pool_review(report: Report, db: Collection, questions: Questions, *, autosave: str | None = None) -> LabelReview:
    """A LabelReview over the pooled results of pooling.pool (accept what is relevant, reject the
    rest); turn its decisions into labels with pooling.merge()."""
    from vectrixdb.evaluation.retrieval.pooling import review_rows

    widget = LabelReview(db, [], k=1)
    widget.rows = review_rows(report, questions, db)
    if autosave:
        widget.resume(autosave)
    return widget
