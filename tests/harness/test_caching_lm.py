"""The cache-first LM: a stored log-likelihood that is not what lm-eval returned is a located error."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("lm_eval")

from lm_eval.api.instance import Instance
from lm_eval.api.model import LM

from rlgate._core.errors import InputError
from rlgate.harness.lmeval.caching_lm import CachingLM, request_hash
from rlgate.store.cache import GenerationCache


class Backend(LM):
    """Answers every log-likelihood request with (-1.5, True); counts the requests it was sent."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        self.sent += len(requests)
        return ["4"] * len(requests)

    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        self.sent += len(requests)
        return [(-1.5, True)] * len(requests)

    def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:
        self.sent += len(requests)
        return [-7.0] * len(requests)


def _requests(reqtype: str) -> list[Instance]:
    args: Any = {"loglikelihood": (("Q: 2+2?", " 4"), ("Q: 2+2?", " 5")), "loglikelihood_rolling": (("some text",),),
                 "generate_until": (("Q: 2+2?", {"until": []}),)}[reqtype]
    return [Instance(reqtype, {}, a, i, ("mmlu_toy", 0, 1)) for i, a in enumerate(args)]


def _lm(cache: GenerationCache, backend: Backend) -> CachingLM:
    return CachingLM(lambda: backend, cache=cache, fingerprint="f", protocol_hash="p", task_hashes={"mmlu_toy": "t"})


@pytest.mark.parametrize(("reqtype", "stored"), [
    ("loglikelihood", "not json"), ("loglikelihood", '{"logprob": -1}'), ("loglikelihood", "[-1.5]"),
    ("loglikelihood", '["x", true]'), ("loglikelihood", "[-1.5, 2]"), ("loglikelihood_rolling", "[-1.5, true]"),
    ("loglikelihood_rolling", '"-7"'), ("generate_until", b"\x004")])
def test_corrupt_loglikelihood_entry_is_a_located_error(tmp_path: Path, reqtype: str, stored: str | bytes) -> None:
    path = tmp_path / "cache.sqlite"
    backend = Backend()
    with GenerationCache(path) as cache:
        first = getattr(_lm(cache, backend), reqtype)(_requests(reqtype))
    assert backend.sent == len(first)
    edited = request_hash(reqtype, _requests(reqtype)[0].args)
    with sqlite3.connect(path) as conn:
        assert conn.execute("UPDATE generations SET response=? WHERE request_hash=?", (stored, edited)).rowcount == 1
    with GenerationCache(path) as cache, pytest.raises(InputError) as caught:
        getattr(_lm(cache, backend), reqtype)(_requests(reqtype))
    error = caught.value
    assert error.file == path and edited in error.message and "mmlu_toy" in error.message
    assert error.fix and "DELETE FROM generations" in error.fix and "--cache" in error.fix
    assert backend.sent == len(first)  # nothing was generated again before the error
    with sqlite3.connect(path) as conn:  # the fix as written: that one entry goes, and is computed again
        assert conn.execute(error.fix.split('"')[1]).rowcount == 1
    with GenerationCache(path) as cache:
        assert getattr(_lm(cache, backend), reqtype)(_requests(reqtype)) == first
    assert backend.sent == len(first) + 1


def test_cached_loglikelihoods_round_trip(tmp_path: Path) -> None:
    backend = Backend()
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        first = _lm(cache, backend).loglikelihood(_requests("loglikelihood"))
        again = _lm(cache, backend).loglikelihood(_requests("loglikelihood"))
        rolling = _lm(cache, backend).loglikelihood_rolling(_requests("loglikelihood_rolling"))
        rolling_again = _lm(cache, backend).loglikelihood_rolling(_requests("loglikelihood_rolling"))
    assert first == again == [(-1.5, True)] * 2 and rolling == rolling_again == [-7.0]
    assert backend.sent == 3


def test_a_response_with_a_lone_surrogate_reads_the_same_fresh_and_cached(tmp_path: Path) -> None:
    """A server's `"\\ud800"` escape decodes to a string no UTF-8 store takes: the cache keeps it as visible text,
    so the fresh run must score that same text, or a resumed run would score another response."""
    backend = Backend()
    backend.generate_until = lambda requests, disable_tqdm=False: ["4 \ud800"] * len(requests)  # type: ignore[method-assign]
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        fresh = _lm(cache, backend).generate_until(_requests("generate_until"))
        cached = _lm(cache, Backend()).generate_until(_requests("generate_until"))
    assert fresh == cached == ["4 \\ud800"]
