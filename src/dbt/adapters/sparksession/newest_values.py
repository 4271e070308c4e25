"""The newest value of a column per group of a table's rows (a feed's newest landing, a table's
newest built_at), kept with the table so that an incremental run learns its watermarks without
reading its own history.

An incremental model reads, when it compiles, the newest `landed_at` per feed (or `built_at`) of
the rows it holds, to filter its inputs by constants (macros/summaries.sql `cdc_held_watermarks`,
macros/intermediate.sql `cdc_newest_built_at`). As a query that is a scan of two columns of every
stored row: a cost that grows with the history (1.4 s for `int_change_events` at a million
messages). Here the answer is stored in a table property (`cdc_unify.newest.<group>.<value>`) with
a token of the files it was computed from (every data file's path under the table's folder and its
length). A write that only adds files (append, or an overwrite that replaces no partition) updates
the property from its pending rows before it moves a file (pending_writes.move_pending), token
included, as the table's files will be once the move ends; one that replaces a partition (whose
rows may have held a newest value) drops it; a full build computes the ones its model asked for
while it compiled (adapter.keep_newest) from the table it wrote. A stored answer is used only while
the token matches the table's files: a table changed by anything else (a killed move not finished
yet, a hand-made `insert`) is queried again, and the answer stored anew. What a read costs: the
table's properties, one recursive listing of its folder, no data file opened.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

PREFIX = "cdc_unify.newest"


@dataclass(frozen=True)
class Newest:
    """max(`value`) of a table's rows per `group` (rows with a null group or value are left out), or
    over all rows without `group`."""

    group: str | None
    value: str

    @property
    def key(self) -> str:
        return f"{PREFIX}.{self.group or ''}.{self.value}"

    @classmethod
    def of_key(cls, key: str) -> Newest:
        group, value = key[len(PREFIX) + 1 :].split(".", 1)
        return cls(group or None, value)

    def query(self, table: str) -> str:
        """`group` text (null without a group) and max(`value`) in microseconds, one row per group."""
        value = f"`{self.value}`"
        if self.group is None:
            return (
                f"select cast(null as string), unix_micros(max({value})) from {table} having max({value}) is not null"
            )
        group = f"`{self.group}`"
        return (
            f"select cast({group} as string), unix_micros(max({value})) from {table}"
            f" where {group} is not null and {value} is not null group by {group}"
        )


def compute(spark: SparkSession, table: str, newest: Newest) -> dict[str | None, int]:
    return {row[0]: int(row[1]) for row in spark.sql(newest.query(table)).collect()}


def merged(a: dict[str | None, int], b: dict[str | None, int]) -> dict[str | None, int]:
    return {group: max(a.get(group, value), b.get(group, value)) for group, value in {**a, **b}.items()}


def encode(token: str, values: dict[str | None, int]) -> str:
    return json.dumps({"files": token, "newest": sorted(values.items(), key=lambda item: str(item[0]))})


def decode(text: str) -> tuple[str, dict[str | None, int]]:
    stored = json.loads(text)
    return stored["files"], {group: int(value) for group, value in stored["newest"]}


def sql_string(text: str) -> str:
    """`text` as a Spark SQL string literal (backslash escapes)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def stored(spark: SparkSession, table: str) -> dict[str, str]:
    """The table's properties of this module (key -> text)."""
    rows = spark.sql(f"show tblproperties {table}").collect()
    return {row.key: row.value for row in rows if row.key.startswith(PREFIX + ".")}


def store(spark: SparkSession, table: str, texts: dict[str, str]) -> None:
    """Sets the properties `texts` in one metastore change (all or none, for a killed process)."""
    if texts:
        pairs = ", ".join(f"{sql_string(key)} = {sql_string(text)}" for key, text in texts.items())
        spark.sql(f"alter table {table} set tblproperties ({pairs})")


def forget(spark: SparkSession, table: str, keys: list[str]) -> None:
    if keys:
        spark.sql(f"alter table {table} unset tblproperties if exists ({', '.join(sql_string(k) for k in keys)})")


def file_entries(files: Any, root: Any) -> set[str]:
    """`relative path:length` of every visible data file under folder `root` (partition folders
    included; hidden entries such as _SUCCESS, .crc files and _temporary folders left out)."""
    fs = files.fs(root)
    if not fs.exists(root):
        return set()
    prefix = len(fs.makeQualified(root).toUri().getPath().rstrip("/")) + 1
    entries = set()
    listing = fs.listFiles(root, True)
    while listing.hasNext():
        status = listing.next()
        relative = status.getPath().toUri().getPath()[prefix:]
        if not any(part.startswith(("_", ".")) for part in relative.split("/")):
            entries.add(f"{relative}:{status.getLen()}")
    return entries


def token(entries: set[str]) -> str:
    return hashlib.md5("\n".join(sorted(entries)).encode()).hexdigest()


def newest_values(spark: SparkSession, files: Any, table: str, root: Any, newest: Newest) -> dict[str | None, int]:
    """`newest` of table `table` (folder `root`): as stored while the table's files are those it was
    computed from, else queried and stored."""
    text = stored(spark, table).get(newest.key)
    current = token(file_entries(files, root))
    if text is not None:
        stored_token, values = decode(text)
        if stored_token == current:
            return values
    store_computed(spark, files, table, root, [newest])
    return decode(stored(spark, table)[newest.key])[1]


def store_computed(spark: SparkSession, files: Any, table: str, root: Any, kept: list[Newest]) -> None:
    """Every value of `kept` computed from table `table` (folder `root`) and stored with it."""
    current = token(file_entries(files, root))
    store(spark, table, {newest.key: encode(current, compute(spark, table, newest)) for newest in kept})


def carry(
    spark: SparkSession, files: Any, pending: str, pending_root: Any, target: str, target_root: Any, replaces: bool
) -> None:
    """Before the files of table `pending` move into `target` (pending_writes.move_pending): every
    newest value stored with `target` updated with the pending rows' and the files the target will
    have, or dropped when the write replaces a partition or the stored token no longer matches."""
    texts = stored(spark, target)
    if not texts:
        return
    target_entries = file_entries(files, target_root)
    keep = {}
    if not replaces:
        current = token(target_entries)
        after = token(target_entries | file_entries(files, pending_root))
        for key, text in texts.items():
            stored_token, values = decode(text)
            if stored_token == current:
                keep[key] = encode(after, merged(values, compute(spark, pending, Newest.of_key(key))))
    store(spark, target, keep)
    forget(spark, target, [key for key in texts if key not in keep])
