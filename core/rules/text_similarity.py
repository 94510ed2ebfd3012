"""How alike two bot messages are, by the methods Sensei's `repeated_answers` offers.

'exact' (1.0 or 0.0), 'jaccard' (shared words over all words, lower-cased), 'sequence-matcher'
(difflib's ratio) and 'tf-idf': the cosine of the two texts' TF-IDF vectors computed the way
scikit-learn's TfidfVectorizer does by default (lower-cased words of two or more word
characters, raw counts, smoothed idf ln((1+n)/(1+df)) + 1 over the two texts, l2-normalised),
written out here so rules need no scikit-learn. Two texts without a single such word raise
ValueError, as scikit-learn does ("empty vocabulary"); a comparison an input cannot take
(a number, a missing message) raises too, and the rule is then not applicable, as in Sensei.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from difflib import SequenceMatcher
from typing import Any

Comparator = Callable[[Any, Any], float]

_WORD = re.compile(r"(?u)\b\w\w+\b")


def exact_similarity(first: Any, second: Any) -> float:
    return 1.0 if first == second else 0.0


def jaccard_similarity(first: Any, second: Any) -> float:
    words1, words2 = set(first.lower().split()), set(second.lower().split())
    return len(words1 & words2) / len(words1 | words2)


def sequence_similarity(first: Any, second: Any) -> float:
    return SequenceMatcher(None, first, second).ratio()


def tf_idf_similarity(first: Any, second: Any) -> float:
    words = [_WORD.findall(_text(first).lower()), _WORD.findall(_text(second).lower())]
    # Terms in order of first appearance over both texts: the order scikit-learn's sparse rows
    # keep them in, and so the order its sums add in (the last bit of a tie at a threshold).
    vocabulary = list(dict.fromkeys(words[0] + words[1]))
    if not vocabulary:
        raise ValueError("empty vocabulary; perhaps the documents only contain stop words")
    counts = [Counter(w) for w in words]
    idf = {word: math.log(3 / (1 + sum(1 for c in counts if word in c))) + 1.0 for word in vocabulary}
    rows = [{word: c[word] * idf[word] for word in vocabulary if word in c} for c in counts]
    rows = [_normalised(_normalised(row)) for row in rows]  # the vectorizer's l2 norm, then the cosine's
    total = 0.0
    for word, value in rows[0].items():
        if word in rows[1]:
            total += value * rows[1][word]
    return total


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise AttributeError(f"'{type(value).__name__}' object has no attribute 'lower'")
    return value


def _normalised(row: dict[str, float]) -> dict[str, float]:
    squares = 0.0
    for value in row.values():
        squares += value * value
    norm = math.sqrt(squares)
    return {word: value / norm for word, value in row.items()} if norm else row


def comparator(method: Any) -> Comparator:
    """The comparison a `method` names; anything unknown is 'exact', as in Sensei."""
    return {
        "tf-idf": tf_idf_similarity,
        "jaccard": jaccard_similarity,
        "sequence-matcher": sequence_similarity,
    }.get(method.lower(), exact_similarity)
