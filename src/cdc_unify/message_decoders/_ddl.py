"""What kind of DDL a statement is: the Python twin of the SQL macro `cdc_ddl_op` (macros/staging.sql).

The SQL staging models classify DDL text with that macro, the Python ones (debezium_json, dts_avro)
with `statement_op`; tests/python/test_ddl_op.py runs both on one corpus
(tests/fixtures/ddl_statements.json) and requires the same op for every statement, so a rule
changed in one place and not the other fails the suite.
"""

from __future__ import annotations

import re

# The SQL side runs on Java regexes: `\s` there is ASCII whitespace only (Python's is Unicode),
# while `\b` counts Unicode letters as word characters (as Python's does); and it lowercases the
# head with Java's toLowerCase, which Python's str.lower matches, instead of matching case-blind.
_SPACE = r"[ \t\n\x0b\f\r]"
_NOT_SPACE = r"[^ \t\n\x0b\f\r]"
# Blanks and comments before the first keyword: /* ... */, -- to end of line, MySQL's # to end of line.
_NOISE_RE = re.compile(rf"^({_SPACE}|/\*.*?\*/|--[^\n]*\n|#[^\n]*\n)*", re.DOTALL)
# First match wins, on the lowercased statement after the leading noise.
RULES = (
    (r"create\s+(unique\s+|fulltext\s+|spatial\s+)?index\b", "CREATE_INDEX"),
    (r"drop\s+index\b", "DROP_INDEX"),
    (r"(rename\s+table\b|alter\s+table\s+\S+\s+rename\s+(to|as)\b)", "RENAME"),
    (r"create\b", "CREATE"),
    (r"alter\b", "ALTER"),
    (r"drop\b", "DROP"),
    (r"truncate\b", "TRUNCATE"),
)
_RULE_RES = tuple(
    (re.compile(pattern.replace(r"\s", _SPACE).replace(r"\S", _NOT_SPACE), re.DOTALL), op) for pattern, op in RULES
)


def statement_head(statement: str) -> str:
    """The statement from its first keyword on."""
    return _NOISE_RE.sub("", statement, count=1)


def statement_op(statement: str) -> str:
    """The staged DDL op of a statement from its leading keywords; anything else is QUERY."""
    head = statement_head(statement).lower()
    return next((op for rule, op in _RULE_RES if rule.match(head)), "QUERY")
