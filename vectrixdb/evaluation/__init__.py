"""Measuring retrieval (and answers) on your own questions.

Names load lazily so `import vectrixdb.evaluation` stays cheap; each lives in the module below.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "Question": "golden.questions", "save_questions": "golden.questions",
    "load_questions": "golden.files", "read_golden": "golden.files",
    "save_ragas": "golden.anchors_write", "save_deepeval": "golden.anchors_write",
    "check_golden": "golden.schema", "GoldenCheck": "golden.schema", "Finding": "golden.schema",
    "suggest_expected": "golden.suggest",
    "load_beir": "golden.beir", "BeirData": "golden.beir",
    "Report": "runs.report", "load_report": "runs.report",
    "answer_report": "generation.answers", "calibrate": "generation.answers",
    "run_evaluation": "runs.pipeline",
    "compare_runs": "runs.experiments",
    "questions_needed": "runs.power", "ppi_mean": "runs.ppi",
    "ChatWriter": "vectrixdb.chat.writer",
    "write_golden": "writing.write", "Written": "writing.summary", "audit_golden": "writing.audit",
    "PassageConfig": "writing.config", "KindConfig": "writing.config", "CheckConfig": "writing.config",
    "CriticConfig": "writing.config", "EvolutionConfig": "writing.config",
    "retrieval_report": "retrieval.scoring", "evaluate": "retrieval.scoring", "metric_table": "retrieval.metrics",
    "pool": "retrieval.pooling",
    "list_runs": "runs.store", "load_run": "runs.store",
    "answer_cutoff": "retrieval.cutoff",
    "sweep_markdown": "retrieval.sweep",
    "compare_chunking": "chunking.compare",
}
_EXPORTS["sweep"] = "retrieval.sweep"  # the function (its module is vectrixdb.evaluation.retrieval.sweep)
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        where = _EXPORTS[name]
        return getattr(importlib.import_module(where if where.startswith("vectrixdb.") else f"vectrixdb.evaluation.{where}"), name)
    raise AttributeError(f"module 'vectrixdb.evaluation' has no attribute {name!r}")
