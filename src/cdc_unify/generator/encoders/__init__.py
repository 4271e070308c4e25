"""Dialect encoders: the workload written as each CDC tool would send it.

One module per dialect, `cdc_unify.generator.encoders.<dialect>`, exposing `ENCODER`, an
instance of `base.Encoder`.  `encoder_for(dialect)` finds it.
"""

from __future__ import annotations

import importlib

from cdc_unify.generator.encoders.base import Encoder


def encoder_for(dialect: str) -> Encoder:
    return importlib.import_module(f"cdc_unify.generator.encoders.{dialect}").ENCODER
