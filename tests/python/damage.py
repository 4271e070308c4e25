"""Seeded damage to messages, for the robustness tests of the message decoders
(test_decoder_robustness.py: the Python ones; test_jvm_robustness.py: the JVM message functions)."""

from __future__ import annotations

import copy
import random
from typing import Any

OTHER_VALUES = (None, True, 1.5, -7, 10**40, "x", "", [], {}, ["c", {"b": None}], "2020-13-45 99:99:99")


def damaged(doc: Any, rng: random.Random) -> Any:
    """`doc` with one member somewhere in it replaced by a value of another type, or removed."""
    node, path = doc, []
    while isinstance(node, dict | list) and node and (not path or rng.random() < 0.8):
        step = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append(step)
        node = node[step]
    if not path:
        return copy.deepcopy(rng.choice(OTHER_VALUES))
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    if rng.random() < 0.8:
        parent[path[-1]] = copy.deepcopy(rng.choice(OTHER_VALUES))
    else:
        del parent[path[-1]]
    return doc
