"""Golden files and labels: the questions a run is scored on, read, checked and labelled.

    questions.py    the Question record, label syntax (doc, doc#page=N, doc::n), rows, Bedrock rows
    files.py        load_questions (every format), read_golden (a checked file), questions_of
    schema.py       check_golden: every way a file falls short of golden.schema.json
    label_check.py  labels against a collection (each must name what it holds); Finding
    labels.py       retrieval results read (Result, from any retriever's output); Vecta's levels
    grain.py        the grains doc, page, chunk, evidence: one Grain each, which reads labels
                    and matches hits (what counts as a right result at it)
    anchors.py      ragas and DeepEval rows read in; anchors_write.py writes them back out
    foreign.py      Vecta rows read in
    beir.py         BEIR folders as documents and Questions (beir_manifest.json: checksums)
    suggest.py      suggest_expected: labels proposed by searching

Bottom of evaluation/: questions.py imports nothing above it, and the readers (foreign, anchors,
schema) build on it; files.py sits on top of them.
"""
