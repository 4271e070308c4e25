"""Declared column types of the MySQL-family tools -> logical types, shared by every decoder that reads them.

Canal's `mysqlType` and OMS Canal's, CloudCanal's `dbValType` and Debezium's DDL `tableChanges`
write MySQL-style type text (`int(11)`, `bigint(20) unsigned`, `decimal(12,2)`, `datetime(6)`,
plus the Oracle / OceanBase names OMS and CloudCanal pass through); Canal's `sqlType` and
CloudCanal's `jdbcType` write java.sql.Types codes (spec 000 appendix), which the staging models
pass as `jdbc:<code>`.  A dialect whose tool writes a type differently overrides it in its own
module (Canal: BIT(n) values are numbers; OMS: BIT is base64 bytes, `decimal` lacks its arguments).
"""

from __future__ import annotations

import functools
import re

# java.sql.Types codes (spec 000 appendix) -> logical type; a code not listed is read as a string.
JDBC_LOGICAL_TYPES: dict[int, str] = {
    -7: "boolean",  # BIT (drivers report bit(1) columns as BIT)
    16: "boolean",  # BOOLEAN
    -6: "tinyint",
    5: "smallint",
    4: "int",
    -5: "bigint",
    2: "decimal",  # NUMERIC
    3: "decimal",  # DECIMAL
    7: "float",  # REAL: what MySQL's driver (and Canal) report for FLOAT
    6: "double",  # FLOAT is double precision in JDBC
    8: "double",
    91: "date",
    92: "time",
    # TIMESTAMP: MySQL DATETIME and TIMESTAMP share the code; reading the text as a zone-less
    # wall clock never shifts it, whereas guessing an instant could.
    93: "datetime",
    2014: "timestamp",  # TIMESTAMP_WITH_TIMEZONE
    -2: "binary",
    -3: "binary",
    -4: "binary",
    2004: "binary",  # BLOB
}

# MySQL integer type -> (signed logical type, unsigned logical type): unsigned needs the next width.
_INTEGER_TYPES = {
    "tinyint": ("tinyint", "smallint"),
    "smallint": ("smallint", "int"),
    "mediumint": ("int", "int"),
    "int": ("int", "bigint"),
    "integer": ("int", "bigint"),
    "bigint": ("bigint", "ubigint"),
    "int64": ("bigint", "ubigint"),  # OMS writes `int64` (spec 003 sample)
}
_NAMED_TYPES = {
    "bool": "boolean",
    "boolean": "boolean",
    "double": "double",
    "double precision": "double",
    "real": "double",  # MySQL REAL is DOUBLE unless REAL_AS_FLOAT is set
    "binary_float": "float",
    "binary_double": "double",
    "char": "string",
    "varchar": "string",
    "character": "string",
    "character varying": "string",
    "nchar": "string",
    "nvarchar": "string",
    "varchar2": "string",
    "nvarchar2": "string",
    "tinytext": "string",
    "text": "string",
    "mediumtext": "string",
    "longtext": "string",
    "enum": "string",
    "set": "string",
    "clob": "string",
    "json": "json",
    "binary": "binary",
    "varbinary": "binary",
    "tinyblob": "binary",
    "blob": "binary",
    "mediumblob": "binary",
    "longblob": "binary",
    "bytea": "binary",
    "raw": "binary",
    "date": "date",
    "time": "time",
    "datetime": "datetime",
    "timestamp": "timestamp",  # MySQL TIMESTAMP is an instant
    "timestamp without time zone": "datetime",
    "timestamp with local time zone": "timestamp",
    "timestamp with time zone": "zoned_datetime",
    "year": "int",
    "interval year to month": "interval_ym",
    "interval day to second": "interval_ds",
}
_DECIMAL_NAMES = ("decimal", "numeric", "dec", "fixed", "number")
_ARGS_RE = re.compile(r"\(([^)]*)\)")
_JDBC_RE = re.compile(r"^jdbc:(-?\d{1,9})$")


def split_type_text(type_text: str) -> tuple[str, list[str], bool]:
    """`bigint(20) unsigned zerofill` -> (`bigint`, ['20'], unsigned=True); names lower-cased."""
    text = type_text.strip().lower()
    args = [a.strip() for m in _ARGS_RE.finditer(text) for a in m.group(1).split(",") if a.strip()]
    words = _ARGS_RE.sub(" ", text).split()
    name = " ".join(w for w in words if w not in ("unsigned", "signed", "zerofill"))
    return name, args, "unsigned" in words


def mysql_logical_type(type_text: str | None) -> str | None:
    """Logical type of a MySQL-style type text; None when the type is not known.

    `tinyint(1)` is MySQL's BOOLEAN; `bigint(20) unsigned` needs ubigint; a bare `decimal` is
    MySQL's DECIMAL(10,0), a bare Oracle `number` has no fixed precision (`decimal`); FLOAT(p) with
    p > 24 is double precision; BIT(n > 1) depends on how the tool writes it, so it is not known here.
    """
    if not type_text:
        return None
    name, args, unsigned = split_type_text(type_text)
    if name in _INTEGER_TYPES:
        if name == "tinyint" and args == ["1"]:
            return "boolean"
        return _INTEGER_TYPES[name][1 if unsigned else 0]
    if name == "number" and not args:
        return "decimal"
    if name in _DECIMAL_NAMES:
        precision = int(args[0]) if args and args[0].isdigit() else 10
        scale = int(args[1]) if len(args) > 1 and args[1].isdigit() else 0
        return f"decimal({precision},{scale})"
    if name == "float":
        return "double" if len(args) == 1 and args[0].isdigit() and int(args[0]) > 24 else "float"
    if name == "bit":
        return "boolean" if args in ([], ["1"]) else None
    return _NAMED_TYPES.get(name)


def jdbc_logical_type(code: int) -> str:
    return JDBC_LOGICAL_TYPES.get(code, "string")


def jdbc_code(source_type: str | None) -> int | None:
    """The java.sql.Types code of a `jdbc:<code>` source type, else None."""
    m = _JDBC_RE.match(source_type.strip()) if source_type else None
    return int(m.group(1)) if m else None


@functools.lru_cache(maxsize=4096)  # a feed declares few distinct types, each again in every image
def source_logical_type(source_type: str | None) -> str:
    """Logical type of a declared source type (type text or `jdbc:<code>`); `string` if unknown."""
    code = jdbc_code(source_type)
    if code is not None:
        return jdbc_logical_type(code)
    return mysql_logical_type(source_type) or "string"
