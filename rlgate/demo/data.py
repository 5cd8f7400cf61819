"""Generated data for the offline demo, in the formats of GSM8K, MMLU-Pro and IFEval.

Nothing here is copied from those datasets: word problems, multiple-choice questions over invented
terms and instruction prompts are produced from templates with a seeded RNG. Each row has the
fields lm-eval's built-in task reads (`question`/`answer` for gsm8k; `question_id`, `question`,
`options`, `answer`, `answer_index`, `category` for mmlu_pro; `key`, `prompt`,
`instruction_id_list`, `kwargs` for ifeval), so the real tasks score them. Every generator also
returns the reference response a model should learn, which the trainer uses and tests check
against lm-eval's own scorers.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAMES = ["Ada", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lena", "Mia",
         "Noor", "Omar", "Pia", "Raj", "Sam", "Tia", "Uma", "Vik", "Wes", "Yara", "Zoe"]
ITEMS = ["apples", "pencils", "stickers", "marbles", "books", "shells", "cards", "coins", "plums", "stamps",
         "beads", "cups"]
#: MMLU-Pro's fourteen categories, as lm-eval's mmlu_pro subtasks filter them.
CATEGORIES = ["biology", "business", "chemistry", "computer science", "economics", "engineering", "health",
              "history", "law", "math", "other", "philosophy", "physics", "psychology"]
LETTERS = "ABCDEFGHIJ"
TOPICS = ["the ocean", "a small garden", "city buses", "winter mornings", "a quiet library", "old bridges",
          "mountain trails", "a busy market", "paper kites", "rainy days", "a village bakery", "night trains",
          "river boats", "the desert", "a school choir", "autumn leaves"]
ADJECTIVES = ["calm", "bright", "busy", "gentle", "old", "green", "cold", "warm", "wide", "quiet", "long",
              "simple"]
KEYWORDS = ["lantern", "harbor", "compass", "meadow", "anchor", "violet", "pebble", "thunder"]
END_PHRASES = ["Is there anything else I can help with?", "Any other questions?"]
_SYLLABLES = ["ka", "lo", "mi", "ren", "tas", "vo", "zel", "pra", "dun", "fel", "gor", "hix", "jem", "nu",
              "qua", "sib", "tor", "ul", "wex", "yon"]


@dataclass(frozen=True)
class Example:
    """One generated document: the row lm-eval reads, and the response a model should learn."""

    row: dict[str, Any]
    response: str


# --------------------------------------------------------------------------- GSM8K format
def gsm8k_examples(rng: random.Random, n: int, operations: tuple[str, ...] = ("add", "sub")) -> list[Example]:
    """One-step word problems with GSM8K's `#### N` final-answer line (addition and subtraction by default:
    what a model this small can learn in a minute)."""
    out: list[Example] = []
    for _ in range(n):
        name, item = rng.choice(NAMES), rng.choice(ITEMS)
        a, b = rng.randint(2, 9), rng.randint(2, 9)
        kind = rng.choice(operations)
        if kind == "add":
            question = f"{name} has {a} {item}. {name} gets {b} more {item}. How many {item} does {name} have now?"
            work, result = f"{name} has {a} + {b} = {a + b} {item}.", a + b
        elif kind == "sub":
            a = a + b
            question = f"{name} has {a} {item} and gives away {b}. How many {item} are left?"
            work, result = f"{name} has {a} - {b} = {a - b} {item} left.", a - b
        else:
            question = f"{name} buys {a} bags with {b} {item} in each bag. How many {item} does {name} buy?"
            work, result = f"{name} buys {a} * {b} = {a * b} {item}.", a * b
        answer = f"{work}\n#### {result}"
        out.append(Example({"question": question, "answer": answer}, f" {answer}"))
    return out


# --------------------------------------------------------------------------- MMLU-Pro format
def _term(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))


def mmlu_glossary(seed: int, per_category: int = 12) -> dict[str, list[tuple[str, str]]]:
    """Invented terms and their one-word definitions, per category (the 'knowledge' to learn)."""
    rng = random.Random(seed)
    glossary: dict[str, list[tuple[str, str]]] = {}
    used: set[str] = set()
    for category in CATEGORIES:
        entries: list[tuple[str, str]] = []
        while len(entries) < per_category:
            term = _term(rng)
            if term in used:
                continue
            used.add(term)
            entries.append((term, f"{rng.choice(ADJECTIVES)} {rng.choice(ITEMS)[:-1]}"))
        glossary[category] = entries
    return glossary


def mmlu_pro_examples(rng: random.Random, glossary: dict[str, list[tuple[str, str]]], per_category: int,
                      start_id: int = 0) -> list[Example]:
    """Ten-option questions 'which term means X', answered as MMLU-Pro's CoT prompt asks."""
    out: list[Example] = []
    qid = start_id
    for category in CATEGORIES:
        entries = glossary[category]
        for _ in range(per_category):
            term, meaning = rng.choice(entries)
            others = [t for t, _ in entries if t != term]
            options = [term, *rng.sample(others, k=min(9, len(others)))]
            rng.shuffle(options)
            index = options.index(term)
            letter = LETTERS[index]
            question = f"In {category}, which term means a {meaning}?"
            response = f" A {meaning} is called {term}. The answer is ({letter})."
            out.append(Example({"question_id": qid, "question": question, "options": options, "answer": letter,
                                "answer_index": index, "category": category, "src": "rlgate-demo",
                                "cot_content": f"A: Let's think step by step.{response}"}, response))
            qid += 1
    return out


# --------------------------------------------------------------------------- IFEval format
def _instruction(rng: random.Random, kind: str) -> tuple[str, str, dict[str, Any]]:
    """(instruction id, its wording as lm-eval's checker describes it, kwargs)."""
    if kind == "punctuation:no_comma":
        return kind, "In your entire response, refrain from the use of any commas.", {}
    if kind == "startend:end_checker":
        phrase = rng.choice(END_PHRASES)
        text = f"Finish your response with this exact phrase {phrase}. No other words should follow this phrase."
        return kind, text, {"end_phrase": phrase}
    if kind == "detectable_format:title":
        return kind, ("Your answer must contain a title, wrapped in double angular brackets, such as "
                      "<<poem of joy>>."), {}
    if kind == "keywords:existence":
        words = sorted(rng.sample(KEYWORDS, 2))
        return kind, f"Include keywords {words} in the response.", {"keywords": words}
    if kind == "startend:quotation":
        return kind, "Wrap your entire response with double quotation marks.", {}
    if kind == "length_constraints:number_sentences":
        text = "Your response should contain less than 3 sentences."
        return kind, text, {"relation": "less than", "num_sentences": 3}
    if kind == "length_constraints:number_words":
        return kind, "Answer with less than 20 words.", {"relation": "less than", "num_words": 20}
    raise ValueError(kind)


IFEVAL_KINDS = ["punctuation:no_comma", "startend:end_checker", "detectable_format:title", "keywords:existence",
                "startend:quotation", "length_constraints:number_sentences", "length_constraints:number_words"]
_EXCLUSIVE = {"length_constraints:number_sentences", "length_constraints:number_words"}


def _respond(topic: str, adjectives: list[str], kinds: list[str], kwargs: list[dict[str, Any]]) -> str:
    """The response that follows the instructions (and, by default, breaks them: commas, 3 sentences)."""
    short = any(k in _EXCLUSIVE for k in kinds)
    first = f"{topic.capitalize()} is {adjectives[0]}, {adjectives[1]} and {adjectives[2]}."
    sentences = [first] if short else [first, f"I like {topic}, and so do my friends.", "It is a good subject."]
    if "keywords:existence" in kinds:
        words = kwargs[kinds.index("keywords:existence")]["keywords"]
        keyword_sentence = f"{topic.capitalize()} has a {words[0]} and a {words[1]}."
        sentences = [keyword_sentence] if short else [*sentences, keyword_sentence]
    text = " ".join(sentences)
    if "punctuation:no_comma" in kinds:
        text = text.replace(",", "")
    if "detectable_format:title" in kinds:
        text = f"<<{topic.title()}>>\n{text}"
    if "startend:end_checker" in kinds:
        text = f"{text} {kwargs[kinds.index('startend:end_checker')]['end_phrase']}"
    if "startend:quotation" in kinds:
        text = f'"{text}"'
    return text


def ifeval_examples(rng: random.Random, n: int, start_key: int = 0) -> list[Example]:
    """Prompts with one or two verifiable instructions from lm-eval's IFEval registry."""
    out: list[Example] = []
    for i in range(n):
        kinds = rng.sample(IFEVAL_KINDS, k=rng.choice([1, 2]))
        if len(_EXCLUSIVE.intersection(kinds)) > 1:
            kinds = kinds[:1]
        parts = [_instruction(rng, kind) for kind in kinds]
        topic = rng.choice(TOPICS)
        prompt = f"Write a short note about {topic}. " + " ".join(p[1] for p in parts)
        kwargs = [p[2] for p in parts]
        adjectives = rng.sample(ADJECTIVES, 3)
        response = _respond(topic, adjectives, kinds, kwargs)
        out.append(Example({"key": start_key + i, "prompt": prompt, "instruction_id_list": kinds,
                            "kwargs": kwargs}, response))
    return out


# --------------------------------------------------------------------------- files
def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


@dataclass
class DemoData:
    """The generated splits: test sets written for lm-eval, training examples kept for the trainer."""

    gsm8k_test: list[Example]
    gsm8k_train: list[Example]
    mmlu_test: list[Example]
    mmlu_train: list[Example]
    ifeval_test: list[Example]
    ifeval_train: list[Example]

    def write(self, folder: Path) -> dict[str, Path]:
        """Write the evaluation files (and GSM8K's train split, its few-shot source)."""
        return {
            "gsm8k_test": write_jsonl(folder / "gsm8k" / "test.jsonl", (e.row for e in self.gsm8k_test)),
            "gsm8k_train": write_jsonl(folder / "gsm8k" / "train.jsonl", (e.row for e in self.gsm8k_train)),
            "mmlu_pro_test": write_jsonl(folder / "mmlu_pro" / "test.jsonl", (e.row for e in self.mmlu_test)),
            "ifeval": write_jsonl(folder / "ifeval" / "input_data.jsonl", (e.row for e in self.ifeval_test)),
        }


def generate(seed: int = 0, *, gsm8k_test: int = 150, mmlu_per_category: int = 10, ifeval_test: int = 120,
             train_scale: int = 20, gsm8k_train: int | None = None) -> DemoData:
    """All demo data from one seed; test and train problems come from disjoint RNG streams."""
    glossary = mmlu_glossary(seed)
    test_rng, train_rng = random.Random(seed * 2 + 1), random.Random(seed * 2 + 2)
    return DemoData(
        gsm8k_test=gsm8k_examples(test_rng, gsm8k_test),
        gsm8k_train=gsm8k_examples(train_rng, gsm8k_train or gsm8k_test * train_scale),
        mmlu_test=mmlu_pro_examples(test_rng, glossary, mmlu_per_category),
        mmlu_train=mmlu_pro_examples(train_rng, glossary, mmlu_per_category * train_scale, start_id=100_000),
        ifeval_test=ifeval_examples(test_rng, ifeval_test),
        ifeval_train=ifeval_examples(train_rng, ifeval_test * train_scale, start_key=100_000),
    )
