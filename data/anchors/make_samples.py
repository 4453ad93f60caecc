"""Writes the samples in this folder with the peers' own classes and savers (run once, by hand):

    .cache/interop/bin/python data/anchors/make_samples.py   # ragas and DeepEval (`make interop`)
    .venv/bin/python data/anchors/make_samples.py vecta      # Vecta (in the test extra)

Every row is about the documents of data/sample/ (doc ids are their file names)."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NO_FEES = "Deferred payments carry no late fees and are not reported to credit bureaus as missed."
OVERPAY = "Borrowers may overpay up to 10% of the balance a year without penalty."
REWORDED = "If you are displaced you can get a temporary overdraft of up to 1,000 with no credit check."


def ragas() -> None:
    from ragas.dataset_schema import SingleTurnSample
    from ragas.testset.synthesizers.testset_schema import Testset, TestsetSample

    samples = [
        SingleTurnSample(user_input="Are deferred loan payments reported to credit bureaus?",
                         reference="No: they carry no late fees and are not reported as missed.",
                         reference_contexts=[NO_FEES], persona_name="customer in a disaster area"),
        SingleTurnSample(user_input="How long do I have to dispute a card charge?",
                         reference="Up to 120 days after the statement date.", reference_context_ids=["card-fraud.md"]),
        SingleTurnSample(user_input="Can displaced customers borrow without a credit check?",
                         reference="Yes, a temporary overdraft of up to 1,000 for 60 days.",
                         reference_contexts=[REWORDED]),
    ]
    Testset(samples=[TestsetSample(eval_sample=s, synthesizer_name="single_hop_specific_query_synthesizer")
                     for s in samples]).to_jsonl(os.path.join(HERE, "ragas_testset.jsonl"))


def deepeval() -> None:
    from deepeval.dataset import EvaluationDataset, Golden

    goldens = [
        Golden(input="How much of my mortgage can I overpay each year without a penalty?",
               expected_output="Up to 10% of the balance a year.", context=[OVERPAY], source_file="mortgage-rates.md"),
        Golden(input="How many free withdrawals does the standard savings account allow?",
               expected_output="Six a month.", source_file="data/sample/savings.txt", name="savings-1"),
        Golden(input="Is there a credit check for the temporary overdraft?", expected_output="No.",
               context=[REWORDED]),
    ]
    EvaluationDataset(goldens=goldens).save_as("json", HERE, file_name="deepeval_goldens")


def vecta() -> None:
    from vecta import BenchmarkEntry, VectaClient

    entries = [BenchmarkEntry(id="v1", question="Within how many days must a deferment be requested?",
                              answer="Within 90 days of the disaster declaration.", source_paths=["deferment.md"]),
               BenchmarkEntry(id="v2", question="When is savings interest paid?",
                              answer="On the first business day of each month.", page_nums=[1],
                              source_paths=["/data/sample/savings.txt"])]
    with open(os.path.join(HERE, "vecta_benchmark.jsonl"), "w", encoding="utf-8") as fh:
        fh.writelines(e.model_dump_json() + "\n" for e in entries)
    client = VectaClient(openai_api_key=None)
    client.benchmark_entries = entries
    client.save_benchmark(os.path.join(HERE, "vecta_benchmark.csv"))


if __name__ == "__main__":
    if sys.argv[1:] == ["vecta"]:
        vecta()
    else:
        ragas()
        deepeval()
    print(json.dumps(sorted(os.listdir(HERE))))
