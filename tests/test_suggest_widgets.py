"""Label suggestions, the `golden label` command and the review widget's logic (headless)."""
import json

import pytest
from typer.testing import CliRunner

from tests.test_golden import BEDROCK_ROW
from vectrixdb.cli.commands import app
from vectrixdb.evaluation import Question, check_golden, load_questions, suggest_expected
from vectrixdb.widgets import LabelReview, highlight


def bedrock_file(tmp_path):
    rows = [BEDROCK_ROW,
            {"conversationTurns": [{"prompt": {"content": [{"text": "Is a stolen card my problem?"}]},
                                    "referenceResponses": [{"content": [{"text": "You are not liable for charges after you report a stolen card."}]}]}]}]
    path = tmp_path / "bedrock.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return str(path)


def test_suggest_searches_with_the_reference_and_changes_nothing(policies, tmp_path):
    questions = load_questions(bedrock_file(tmp_path))
    before = list(questions)
    proposals = suggest_expected(policies, questions)
    first, second = (q.key() for q in questions[:2])  # rows without an id are named by their text
    assert first.startswith("q-") and proposals[first][0] == "deferment" and proposals[second][0] == "card-fraud"
    assert questions == before and not any(q.expected for q in questions)
    pages = suggest_expected(policies, questions, by="page", k=1)
    assert pages[first] == ["deferment#page=1"]


def test_golden_label_writes_drafts_and_refuses_an_existing_file(policies, tmp_path):
    out = tmp_path / "golden.jsonl"
    args = ["golden", "label", "test", "--questions", bedrock_file(tmp_path), "--out", str(out),
            "--path", str(policies.folder.parent)]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["draft"] is True for r in rows) and rows[0]["expected"][0] == "deferment"
    check = check_golden(str(out), policies)
    assert check.ok and len([f for f in check.notes if f.field == "draft"]) == 2
    out.write_text("checked by a person\n")
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 4 and "never written over" in done.output  # AlreadyExists (cli.EXIT_CODES)
    assert out.read_text() == "checked by a person\n"


def test_golden_check_exit_codes(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text('{"question": "q?", "expected": ["a"]}\n')
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q?", "expeted": ["a"]}\n')
    assert CliRunner().invoke(app, ["golden", "check", str(good)]).exit_code == 0
    done = CliRunner().invoke(app, ["golden", "check", str(bad)])
    assert done.exit_code == 1 and "did you mean 'expected'" in done.output


def test_review_accept_edit_reject_and_save(policies, tmp_path):
    review = LabelReview(policies, load_questions(bedrock_file(tmp_path)) + [Question("Overpaying a mortgage?", "Up to 10% a year.")])
    assert len(review) == 3
    assert "<mark>" in review.row_html(0)
    review.accept(0)
    review.edit(1, ["card-fraud", " card-fraud#page=1 "])
    with pytest.raises(ValueError):
        review.edit(2, [" "])
    assert review.summary() == {"accept": 1, "edit": 1, "reject": 0, "undecided": 1}
    saved = review.save(str(tmp_path / "reviewed.jsonl"))
    rows = load_questions(saved)
    assert [r.draft for r in rows] == [False, False, True]
    assert rows[1].expected == ("card-fraud", "card-fraud#page=1")
    review.reject(2)
    with pytest.raises(FileExistsError):
        review.save(saved)
    assert len(load_questions(review.save(str(tmp_path / "second.jsonl")))) == 2


def test_widget_builds_and_its_buttons_act(policies, tmp_path):
    review = LabelReview(policies, load_questions(bedrock_file(tmp_path)))
    box = review.widget(str(tmp_path / "out.jsonl"))
    buttons = {b.description: b for b in box.children[2].children}
    buttons["accept"].click()
    assert review.decisions[0][0] == "accept" and review.position == 1
    buttons["reject"].click()
    buttons["save"].click()
    assert box.children[4].value.startswith("Saved 1 question") and (tmp_path / "out.jsonl").exists()


def test_highlight_escapes_html():
    assert highlight("<b>loan</b> payments", "loan payments") == "&lt;b&gt;<mark>loan</mark>&lt;/b&gt; <mark>payments</mark>"


def test_accept_takes_the_labels_in_the_box_checks_them_and_resumes(policies, tmp_path):
    questions = load_questions(bedrock_file(tmp_path))
    review = LabelReview(policies, questions)
    box = review.widget(str(tmp_path / "out.jsonl"))
    text, buttons = box.children[1], {b.description: b for b in box.children[2].children}
    text.value = "mortgage"  # the person narrowed the suggestions to one document
    buttons["accept"].click()
    assert review.decisions[0] == ("accept", ("mortgage",))
    text.value = "no-such-doc, deferment#page=9"
    buttons["edit"].click()
    status = box.children[4].value
    assert "no-such-doc&#x27; is not a document of this collection" in status and 1 not in review.decisions
    with pytest.raises(ValueError, match="has 1 pages, not page 9"):
        review.edit(1, ["deferment#page=9"])
    side = tmp_path / "out.jsonl.decisions.json"
    assert side.exists()
    again = LabelReview(policies, questions)
    again.widget(str(tmp_path / "out.jsonl"))  # reopened: the decisions come back, the next row is shown
    assert again.decisions == {0: ("accept", ("mortgage",))} and again.position == 1


def test_suggestions_search_with_the_question_and_the_reference(policies):
    """The question names one policy and the reference another: each source alone proposes its own;
    joined (the default: both as one text, hybrid) and both (reciprocal rank fusion of the two
    searches) propose the two of them."""
    from vectrixdb.errors import BadInput

    row = Question("How do I report a stolen card?", "Borrowers may overpay up to 10% of the balance a year.", id="mixed")
    for mode in ("dense", "hybrid"):
        first = {using: suggest_expected(policies, [row], k=1, using=using, mode=mode)["mixed"]
                 for using in ("question", "reference")}
        assert first == {"question": ["card-fraud"], "reference": ["mortgage"]}
        for using in ("both", "joined"):
            assert set(suggest_expected(policies, [row], k=2, relative=0, using=using, mode=mode)["mixed"]) == {
                "card-fraud", "mortgage"}
    assert suggest_expected(policies, [row]) == suggest_expected(policies, [row], using="joined", mode="hybrid")
    alone = Question("How do I report a stolen card?", id="alone")  # no reference: every source is the question
    assert {using: suggest_expected(policies, [alone], k=2, using=using)["alone"] for using in ("joined", "both")} == {
        "joined": suggest_expected(policies, [alone], k=2, using="question")["alone"],
        "both": suggest_expected(policies, [alone], k=2, using="question")["alone"]}
    with pytest.raises(BadInput, match="using must be one of"):
        suggest_expected(policies, [row], using="answer")
