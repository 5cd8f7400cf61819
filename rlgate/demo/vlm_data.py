"""Generated VLM data in the formats of ChartQA, MMMU (validation) and MathVista (testmini).

Charts are drawn with matplotlib from seeded tables; every question's answer is computed from the
table, so lm-eval's own scorers can grade what a model says. Rows are JSON lines that reference
PNG files in an `images/` folder beside them (relative paths), which is what rlgate's `data_files`
reads. Each chart is drawn, saved and closed before the next, and rows are written as they are
made, so generating 10,000 images holds one figure in memory, not 10,000.

ChartQA rows: `image`, `query`, `label` (list), `human_or_machine` (0 human-written, 1 augmented,
as in HuggingFaceM4/ChartQA), plus `table` (series -> category -> value) that rlgate's badcase
classifier uses to spot answers naming another row or series. MMMU rows: `id`
(`validation_<Subject>_<n>`), `question` with `<image 1>`, `options` (a Python list literal),
`answer`, `question_type`, `image_1`..`image_7`, `subfield`. MathVista rows: `pid`, `question`,
`query`, `image`, `choices`, `unit`, `precision`, `answer`, `question_type`, `answer_type`,
`metadata` (with `skills`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERIES = ["Sales", "Costs", "Profit", "Visitors", "Orders", "Returns"]
CATEGORIES = ["North", "South", "East", "West", "Central", "Coast", "Hills", "Lakes"]
YEARS = [str(y) for y in range(2015, 2025)]
#: MMMU's thirty validation subjects (lm-eval's mmmu_val_* dataset_name values).
MMMU_SUBJECTS = [
    "Accounting", "Agriculture", "Architecture_and_Engineering", "Art", "Art_Theory", "Basic_Medical_Science",
    "Biology", "Chemistry", "Clinical_Medicine", "Computer_Science", "Design",
    "Diagnostics_and_Laboratory_Medicine", "Economics", "Electronics", "Energy_and_Power", "Finance",
    "Geography", "History", "Literature", "Manage", "Marketing", "Materials", "Math", "Mechanical_Engineering",
    "Music", "Pharmacy", "Physics", "Psychology", "Public_Health", "Sociology"]
MATHVISTA_PROMPT = ("Hint: Please answer the question and provide the final answer at the end.\n"
                    "Question: {question}")


@dataclass
class Chart:
    """A table and the chart drawn from it."""

    kind: str  # bar | line
    title: str
    categories: list[str]
    table: dict[str, dict[str, int]]  # series -> category -> value


@dataclass
class VlmCounts:
    """What `write_vlm_data` wrote: rows per task and the images."""

    chartqa: int = 0
    mmmu: int = 0
    mathvista: int = 0
    images: int = 0
    files: dict[str, Path] = field(default_factory=dict)


# --------------------------------------------------------------------------- tables and drawing
def random_chart(rng: random.Random) -> Chart:
    kind = rng.choice(["bar", "line"])
    if kind == "bar":
        cats = rng.sample(CATEGORIES, rng.randint(3, 5))
        series = rng.sample(SERIES, rng.randint(1, 2))
    else:
        start = rng.randint(0, len(YEARS) - 5)
        cats = YEARS[start:start + rng.randint(4, 5)]
        series = rng.sample(SERIES, rng.randint(1, 2))
    table = {s: {c: rng.randint(1, 20) * 5 for c in cats} for s in series}
    return Chart(kind, f"{' and '.join(series)} by {'region' if kind == 'bar' else 'year'}", cats, table)


def draw(chart: Chart, path: Path, size: tuple[int, int] = (320, 240)) -> None:
    """Draw the chart with value labels (as real ChartQA charts often have) and save it as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dpi = 80
    fig, ax = plt.subplots(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi)
    try:
        names = list(chart.table)
        width = 0.8 / len(names)
        for k, name in enumerate(names):
            values = [chart.table[name][c] for c in chart.categories]
            if chart.kind == "bar":
                xs = [i + k * width for i in range(len(chart.categories))]
                bars = ax.bar(xs, values, width=width, label=name)
                ax.bar_label(bars, fontsize=6)
            else:
                ax.plot(chart.categories, values, marker="o", label=name)
                for x, v in zip(chart.categories, values, strict=True):
                    ax.annotate(str(v), (x, v), fontsize=6, textcoords="offset points", xytext=(0, 3))
        if chart.kind == "bar":
            ax.set_xticks([i + width * (len(names) - 1) / 2 for i in range(len(chart.categories))])
            ax.set_xticklabels(chart.categories, fontsize=7)
        ax.set_title(chart.title, fontsize=8)
        ax.legend(fontsize=6)
        ax.tick_params(labelsize=6)
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)


# --------------------------------------------------------------------------- questions from the table
def chart_questions(chart: Chart, rng: random.Random) -> list[tuple[str, str, int]]:
    """(query, answer, human_or_machine) pairs whose answers follow from the table."""
    series = rng.choice(list(chart.table))
    values = chart.table[series]
    a, b = rng.sample(chart.categories, 2)
    top = max(chart.categories, key=lambda c: (values[c], c))
    unit = "region" if chart.kind == "bar" else "year"
    return [
        (f"What is the value of {series} in {a}?", str(values[a]), 0),
        (f"Which {unit} has the highest {series}?", top, 1),
        (f"What is the difference between {series} in {a} and {b}?", str(abs(values[a] - values[b])), 1),
        (f"Is {series} in {a} greater than in {b}?", "Yes" if values[a] > values[b] else "No", 0),
    ]


def reference_response(answer: str) -> str:
    """The answer in the `Final Answer:` format lm-eval's chartqa scorer parses."""
    return f"Final Answer: {answer}"


# --------------------------------------------------------------------------- rows per format
def chartqa_rows(chart: Chart, image: str, rng: random.Random) -> Iterator[dict[str, Any]]:
    for query, answer, origin in chart_questions(chart, rng):
        yield {"image": image, "query": query, "label": [answer], "human_or_machine": origin,
               "table": chart.table}


def mmmu_row(chart: Chart, image: str, subject: str, n: int, rng: random.Random) -> dict[str, Any]:
    series = rng.choice(list(chart.table))
    values = chart.table[series]
    cat = rng.choice(chart.categories)
    right = values[cat]
    wrong = sorted({right + d for d in (-10, -5, 5, 10, 15) if right + d > 0} - {right})
    options = [str(x) for x in rng.sample(wrong, 3)] + [str(right)]
    rng.shuffle(options)
    row: dict[str, Any] = {
        "id": f"validation_{subject}_{n}", "question": f"<image 1> What is the value of {series} in {cat}?",
        "options": repr(options), "answer": "ABCD"[options.index(str(right))], "question_type": "multiple-choice",
        "subfield": subject.replace("_", " "), "img_type": "['Plots and Charts']", "topic_difficulty": "Easy",
        "explanation": "", "image_1": image}
    for k in range(2, 8):
        row[f"image_{k}"] = None
    return row


def mathvista_row(chart: Chart, image: str, pid: int, rng: random.Random) -> dict[str, Any]:
    series = rng.choice(list(chart.table))
    values = chart.table[series]
    kind = rng.choice(["sum", "mean", "choice"])
    if kind == "sum":
        question = f"What is the total of {series} over all {len(values)} bars or points?"
        answer, answer_type, choices, precision = str(sum(values.values())), "integer", None, None
        skills = ["statistical reasoning", "arithmetic reasoning"]
    elif kind == "mean":
        question = f"What is the average of {series}? Round to one decimal place."
        answer = f"{sum(values.values()) / len(values):.1f}"
        answer_type, choices, precision = "float", None, 1
        skills = ["statistical reasoning"]
    else:
        a, b = rng.sample(chart.categories, 2)
        question = f"Which is larger: {series} in {a} or in {b}?"
        choices = [a, b]
        answer, answer_type, precision = (a if values[a] >= values[b] else b), "text", None
        skills = ["logical reasoning", "statistical reasoning"]
    question_type = "multi_choice" if choices else "free_form"
    query = MATHVISTA_PROMPT.format(question=question)
    if choices:
        query += "\nChoices:\n" + "\n".join(f"({'ABCD'[i]}) {c}" for i, c in enumerate(choices))
    return {"pid": str(pid), "question": question, "query": query, "image": image, "choices": choices,
            "unit": None, "precision": precision, "answer": answer, "question_type": question_type,
            "answer_type": answer_type,
            "metadata": {"skills": skills, "task": "figure question answering", "context": "bar chart"
                         if chart.kind == "bar" else "line plot", "source": "rlgate-generated",
                         "split": "testmini"}}


# --------------------------------------------------------------------------- writing
def write_vlm_data(folder: Path, *, seed: int = 0, chartqa_charts: int = 10, mmmu_per_subject: int = 1,
                   mathvista: int = 12, size: tuple[int, int] = (320, 240)) -> VlmCounts:
    """ChartQA, MMMU and MathVista rows plus their PNGs under `folder`, streamed to disk."""
    rng = random.Random(seed)
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    counts = VlmCounts()
    targets = {"chartqa": folder / "chartqa" / "test.jsonl", "mmmu": folder / "mmmu" / "validation.jsonl",
               "mathvista": folder / "mathvista" / "testmini.jsonl"}
    for path in targets.values():
        path.parent.mkdir(parents=True, exist_ok=True)

    def new_image(prefix: str, n: int) -> tuple[Chart, str]:
        chart = random_chart(rng)
        name = f"{prefix}_{n:05d}.png"
        draw(chart, images / name, size)
        counts.images += 1
        return chart, f"../images/{name}"

    with targets["chartqa"].open("w", encoding="utf-8") as out:
        for n in range(chartqa_charts):
            chart, ref = new_image("chart", n)
            for row in chartqa_rows(chart, ref, rng):
                out.write(json.dumps(row) + "\n")
                counts.chartqa += 1
    with targets["mmmu"].open("w", encoding="utf-8") as out:
        for subject in MMMU_SUBJECTS if mmmu_per_subject else []:
            for n in range(1, mmmu_per_subject + 1):
                chart, ref = new_image(f"mmmu_{subject.lower()}", n)
                out.write(json.dumps(mmmu_row(chart, ref, subject, n, rng)) + "\n")
                counts.mmmu += 1
    with targets["mathvista"].open("w", encoding="utf-8") as out:
        for n in range(mathvista):
            chart, ref = new_image("mathvista", n)
            out.write(json.dumps(mathvista_row(chart, ref, n + 1, rng)) + "\n")
            counts.mathvista += 1
    counts.files = targets
    return counts
