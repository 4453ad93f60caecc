"""How the package's own report kinds are shown (present/shows.py says what each field means);
the kinds themselves are declared in evaluation/runs/kinds_builtin.py, which names nothing here."""
from __future__ import annotations

from typing import Any

from vectrixdb.evaluation.runs.kinds import Judged
from vectrixdb.present import certificate, decisions, views
from vectrixdb.present.shows import SHOWS, show


def embedders_tables(report) -> list[dict[str, Any]]:
    """An embedder comparison's certificate tables (evaluation/retrieval/embedders_compare.py draws them)."""
    from vectrixdb.evaluation.retrieval.embedders_compare import embedders_tables as tables

    return tables(report)


RANKED_JUDGED = Judged(decisions.ranked_unjudged, decisions.ranked_measures)  # a retrieval report: its grain
LEVEL_JUDGED = Judged(decisions.level_unjudged, decisions.level_measures,  # a run_evaluation run with chunks
                      lambda report: report.get("type") in ("Retrieval", "RAG"))
BUILTIN: dict[str, dict[str, Any]] = {
    "evaluation": dict(appendix=certificate.evaluation_appendix, judged=LEVEL_JUDGED),
    "retrieval": dict(judged=RANKED_JUDGED),
    "evaluate": dict(certificate=certificate.setup_tables),
    "chunking": dict(section="_chunking.html", view=views.chunking_view, certificate=certificate.chunking_tables,
                     appendix=certificate.chunking_appendix),
    "experiment": dict(section="_experiment.html"),
    "embedders": dict(certificate=embedders_tables),
}

for _name, _hooks in BUILTIN.items():
    if _name not in SHOWS:  # imported again (a reload): already shown
        show(_name, **_hooks)
