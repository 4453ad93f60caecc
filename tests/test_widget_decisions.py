"""LabelReview: a person's decision in the widget wins over later code; the status is a sentence;
the label box names each document once (issue 30 item 2)."""
import json

import pytest

from tests.test_suggest_widgets import bedrock_file
from vectrixdb.evaluation import Question, load_questions, suggest_expected
from vectrixdb.widgets import LabelReview


def _box(review, tmp_path):
    box = review.widget(str(tmp_path / "out.jsonl"))
    return box, box.children[1], {b.description: b for b in box.children[2].children}, box.children[4]


def test_a_widget_edit_survives_later_code_unless_the_code_overrules(policies, tmp_path):
    review = LabelReview(policies, load_questions(bedrock_file(tmp_path)))
    box, text, buttons, status = _box(review, tmp_path)
    text.value = "mortgage"
    buttons["edit"].click()  # the person's decision on row 1
    assert review.decisions[0] == ("edit", ("mortgage",)) and review.made_in[0] == "widget"
    with pytest.warns(UserWarning, match=r"row 1 .* was decided in the widget \(edit mortgage\); accept in code was not applied"):
        assert review.accept(0) is False
    assert review.decisions[0] == ("edit", ("mortgage",))
    assert review.reject(1) is True  # a row nobody decided in the widget takes the code's decision
    assert review.accept(1) is True and review.decisions[1][0] == "accept"  # code replaces code freely
    side = json.loads((tmp_path / "out.jsonl.decisions.json").read_text())["decisions"]
    saved = load_questions(review.save(str(tmp_path / "golden.jsonl")))
    assert saved[0].expected == ("mortgage",) and side[review.rows[0]["key"]] == ["edit", ["mortgage"], "widget"]
    assert side[review.rows[1]["key"]][2] == "code"  # the saved file and the side file agree, and say who decided
    assert review.edit(0, ["deferment"], overrule=True) is True
    assert review.decisions[0] == ("edit", ("deferment",)) and review.made_in[0] == "code"


def test_a_resumed_widget_decision_still_wins_and_old_side_files_count_as_the_widgets(policies, tmp_path):
    questions = load_questions(bedrock_file(tmp_path))
    first = LabelReview(policies, questions, autosave=str(tmp_path / "side.json"))
    first.edit(0, ["mortgage"], by="widget")
    again = LabelReview(policies, questions, autosave=str(tmp_path / "side.json"))
    with pytest.warns(UserWarning, match="decided in the widget"):
        assert again.reject(0) is False
    old = tmp_path / "old.json"  # a side file written before decisions said who made them
    old.write_text(json.dumps({questions[0].key(): ["accept", ["deferment"]]}))
    older = LabelReview(policies, questions, autosave=str(old))
    assert older.made_in == {0: "widget"}
    with pytest.warns(UserWarning):
        assert older.edit(0, ["card-fraud"]) is False
    with pytest.raises(ValueError, match="by must be 'widget' or 'code'"):
        older.reject(1, by="notebook")


def test_the_status_is_a_sentence_and_the_box_names_each_document_once(policies, tmp_path):
    row = Question("Can I defer a loan payment after a disaster, and are there late fees?",
                   "Customers in disaster areas can defer loan payments with no late fees.", id="defer")
    review = LabelReview(policies, [row], k=3, mode="dense")  # cosine scores: the cut is a real one
    scores = [s["score"] for s in review.rows[0]["suggestions"]]
    assert len(scores) == 3 and review.proposed(0) == ["deferment"]  # suggest_expected's cut: the others score
    assert all(s < 0.8 * scores[0] for s in scores[1:])              # under 0.8 x the best, shown but not proposed
    assert review.row_html(0).count("below the cut") == 2
    assert review.proposed(0) == suggest_expected(policies, [row], k=3, mode="dense")["defer"]
    box, text, buttons, status = _box(review, tmp_path)
    assert text.value == "deferment"
    assert status.value == ("0 of 1 question decided (0 accepted, 0 edited, 0 rejected); 1 left as draft. "
                            f"Decisions are kept in {tmp_path / 'out.jsonl'}.decisions.json as you make them.")
    assert load_questions(review.save(str(tmp_path / "drafts.jsonl")))[0].expected == ("deferment",)
    buttons["accept"].click()
    assert status.value.startswith("1 of 1 question decided (1 accepted, 0 edited, 0 rejected); 0 left as drafts.")
    buttons["save"].click()
    assert status.value == f"Saved 1 question to {tmp_path / 'out.jsonl'} (1 accepted, 0 edited, 0 left as drafts)."
    assert "{" not in status.value


def test_a_decision_made_in_code_shows_in_the_drawn_widget_at_once(policies, tmp_path):
    review = LabelReview(policies, load_questions(bedrock_file(tmp_path)))
    box, text, buttons, status = _box(review, tmp_path)
    assert status.value.startswith("0 of 2 questions decided")
    review.accept(0)
    assert status.value.startswith("1 of 2 questions decided (1 accepted")
    assert "decision: accept" in box.children[0].value  # the row shown, as decided
    review.edit(1, ["mortgage"])
    assert status.value.startswith("2 of 2 questions decided (1 accepted, 1 edited, 0 rejected)")


def test_every_question_is_accounted_for_when_saved(policies, tmp_path):
    """Accepted, edited and undecided rows go to the golden file (undecided ones as drafts); the
    rejected ones, and an undecided row with nothing proposed, to the set-aside file beside it, each
    saying why; the message counts each."""
    questions = load_questions(bedrock_file(tmp_path)) + [Question("zzz qqq", None, id="odd"),
                                                           Question("Overpaying a mortgage?", "Up to 10% a year.", id="over"),
                                                           Question("qqq zzz", None, id="nothing")]
    review = LabelReview(policies, questions)
    review.rows[-1]["proposed"] = []  # a row whose search proposed nothing
    review.accept(0), review.reject(1), review.edit(2, ["mortgage"])
    path = review.save(str(tmp_path / "golden.jsonl"))
    aside = [json.loads(line) for line in (tmp_path / "golden.set_aside.jsonl").read_text().splitlines()]
    kept = load_questions(path)  # a golden file; the set-aside rows have no labels, so they are not one
    assert [q.draft for q in kept] == [False, False, True] and len(kept) + len(aside) == len(questions)
    assert sorted(row["hint"] for row in aside) == ["rejected in review", "undecided, and no label was proposed"]
    assert review.saved_message() == (f"Saved 3 questions to {path} (1 accepted, 1 edited, 1 left as draft); 2 set "
                                      f"aside in {tmp_path / 'golden.set_aside.jsonl'} (1 rejected, 1 with no label "
                                      "proposed).")


def test_a_resumed_review_may_save_over_its_own_unchanged_file(policies, tmp_path):
    questions = load_questions(bedrock_file(tmp_path))
    side, path = str(tmp_path / "side.json"), str(tmp_path / "golden.jsonl")
    first = LabelReview(policies, questions, autosave=side)
    first.accept(0)
    first.save(path)
    later = LabelReview(policies, questions, autosave=side)  # a new session, the same side file
    later.reject(0)
    assert later.save(path, overwrite=True) == path and len(load_questions(path)) == len(questions) - 1
    (tmp_path / "golden.jsonl").write_text("{}\n")  # a person's edit since
    with pytest.raises(FileExistsError, match="not a file this review saved unchanged"):
        LabelReview(policies, questions, autosave=side).save(path, overwrite=True)


def test_save_overwrites_only_a_file_this_review_wrote_unchanged(policies, tmp_path):
    review = LabelReview(policies, load_questions(bedrock_file(tmp_path)))
    path = str(tmp_path / "golden.jsonl")
    review.save(path)
    review.accept(0)
    with pytest.raises(FileExistsError):
        review.save(path)  # never over an existing file unless asked
    assert review.save(path, overwrite=True) == path  # its own file, unchanged: the cell can run again
    assert load_questions(path)[0].draft is False
    (tmp_path / "golden.jsonl").write_text((tmp_path / "golden.jsonl").read_text() + "\n")  # a person touched it
    with pytest.raises(FileExistsError, match="not a file this review saved unchanged"):
        review.save(path, overwrite=True)
    mine = tmp_path / "mine.jsonl"
    mine.write_text("a person's file\n")
    with pytest.raises(FileExistsError):
        LabelReview(policies, []).save(str(mine), overwrite=True)
    assert mine.read_text() == "a person's file\n"
