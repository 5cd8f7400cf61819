"""Hashed token n-grams, vectorised with numpy so millions of training lines hash in seconds.

Normalisation (as in the GPT-3 / lm-eval decontamination work, simplified): lower-case, and a token
is a maximal run of letters and digits; everything else separates tokens. Text that is not pure
ASCII is first put in NFKC form (full-width letters, ligatures, no-break spaces become their plain
forms), invisible format characters (zero-width space, soft hyphen, BOM) are dropped and other
non-ASCII punctuation and spaces become separators, so a copy of a question with typographic
spaces or quotes still matches; pure-ASCII text (most training data) skips all of that.

A token's hash combines its length and its first 24 bytes read as three little-endian words
(plus its last 8 bytes when longer), so no per-byte arithmetic is needed; an n-gram hash combines
n token hashes and is mixed again (splitmix64). N-grams never span two texts. All work is on whole
chunks of texts at once; nothing is kept between chunks but small constant tables.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    U64 = npt.NDArray[np.uint64]
    I64 = npt.NDArray[np.int64]

_NGRAM_BASE = 0x9E3779B97F4A7C15
_WORD_MULT = (0xD6E8FEB86659FD93, 0xA0761D6478BD642F, 0xE7037ED1A0B428DB, 0x8EBC6AF09C88C6E3, 0x589965CC75374CC3)
_SEPARATOR = "\x00"
_PAD = 32


#: Invisible format characters (Unicode Cf: soft hyphen, zero-width spaces and joiners, bidi marks, BOM).
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")
#: Non-ASCII characters that are neither letters nor digits (punctuation, spaces, symbols): separators.
_NON_ASCII_SEPARATOR = re.compile(r"[^\w\x00-\x7f]")


def normalise(text: str) -> str:
    """The text as tokens are cut from it: NFKC, invisible characters dropped, non-ASCII separators as spaces,
    lower-cased (ASCII text as it is; its bytes are lower-cased later)."""
    if text.isascii():
        return text
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    return _NON_ASCII_SEPARATOR.sub(" ", text).lower()


def _classes() -> bytes:
    """bytes.translate table: 1 for token bytes, 2 for the text separator, 0 for everything else."""
    table = bytearray(256)
    for lo, hi in ((ord("0"), ord("9")), (ord("a"), ord("z")), (ord("A"), ord("Z"))):
        table[lo: hi + 1] = b"\x01" * (hi - lo + 1)
    table[0x80:] = b"\x01" * 0x80
    table[0] = 2
    return bytes(table)


_CLASSES = _classes()


def mix64(x: U64) -> U64:
    """splitmix64's finaliser, in place: spreads every input bit over the output (top bits too)."""
    import numpy as np

    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


class NgramHasher:
    """Hash the token n-grams of many texts at once."""

    def __init__(self, n: int = 13) -> None:
        import numpy as np

        if n < 1:
            raise ValueError("n-gram length must be >= 1")
        self.n = n
        self._masks = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [2**64 - 1], dtype=np.uint64)
        self._mult = [np.uint64(m) for m in _WORD_MULT]

    def _spans(self, raw: bytes) -> tuple[I64, I64, I64]:
        """Token start and end offsets, and the offsets of text separators, in normalised bytes."""
        import numpy as np

        classes = np.frombuffer(raw.translate(_CLASSES), dtype=np.uint8)
        is_token = classes == 1
        change = np.flatnonzero(is_token[1:] != is_token[:-1]) + 1
        if len(is_token) and is_token[0]:
            change = np.concatenate(([0], change))
        if len(change) % 2:
            change = np.concatenate((change, [len(is_token)]))
        return change[0::2], change[1::2], np.flatnonzero(classes == 2)

    def token_hashes(self, raw: bytes, starts: I64, ends: I64) -> U64:
        """One 64-bit hash per token from its length and bytes (lower-cased `raw`)."""
        import numpy as np

        if len(starts) == 0:
            return np.zeros(0, dtype=np.uint64)
        padded = raw + bytes(_PAD)
        words = np.ndarray(shape=(len(raw) + 24,), dtype="<u8", buffer=padded, offset=0, strides=(1,))
        lengths = ends - starts
        mult = self._mult
        with np.errstate(over="ignore"):
            hashes = words[starts] & self._masks[np.minimum(lengths, 8)]
            hashes *= mult[1]
            hashes += lengths.astype(np.uint64) * mult[0]
            # Most tokens are short: only the longer ones need their further words.
            for k in (1, 2):
                longer = np.flatnonzero(lengths > 8 * k)
                if len(longer) == 0:
                    break
                rest = np.minimum(lengths[longer] - 8 * k, 8)
                hashes[longer] += (words[starts[longer] + 8 * k] & self._masks[rest]) * mult[k + 1]
            longest = np.flatnonzero(lengths > 24)
            if len(longest):
                hashes[longest] += words[ends[longest] - 8] * mult[4]
        return mix64(hashes)

    def hash_texts(self, texts: list[str]) -> tuple[U64, I64]:
        """(n-gram hashes, index of the text each came from), in text order."""
        import numpy as np

        joined = _SEPARATOR.join(texts)
        if joined.count(_SEPARATOR) != max(len(texts) - 1, 0):  # a text holds the separator itself
            joined = _SEPARATOR.join(t.replace(_SEPARATOR, " ") for t in texts)
        raw = normalise(joined).encode("utf-8", "replace").lower()
        starts, ends, separators = self._spans(raw)
        tokens = self.token_hashes(raw, starts, ends)
        n = self.n
        if len(tokens) < n:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
        doc_of_token = np.searchsorted(separators, starts)
        windows = len(tokens) - n + 1
        with np.errstate(over="ignore"):
            grams = tokens[:windows].copy()
            for k in range(1, n):
                grams *= np.uint64(_NGRAM_BASE)
                grams += tokens[k: k + windows]
        valid = doc_of_token[:windows] == doc_of_token[n - 1:]
        return mix64(grams[valid]), doc_of_token[:windows][valid]

    def tokens(self, text: str) -> list[str]:
        """The normalised tokens of one text (for showing which n-gram matched)."""
        raw = normalise(text).encode("utf-8", "replace").lower()
        starts, ends, _ = self._spans(raw)
        return [raw[s:e].decode("utf-8", "replace") for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
