"""BEIR folders (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) as documents and Questions.

Each document's text is `title + " " + text`, stripped, which is how MTEB and BEIR hand a corpus
to a sentence-transformers model, so figures reproduce theirs. Known datasets are pinned by the
SHA-256 of their files in beir_manifest.json; a folder whose files differ is reported, not used.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from vectrixdb.embedding import file_sha256 as sha256
from vectrixdb.errors import BadInput, ChecksumMismatch, NotFound
from vectrixdb.evaluation.golden.questions import Question

BEIR_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/{name}.zip"


class BeirData(NamedTuple):
    documents: dict[str, str]
    questions: list[Question]
    qrels: dict[str, dict[str, int]]
    folder: Path | None  # None when read from datasets
    checksum: str  # sha256 of corpus.jsonl (of the documents as sorted JSON when read from datasets)


def manifest() -> dict:
    return json.loads(resources.files("vectrixdb.evaluation.golden").joinpath("beir_manifest.json").read_text())


def load_beir(path_or_name: "str | Path | tuple | dict", split: str = "test", *, only_judged: bool = True,
              verify: bool = True) -> BeirData:
    """Read a BEIR folder, or a dataset name from $VECTRIXDB_HOME/beir/<name> (downloading it there
    when a network allows). Questions are the queries with judgements in `split` (all queries when
    only_judged is False); expected holds every judged document with its grade, as the qrels give it.
    Hugging Face `datasets` work too: (corpus, queries, qrels) tables with BEIR's columns (the
    qrels of the split wanted), e.g. from BeIR/scifact and BeIR/scifact-qrels
    (0 = judged not relevant; nDCG uses the grades as gains, the other measures count grades above 0)."""
    if isinstance(path_or_name, (tuple, list, dict)):
        return _from_datasets(path_or_name, only_judged)
    folder = Path(path_or_name).expanduser()
    if not (folder / "corpus.jsonl").exists():
        folder = _fetch(str(path_or_name))
    qrels_path = folder / "qrels" / f"{split}.tsv"
    for needed in (folder / "corpus.jsonl", folder / "queries.jsonl", qrels_path):
        if not needed.exists():
            raise NotFound(f"{needed}: missing; a BEIR folder holds corpus.jsonl, queries.jsonl, qrels/{split}.tsv")
    checksum = sha256(folder / "corpus.jsonl")
    known = manifest().get(folder.name)
    if verify and known and known["corpus.jsonl"] != checksum:
        raise ChecksumMismatch(str(folder / "corpus.jsonl"), known["corpus.jsonl"], checksum,
                               "it is not the published corpus; pass verify=False to use a modified copy")
    documents = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                documents[str(row["_id"])] = (row.get("title", "") + " " + row.get("text", "")).strip()
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        for n, row in enumerate(reader, start=1):
            if n == 1 and row and row[0] == "query-id":
                continue
            if len(row) != 3:
                raise BadInput(f"{qrels_path}, line {n}: expected query-id, corpus-id, score; got {row}")
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    questions = []
    with open(folder / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                qid = str(row["_id"])
                if qid in qrels or not only_judged:
                    questions.append(Question(row["text"], None, dict(qrels.get(qid, {})), qid))
    return BeirData(documents, questions, qrels, folder, checksum)


def _from_datasets(given, only_judged: bool) -> BeirData:
    """BEIR from Hugging Face datasets: (corpus, queries, qrels), or a dict with those keys."""
    from vectrixdb.evaluation.retrieval.interop import beir_from_datasets

    parts = [given[k] for k in ("corpus", "queries", "qrels")] if isinstance(given, dict) else list(given)
    if len(parts) != 3:
        raise BadInput("load_beir takes datasets as (corpus, queries, qrels)")
    documents, texts, qrels = beir_from_datasets(*parts)
    questions = [Question(text, None, dict(qrels.get(qid, {})), qid) for qid, text in texts.items()
                 if qid in qrels or not only_judged]
    digest = hashlib.sha256(json.dumps(documents, sort_keys=True).encode("utf-8")).hexdigest()
    return BeirData(documents, questions, qrels, None, digest)


def _fetch(name: str) -> Path:
    from vectrixdb.embedding import home

    target = home() / "beir" / name
    if (target / "corpus.jsonl").exists():
        return target
    if name not in manifest():
        raise NotFound(f"{name}: not a BEIR folder (no corpus.jsonl) and not a dataset this library knows "
                                f"({sorted(manifest())})")
    import io
    import urllib.request
    import zipfile

    url = BEIR_URL.format(name=name)
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            data = response.read()
    except OSError as exc:
        raise NotFound(
            f"BEIR dataset {name!r} is not on this machine and could not be downloaded ({exc}). "
            f"Unzip {url} so that {target}/corpus.jsonl exists, or pass the folder's path."
        ) from None
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{name}.{os.getpid()}")
    zipfile.ZipFile(io.BytesIO(data)).extractall(tmp)
    inner = tmp / name if (tmp / name).exists() else tmp
    got = sha256(inner / "corpus.jsonl")
    if got != manifest()[name]["corpus.jsonl"]:
        raise ChecksumMismatch(f"{url} (corpus.jsonl)", manifest()[name]["corpus.jsonl"], got,
                               "the download is damaged or was changed; it is not used")
    inner.rename(target)
    return target
